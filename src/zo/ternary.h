// Integer perturbations for int8 zeroth-order training: z in {-1, 0, +1}, the sparse Rademacher
// perturbation of perturbation.h (the same z for the same seed, tensor and element), drawn and
// applied with integer arithmetic only.
#pragma once

#include <cstdint>

namespace zotrain::zo {

// The mask threshold for a zero probability: element zeroed when (mask word >> 8) < threshold,
// the integer form of perturbation.h's test. Computed once per epoch, outside the training step.
uint32_t zero_threshold(double p_zero);
// The threshold of a move that touches the fraction `fraction` in (0, 1] of the elements z
// perturbs under `zero_threshold`: the elements whose mask word passes this higher threshold,
// with the same z there, a uniformly random subset of the perturbed ones (the mask words are
// uniform and independent of the signs). fraction 1 gives zero_threshold itself.
uint32_t move_threshold(uint32_t zero_threshold, double fraction);

// z_i of tensor `tensor` under `seed`.
int ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, uint64_t i);

// dst[i] = clip(src[i] + eps · z_i) to ±127 for i in [begin, end) (dst may equal src).
void add_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int eps, const int8_t* src,
                 int8_t* dst, int64_t begin, int64_t end);

// acc[i - begin] += sign · z_i for i in [begin, end): a range of the tensor, into accumulators
// for that range.
void accumulate_ternary(uint64_t seed, uint32_t tensor, uint32_t threshold, int sign, int32_t* acc,
                        int64_t begin, int64_t end);

}  // namespace zotrain::zo
