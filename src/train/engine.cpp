#include "engine.h"

#include "zotrain/core/error.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

// One row per precision: its memory plan and its engine.
struct PrecisionRow {
  Precision precision;
  // The precisions whose checkpoints --init may name: f32 models, and the row's own. An
  // int8-npu run's trained weights are its program's masters (batch norm folded in), which no
  // other precision can read back.
  bool initializes_from(Precision from) const {
    return from == Precision::kF32 || from == precision;
  }
  MemoryPlan (*plan)(const Network& net, const TrainConfig& cfg, int head, int frozen);
  std::unique_ptr<Engine> (*make)(const EngineArgs& args);
};

constexpr PrecisionRow kPrecisions[] = {
    {Precision::kF32, f32_plan, make_f32_engine},
    {Precision::kInt8, int8_plan, make_int8_engine},
    {Precision::kInt8Npu, npu_plan, make_npu_engine},
};

const PrecisionRow& row(const TrainConfig& cfg) {
  for (const PrecisionRow& p : kPrecisions)
    if (cfg.precision == p.precision) return p;
  ZT_ASSERT(false && "every precision has a row");
  return kPrecisions[0];
}

}  // namespace

uint64_t step_key(const TrainConfig& cfg, int64_t step) {
  return zo::sample_seed(cfg.seed, step, -1);
}

std::unique_ptr<Engine> make_engine(const EngineArgs& args) {
  const PrecisionRow& p = row(args.cfg);
  if (args.init && !p.initializes_from(args.init->meta.config.precision)) {
    const char* from = name_of(args.init->meta.config.precision);
    throw InputError("--init " + args.cfg.init + ": an " + from +
                     " checkpoint cannot initialize an " + name_of(p.precision) +
                     " run (use --precision " + from + ")");
  }
  return p.make(args);
}

MemoryPlan engine_plan(const Network& net, const TrainConfig& cfg, int head, int frozen) {
  return row(cfg).plan(net, cfg, head, frozen);
}

}  // namespace zotrain
