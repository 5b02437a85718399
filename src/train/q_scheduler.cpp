#include "zotrain/train/q_scheduler.h"

#include <algorithm>

namespace zotrain {

int next_q(const QSchedulerConfig& c, QSchedulerState& s, double val_acc) {
  if (s.q == 0) s.q = c.q0;
  s.smoothed = s.smoothed < 0 ? val_acc : c.smoothing * s.smoothed + (1 - c.smoothing) * val_acc;
  if (s.best < 0 || s.smoothed > s.best + c.tau) {
    s.best = s.smoothed;
    s.stall = 0;
  } else if (++s.stall >= c.patience) {
    s.q = std::min(s.q * c.alpha, std::max(c.q_max, c.q0));
    s.stall = 0;
  }
  return s.q;
}

int q_max_for_budget(int64_t budget, int q0, int alpha, int64_t steps_per_epoch, int epochs,
                     int passes_per_sample) {
  const int64_t per_q = steps_per_epoch * epochs * passes_per_sample;
  int64_t q = q0;
  while (q * alpha * per_q <= budget && q * alpha <= (int64_t{1} << 20)) q *= alpha;
  return static_cast<int>(q);
}

}  // namespace zotrain
