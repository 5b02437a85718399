// How a distributed step shares its work among the ranks (docs/distributed.md): in data mode
// each rank runs every pass on its own contiguous rows of the batch; in directions mode each
// runs whole samples (sample s on rank s mod N) on the whole batch. Every rank then receives
// what it needs to take the step one process would take, bit for bit, whatever N is.
#pragma once

#include <algorithm>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nn/loss.h"
#include "zotrain/core/memory_plan.h"
#include "zotrain/data/epoch_order.h"
#include "zotrain/dist/world.h"
#include "zotrain/nn/network.h"
#include "zotrain/train/config.h"

namespace zotrain {

struct RowRange {
  int64_t begin = 0, end = 0;
  int64_t size() const { return end - begin; }
};

class StepSplit {
 public:
  StepSplit(Distributed mode, dist::World& world) : mode_(mode), world_(world) {}
  bool on() const { return mode_ != Distributed::kNone; }
  bool by_rows() const { return mode_ == Distributed::kData; }
  bool by_samples() const { return mode_ == Distributed::kDirections; }
  int ranks() const { return world_.size(); }
  int rank() const { return world_.rank(); }
  dist::World& world() const { return world_; }

  // Rank r's share of a batch's rows in data mode (all of them otherwise), and its rows of a
  // batch of `rows`: the rows a BatchSource fills for it.
  RowShare share_of(int r) const { return by_rows() ? RowShare{r, ranks()} : RowShare{}; }
  RowShare share() const { return share_of(rank()); }
  RowRange rows_of(int r, int64_t rows) const {
    const RowShare s = share_of(r);
    return {s.begin(rows), s.end(rows)};
  }
  RowRange rows(int64_t rows) const { return rows_of(rank(), rows); }
  // Whether this rank runs sample s (every rank does, but in directions mode).
  bool runs_sample(int64_t s) const { return !by_samples() || s % ranks() == rank(); }

