// The float boundary of the integer network: initial weights and the input quantizer. Kept apart
// from qnetwork.cpp, which must compile without floating point.
#include <cmath>
#include <vector>

#include "zotrain/core/rng.h"
#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain {

void QNetwork::init_weights(uint64_t seed) {
  for (QWeight& w : weights_) {
    // The f32 network's stream and bound for this tensor (Network::allocate).
    const ParamSpec ps = desc_.layer(w.layer).param_specs()[0];
    Rng rng(seed, 0x100000 + w.tensor);
    const float bound = 1.0f / std::sqrt(static_cast<float>(ps.fan_in));
    std::vector<float> values(static_cast<size_t>(w.value.numel()));
    for (float& v : values) v = rng.uniform(-bound, bound);
    w.value.exp = quantize(values.data(), w.value.numel(), w.value.data);
    // Mantissas never leave ±127, so a weight cannot grow past its initial largest value. After
    // batch norm that bounds the logits (its output has unit spread), and the loss stays high:
    // the classifier starts with its mantissas at 1/2^kClassifierHeadroomBits of the range.
    // Layers before a batch norm need no room (their scale does not matter).
    if (&w == &weights_.back() && !states_.empty()) {
      w.value.exp += kClassifierHeadroomBits;
      for (size_t i = 0; i < values.size(); ++i)
        w.value.data[i] = static_cast<int8_t>(std::lround(std::ldexp(values[i], -w.value.exp)));
    }
    layers_[w.layer]->bind(w.value);
  }
}

InputQuantizer input_quantizer(float mean, float std) {
  std::vector<float> values(256);
  for (int p = 0; p < 256; ++p) values[p] = (p / 255.0f - mean) / std;
  InputQuantizer q;
  // The pixel 0 or 255 has the largest magnitude, so quantizing the table fixes the exponent.
  q.exp = quantize(values.data(), 256, q.lut.data());
  return q;
}

}  // namespace zotrain
