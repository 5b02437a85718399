#include "zotrain/train/q_scheduler.h"

#include <gtest/gtest.h>

#include <vector>

namespace zotrain {
namespace {

std::vector<int> trajectory(const QSchedulerConfig& c, const std::vector<double>& accs) {
  QSchedulerState s;
  std::vector<int> qs;
  for (double a : accs) qs.push_back(next_q(c, s, a));
  return qs;
}

TEST(QScheduler, GrowsByAlphaAfterPatienceEpochsWithoutImprovementUpToQMax) {
  QSchedulerConfig c;
  c.q0 = 8, c.alpha = 2, c.patience = 2, c.q_max = 32;
  // Improves, stalls twice (q 16), improves, stalls twice (32), stalls twice (stays at q_max).
  EXPECT_EQ(trajectory(c, {0.5, 0.6, 0.6, 0.55, 0.7, 0.7, 0.7, 0.7, 0.7}),
            (std::vector<int>{8, 8, 8, 16, 16, 16, 32, 32, 32}));
}

TEST(QScheduler, TauAndSmoothingDecideWhatCountsAsImprovement) {
  QSchedulerConfig c;
  c.q0 = 1, c.alpha = 4, c.patience = 1, c.q_max = 1000;
  c.tau = 0.02;  // gains of one point do not count
  EXPECT_EQ(trajectory(c, {0.5, 0.51, 0.52, 0.55}), (std::vector<int>{1, 4, 16, 16}));
  c.tau = 0;
  c.smoothing = 0.5;  // M: 0.5, 0.25 + 0.5 * 0.4 = 0.45 (worse), then 0.725 (better)
  QSchedulerState s;
  EXPECT_EQ(next_q(c, s, 0.5), 1);
  EXPECT_EQ(next_q(c, s, 0.4), 4);
  EXPECT_DOUBLE_EQ(s.smoothed, 0.45);
  EXPECT_EQ(next_q(c, s, 1.0), 4);
  EXPECT_DOUBLE_EQ(s.best, 0.725);
}

TEST(QScheduler, QMaxFromAForwardPassBudget) {
  // 100 steps per epoch, 10 epochs, 2 passes per sample: q costs 2000 passes per unit.
  EXPECT_EQ(q_max_for_budget(64000, 8, 2, 100, 10, 2), 32);
  EXPECT_EQ(q_max_for_budget(63999, 8, 2, 100, 10, 2), 16);
  EXPECT_EQ(q_max_for_budget(10, 8, 2, 100, 10, 2), 8);  // never below q0
}

}  // namespace
}  // namespace zotrain
