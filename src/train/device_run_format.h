// Internal: the files between the host and the bare-metal device program (device/m55). The host
// packs the integer training of a config (Trainer::write_device_run): a header with the model,
// the split and the step's integer settings, then every step's batch as the int8 engine fills
// it; the device trains on it step by step and writes its weights back, which the host compares
// with a checkpoint of the same run (compare_device_weights). Little-endian, packed by hand.
#pragma once

#include <cstdint>

#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain::device {

inline constexpr char kRunMagic[8] = {'Z', 'T', 'D', 'E', 'V', 'R', 'U', 'N'};
inline constexpr char kWeightsMagic[8] = {'Z', 'T', 'D', 'E', 'V', 'W', 'T', 'S'};
inline constexpr uint32_t kVersion = 2;  // 2: fixed_norm

struct RunHeader {
  char magic[8];
  uint32_t version;
  char model[52];   // the model's name, NUL-terminated
  int32_t item[4];  // one example's shape, unused dimensions 0
  int32_t classes;
  int32_t batch;
  int32_t steps;      // steps that follow, each: int32 rows, uint8 labels[batch],
                      // int8 inputs[batch * item elements] (the first `rows` rows filled)
  int32_t head;       // the first layer trained by backprop (QNetwork::allocate's head_start)
  int32_t input_exp;  // the inputs' exponent
  int32_t q, eps, bp_bits, zo_bits, loss_frac_bits, cyclic;
  uint32_t zero_threshold;
  int32_t fixed_norm;  // batch norm divides by the deviation (QNetwork::set_fixed_norm)
  int32_t reserved;    // 0; keeps seed 8-byte aligned
  uint64_t seed;
};
static_assert(sizeof(RunHeader) == 144, "RunHeader is written as is");

// The weights file: kWeightsMagic, uint32 kVersion, uint32 weights, then per weight int32 layer,
// int32 exponent, int64 elements, int8 mantissas[elements]; uint32 states, then per state int32
// layer, int64 elements, int32 values[elements]. Written by put(bytes, count) calls.
template <typename Put>
void put_weights(const QNetwork& net, Put&& put) {
  const uint32_t weights = static_cast<uint32_t>(net.weights().size());
  const uint32_t states = static_cast<uint32_t>(net.states().size());
  put(kWeightsMagic, 8), put(&kVersion, 4), put(&weights, 4);
  for (const QWeight& w : net.weights()) {
    const int32_t layer = w.layer, exp = w.value.exp;
    const int64_t n = w.value.numel();
    put(&layer, 4), put(&exp, 4), put(&n, 8), put(w.value.data, static_cast<size_t>(n));
  }
  put(&states, 4);
  for (const QState& st : net.states()) {
    const int32_t layer = st.layer;
    put(&layer, 4), put(&st.elems, 8), put(st.data, static_cast<size_t>(st.elems) * 4);
  }
}

}  // namespace zotrain::device
