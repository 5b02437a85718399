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
    const float bound = 1.0f / std::sqrt(static_cast<float>(ps.fan_in));
    // The values are drawn twice, in order (the exponent needs their largest magnitude first),
    // rather than kept: a device has no room for a float copy of fc1.
    const auto draw = [&](auto&& each) {
      Rng rng(seed, 0x100000 + w.tensor);
      for (int64_t i = 0; i < w.value.numel(); ++i) each(i, rng.uniform(-bound, bound));
    };
    float amax = 0;
    draw([&](int64_t, float v) { amax = std::fmax(amax, std::fabs(v)); });
    w.value.exp = quantize_exponent(amax);
    // Mantissas never leave ±127, so a weight cannot grow past its initial largest value. After
    // batch norm that bounds the logits (its output has unit spread), and the loss stays high:
    // the classifier starts with its mantissas at 1/2^kClassifierHeadroomBits of the range.
    // Layers before a batch norm need no room (their scale does not matter).
    if (&w == &weights_.back() && !states_.empty()) {
      w.value.exp += kClassifierHeadroomBits;
      draw([&](int64_t i, float v) {
        w.value.data[i] = static_cast<int8_t>(std::lround(std::ldexp(v, -w.value.exp)));
      });
    } else {
      draw([&](int64_t i, float v) { w.value.data[i] = quantize_mantissa(v, w.value.exp); });
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