 private:
  Distributed mode_;
  dist::World& world_;
};

// Each rank's share of a batch of `rows` in bytes, `row_bytes` a row (data mode), in rank order:
// the counts of an all-gather that puts every rank's rows in row order.
inline std::vector<size_t> row_counts(const StepSplit& split, int64_t rows, size_t row_bytes) {
  std::vector<size_t> counts(static_cast<size_t>(split.ranks()));
  for (size_t r = 0; r < counts.size(); ++r)
    counts[r] = static_cast<size_t>(split.rows_of(static_cast<int>(r), rows).size()) * row_bytes;
  return counts;
}

// The correct rows among `n` (loss, correct) pairs.
inline int64_t correct_rows(const double* pairs, int64_t n) {
  int64_t correct = 0;
  for (int64_t r = 0; r < n; ++r) correct += static_cast<int64_t>(pairs[2 * r + 1]);
  return correct;
}

// Runs a step's passes [0, n) over the ranks, in rounds: a `unit` of passes on every rank's rows
// (data), or one sample of `per_sample` passes per rank on the whole batch (directions).
// run(a, b, local_rows, out) runs passes [a, b) of this rank's share, writing their outputs
// (`row` elements per batch row) one pass after the other to `out`; then, after an all-gather,
// finish(k, out) gets each pass's output for the whole batch of `rows`, in pass order, on every
// rank. `send` holds unit (data) or per_sample (directions) passes of this rank's rows,
// `gathered` a round's passes of the whole batch.
template <typename T, typename Run, typename Finish>
void run_passes(const StepSplit& split, size_t n, size_t unit, size_t per_sample, int64_t rows,
                int64_t row, T* send, T* gathered, Run&& run, Finish&& finish) {
  const auto ranks = static_cast<size_t>(split.ranks());
  const size_t round = split.by_samples() ? per_sample * ranks : unit;
  const int64_t local = split.rows(rows).size();
  const auto bytes = [](int64_t elements) { return static_cast<size_t>(elements) * sizeof(T); };
  std::vector<size_t> counts(ranks);
  for (size_t c = 0; c < n; c += round) {
    const size_t m = std::min(round, n - c);
    // Rank r's passes of the round: [c + a, c + b).
    const auto share = [&](size_t r) {
      if (!split.by_samples()) return std::pair<size_t, size_t>{0, m};
      return std::pair{std::min(m, per_sample * r), std::min(m, per_sample * (r + 1))};
    };
    const auto [a, b] = share(static_cast<size_t>(split.rank()));
    if (b > a && local > 0) run(c + a, c + b, local, send);
    if (split.by_samples()) {
      for (size_t r = 0; r < ranks; ++r) {
        const auto [ra, rb] = share(r);
        counts[r] = bytes(static_cast<int64_t>(rb - ra) * rows * row);
      }
      split.world().allgather(send, counts, gathered);
    } else {
      counts = row_counts(split, rows, bytes(row));
      for (size_t k = 0; k < m; ++k)
        split.world().allgather(send + static_cast<int64_t>(k) * local * row, counts,
                                gathered + static_cast<int64_t>(k) * rows * row);
    }
    for (size_t k = 0; k < m; ++k) finish(c + k, gathered + static_cast<int64_t>(k) * rows * row);
  }
}

// Runs passes whose only product is their loss (no backward through a head) over the ranks,
// exchanging losses alone: run(a, b, rows, emit) runs passes [a, b) — a `unit` at a time in data
// mode — on this rank's first `rows` rows (data) or the whole batch (by samples), calling
// emit(k, logits) for each. Every rank gets loss[k] as softmax_cross_entropy gives it on the
// whole batch, from the rows' losses (data: 16 bytes a row) or the pass's loss (by samples: 16
// bytes a pass), and `correct` adds pass 0's correct rows.
template <typename Run>
void exchange_losses(const StepSplit& split, size_t n, size_t unit, size_t per_sample, int64_t rows,
                     const uint8_t* labels, std::vector<double>& send,
                     std::vector<double>& gathered, Run&& run, double* loss, int64_t* correct) {
  const bool by_rows = split.by_rows();
  const RowRange mine = split.rows(rows);
  const int64_t sent = by_rows ? mine.size() : 1;  // (loss, correct) pairs a pass sends
  const auto ranks = static_cast<size_t>(split.ranks());
  send.resize(2 * (by_rows ? unit * static_cast<size_t>(rows) : per_sample));
  gathered.resize(2 * (by_rows ? unit * static_cast<size_t>(rows) : per_sample * ranks));
  const auto run_share = [&](size_t a, size_t b, int64_t, double* out) {
    run(a, b, mine.size(), [&](size_t k, const Tensor& logits) {
      double* pairs = out + 2 * static_cast<int64_t>(k - a) * sent;
      if (by_rows) return softmax_cross_entropy_rows(logits, labels + mine.begin, pairs);
      int64_t c = 0;
      pairs[0] = softmax_cross_entropy(logits, labels, nullptr, &c);
      pairs[1] = static_cast<double>(c);
    });
  };
  const auto finish = [&](size_t k, double* pairs) {
    loss[k] = by_rows ? mean_row_loss(pairs, rows) : pairs[0];
    if (k == 0 && correct) *correct += correct_rows(pairs, by_rows ? rows : 1);
  };
  run_passes(split, n, unit, per_sample, by_rows ? rows : 1, 2, send.data(), gathered.data(),
             run_share, finish);
}

// The batch rows of run_passes' buffers in a distributed run of cfg on `ranks` ranks (none when
// it is not distributed): `send`, a sample's passes (at most two) of this rank's rows, and
// `gathered`, a round's passes of the whole batch (two in data mode, a sample per rank in
// directions mode).
struct DistRows {
  int64_t send = 0, gathered = 0;
};
inline DistRows dist_rows(const TrainConfig& cfg, int ranks) {
  if (cfg.distributed == Distributed::kNone || cfg.method == Method::kBp) return {};
  const int64_t pass_rows = 2 * cfg.batch;
  return {pass_rows, cfg.distributed == Distributed::kData ? pass_rows : pass_rows * ranks};
}
// Adds those buffers to a plan, for outputs of `row_bytes` per batch row (on this world's ranks).
inline void add_dist_rows(MemoryPlan& plan, const TrainConfig& cfg, size_t row_bytes,
                          const std::string& what) {
  const DistRows d = dist_rows(cfg, dist::world().size());
  if (d.send == 0) return;
  plan.add(-1, "distributed: this rank's " + what, Bucket::kWorkspace,
           static_cast<size_t>(d.send) * row_bytes);
  plan.add(-1, "distributed: every rank's " + what, Bucket::kWorkspace,
           static_cast<size_t>(d.gathered) * row_bytes);
}

// Data mode runs each rank's rows apart: no trained layer (from `first` on) may mix the rows of
// a batch in training (batch norm's statistics) or number them (dropout's masks); else an
// InputError that names the layer.
void check_rows_apart(const Network& net, int first);

}  // namespace zotrain
