// QScheduler: the number of ZO samples per step, q, grows only when validation progress stalls
// (docs/spec/ALGORITHMS.md §4). After each epoch the validation accuracy is smoothed,
// M = s·M + (1 − s)·acc; an improvement of more than tau over the best M so far resets the
// stall count, and `patience` epochs without one multiply q by alpha, up to q_max. Every knob
// is explicit, since the paper leaves tau and the smoothing open and took q_max from a fixed-q
// sweep.
#pragma once

#include <cstdint>

namespace zotrain {

struct QSchedulerConfig {
  int q0 = 8;            // the paper's
  int alpha = 2;         // the paper's
  int patience = 5;      // the paper's
  double tau = 0.0;      // improvement that counts, in accuracy (0.01 = one point)
  double smoothing = 0;  // s in [0, 1): 0 takes each epoch's accuracy as it is
  int q_max = 64;
};

// Where the controller stands; saved in checkpoints so that a resumed run continues it exactly.
struct QSchedulerState {
  int q = 0;             // 0: not started (q0)
  double smoothed = -1;  // M; -1 before the first epoch
  double best = -1;
  int stall = 0;
};

// The q of the next epoch after an epoch with validation accuracy `val_acc`, updating `state`.
int next_q(const QSchedulerConfig& c, QSchedulerState& state, double val_acc);

// The largest q0·alpha^k whose fixed-q run of `epochs` epochs of `steps_per_epoch` steps, at
// `passes_per_sample` forward passes per sample and step (2 for SPSA), fits in `budget` forward
// passes: a q_max from a budget instead of a sweep. At least q0.
int q_max_for_budget(int64_t budget, int q0, int alpha, int64_t steps_per_epoch, int epochs,
                     int passes_per_sample);

}  // namespace zotrain
