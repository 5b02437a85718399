#include "kernels/word_pairs.h"

#include <gtest/gtest.h>

#include <vector>

#include "zotrain/core/rng.h"

namespace zotrain {
namespace {

// Random words and the boundaries of each rule (top bit, U = 0 and U = 1 - 2^-24, the mask's
// threshold and its neighbours), for every length up to a few vectors (the loops' remainders).
std::vector<uint32_t> test_words() {
  std::vector<uint32_t> w;
  Rng rng(9, 2);
  for (int i = 0; i < 4 * 100; ++i) w.push_back(rng.next_u32());
  const uint32_t edges[] = {0u,          0xFFu,       0x100u,      0x7FFFFFFFu,
                            0x80000000u, 0xFFFFFFFFu, 0x7FFFFF00u, 0x80000100u};
  for (uint32_t e : edges) w.insert(w.end(), {e, ~e, e, ~e});
  return w;
}

// The rules as written before they were vectorized, one element at a time.
float sign_of(const uint32_t* words, int64_t k) {
  return (words[k / 32] >> (k % 32)) & 1u ? 1.0f : -1.0f;
}
float uniform_of(uint32_t w) {
  return 1.7320508075688772f * (2.0f * u32_to_unit(w) - 1.0f);
}

TEST(KernelWordPairs, EqualTheElementwiseRulesBitForBit) {
  const std::vector<uint32_t> w = test_words();
  const int64_t all = static_cast<int64_t>(w.size() / 4);
  for (int64_t pairs : {int64_t{1}, int64_t{3}, int64_t{8}, int64_t{13}, all}) {
    SCOPED_TRACE(pairs);
    std::vector<float> u(2 * pairs);
    kernels::uniform_pairs(pairs, w.data(), u.data());
    for (int64_t k = 0; k < 2 * pairs; ++k)
      EXPECT_EQ(u[k], uniform_of(w[4 * (k / 2) + k % 2])) << k;
    for (float p : {0.0f, 0.25f, 0.5f, 1.0f}) {
      std::vector<float> m = u;
      kernels::zero_pairs(pairs, w.data(), p, m.data());
      for (int64_t k = 0; k < 2 * pairs; ++k) {
        const bool zeroed = u32_to_unit(w[4 * (k / 2) + 2 + k % 2]) < p;
        EXPECT_EQ(m[k], zeroed ? 0.0f : u[k]) << k << " p " << p;
      }
    }
  }
}

// Every length up to a few words and beyond: the whole-word loop and the remainder.
TEST(KernelWordPairs, SignBitsEqualTheBitRuleBitForBit) {
  const std::vector<uint32_t> w = test_words();
  for (int64_t n : {int64_t{0}, int64_t{1}, int64_t{31}, int64_t{32}, int64_t{33}, int64_t{100},
                    int64_t{128}, static_cast<int64_t>(32 * w.size())}) {
    std::vector<float> s(n);
    kernels::sign_bits(n, w.data(), s.data());
    for (int64_t k = 0; k < n; ++k) ASSERT_EQ(s[k], sign_of(w.data(), k)) << k << " of " << n;
  }
}

}  // namespace
}  // namespace zotrain
