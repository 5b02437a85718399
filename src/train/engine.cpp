#include "engine.h"

#include "zotrain/core/error.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

// One row per precision: its memory plan and its engine.
struct PrecisionRow {
  Precision precision;
  bool reads_int8_checkpoints;  // --init may name an int8 run's checkpoint
  MemoryPlan (*plan)(const Network& net, const TrainConfig& cfg, int head, int frozen);
  std::unique_ptr<Engine> (*make)(const EngineArgs& args);
};

constexpr PrecisionRow kPrecisions[] = {
    {Precision::kF32, false, f32_plan, make_f32_engine},
    {Precision::kInt8, true, int8_plan, make_int8_engine},
    {Precision::kInt8Npu, false, npu_plan, make_npu_engine},
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
  if (args.init && !p.reads_int8_checkpoints &&
      args.init->meta.config.precision == Precision::kInt8)
    throw InputError("--init " + args.cfg.init +
                     ": an int8 checkpoint cannot initialize an f32 run (use --precision int8)");
  return p.make(args);
}

MemoryPlan engine_plan(const Network& net, const TrainConfig& cfg, int head, int frozen) {
  return row(cfg).plan(net, cfg, head, frozen);
}

}  // namespace zotrain
