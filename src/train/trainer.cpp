#include "zotrain/train/trainer.h"

#include <sys/resource.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>
#include <thread>
#include <tuple>
#include <vector>

#include "engine.h"
#include "kernels/isa.h"
#include "output_folder.h"
#include "param_average.h"
#include "zotrain/core/error.h"
#include "zotrain/dist/world.h"
#include "zotrain/models/onnx.h"

namespace zotrain {

using nlohmann::json;

namespace {

const TrainConfig& validated(const TrainConfig& cfg) {
  validate(cfg);
  return cfg;
}

// Threads past a few per core only wait (issue 22: --threads 256 on 2 cores took 6.5 s for a
// 0.09 s run). Results are the same for any count, so the run takes at most kThreadsPerCore
// per core (and at least zo_lanes, one per lane), and its plan and summary say how many.
constexpr int kThreadsPerCore = 4;

TrainConfig with_usable_threads(const TrainConfig& cfg) {
  TrainConfig c = validated(cfg);
  const int cores = static_cast<int>(std::max(1u, std::thread::hardware_concurrency()));
  c.threads = std::min(c.threads, std::max(kThreadsPerCore * cores, c.zo_lanes));
  return c;
}

// The machine's memory (0 where it cannot be told).
uint64_t physical_memory_bytes() {
  const long pages = ::sysconf(_SC_PHYS_PAGES), page = ::sysconf(_SC_PAGE_SIZE);
  return pages > 0 && page > 0 ? static_cast<uint64_t>(pages) * static_cast<uint64_t>(page) : 0;
}

// Before the arena is made (issue 22, defect 7): a plan beyond the machine's memory ended in
// "out of memory" after zero-filling gigabytes, naming nothing.
void check_fits(const MemoryPlan& plan, const TrainConfig& cfg) {
  const uint64_t memory = physical_memory_bytes();
  if (memory == 0 || plan.total() <= memory) return;
  const MemoryRow* largest = &plan.rows[0];
  for (const MemoryRow& r : plan.rows)
    if (r.bytes > largest->bytes) largest = &r;
  throw InputError("the run plans " + std::to_string(plan.total()) + " bytes (" + cfg.model +
                   " at batch " + std::to_string(cfg.batch) + "; the largest buffer, " +
                   largest->what + ", " + std::to_string(largest->bytes) +
                   " bytes), more than this machine's " + std::to_string(memory) +
                   " bytes of memory; choose a smaller --batch or model");
}

size_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;
}

// Writes `text` to `path` (appended, or replacing it) or says why it could not: a run whose
// metrics cannot be written must not end with exit 0 and an empty result.
void write_file(const std::string& path, const std::string& text, std::ios::openmode mode) {
  std::ofstream out(path, mode);
  out << text;
  out.flush();
  if (!out)
    throw RuntimeError(path + ": could not write (" + std::strerror(errno) +
                       "); is the output folder writable, and the path a file?");
}

// Keeps the metrics lines of epochs already done, so a resumed run appends where it stopped.
void truncate_metrics(const std::string& path, int epochs_done) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    // A line that is not an object of ours ("5") is dropped, not a json type_error.
    if (j.is_object() && j.contains("epoch") && j["epoch"].is_number_integer() &&
        j["epoch"].get<int64_t>() <= epochs_done)
      kept += line + "\n";
  }
  write_file(path, kept, std::ios::trunc);
}

// A checkpoint holds finite numbers only: the loss check misses weights gone NaN behind a ReLU
// (which maps NaN to 0), and such a run would save them and report chance accuracy.
void check_finite(const CheckpointParts& parts, int epoch) {
  auto check = [&](const std::string& name, const Tensor& t) {
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!std::isfinite(t[i]))
        throw RuntimeError("training diverged by epoch " + std::to_string(epoch) + ": tensor " +
                           name + " holds " + std::to_string(t[i]) + " at element " +
                           std::to_string(i) + "; the previous checkpoint is kept");
  };
  if (parts.net) {
    for (const ParamRef& p : parts.net->params()) check(p.name, p.value);
    for (const ParamRef& p : parts.net->state()) check(p.name, p.value);
  }
  for (const auto& [name, t] : parts.extra) check(name, t);
}

// A run under mpirun needs MPI built in and a distributed mode; else every rank would train the
// whole run on its own, all writing to one folder.
void check_launch(const TrainConfig& cfg) {
  const dist::World& w = dist::world();
  if (dist::launched_by_mpirun() && !dist::World::has_mpi())
    throw InputError(
        "this zotrain runs under mpirun but was built without MPI (Debian: libopenmpi-dev; "
        "ZOTRAIN_WITH_MPI): each rank would train on its own");
  if (w.distributed() && cfg.distributed == Distributed::kNone)
    throw InputError("running on " + std::to_string(w.size()) +
                     " ranks (mpirun) with distributed none: set --distributed data or "
                     "directions, or run one process");
}

// FNV-1a over bytes, continuing from `h`.
uint64_t fnv1a(const void* data, size_t n, uint64_t h = 14695981039346656037ull) {
  const auto* p = static_cast<const unsigned char*>(data);
  for (size_t i = 0; i < n; ++i) h = (h ^ p[i]) * 1099511628211ull;
  return h;
}

uint64_t state_hash(const CheckpointParts& parts) {
  uint64_t h = fnv1a("state", 5);
  const auto add = [&](const Tensor& t) { h = fnv1a(t.data(), t.numel() * sizeof(float), h); };
  if (parts.net) {
    for (const ParamRef& p : parts.net->params()) add(p.value);
    for (const ParamRef& p : parts.net->state()) add(p.value);
  }
  for (const auto& [name, t] : parts.extra) add(t);
  return h;
}

// This program's own file (Linux), so that ranks can tell they run the same build; 0 elsewhere.
uint64_t executable_hash() {
  std::ifstream in("/proc/self/exe", std::ios::binary);
  uint64_t h = fnv1a("exe", 3);
  std::vector<char> chunk(1 << 20);
  while (in.read(chunk.data(), static_cast<std::streamsize>(chunk.size())) || in.gcount() > 0)
    h = fnv1a(chunk.data(), static_cast<size_t>(in.gcount()), h);
  return h;
}

// Every rank must run the same binary (kernels) on the same config and state, checked at the
// start and at every checkpoint: ranks that differ would diverge without a word.
void check_ranks_agree(const char* what, uint64_t hash) {
  dist::World& w = dist::world();
  if (!w.distributed()) return;
  std::vector<uint64_t> all(static_cast<size_t>(w.size()));
  w.allgather(&hash, std::vector<size_t>(all.size(), sizeof hash), all.data());
  for (size_t r = 1; r < all.size(); ++r)
    if (all[r] != all[0])
      throw RuntimeError("rank " + std::to_string(r) + "'s " + what +
                         " differs from rank 0's: every rank must run the same zotrain binary, "
                         "kernels and config from the same state (docs/distributed.md)");
}

}  // namespace

int frozen_layers(const Network& net, const TrainConfig& cfg) {
  const auto n = static_cast<int>(net.param_layers().size());
  if (cfg.train_layers > n)
    throw InputError("--train-layers " + std::to_string(cfg.train_layers) +
                     " is out of range: the model has " + std::to_string(n) +
                     " layers with parameters");
  return cfg.train_layers == 0 ? 0 : net.head_start(cfg.train_layers);
}

MemoryPlan training_plan(const Network& net, const TrainConfig& cfg, int head_start) {
  const int frozen = frozen_layers(net, cfg);
  MemoryPlan plan = engine_plan(net, cfg, head_start, frozen);
  add_average_plan(plan, net, cfg, frozen);
  plan.add(-1, "labels", Bucket::kInput, cfg.batch);
  return plan;
}

int choose_head(const Network& net, const TrainConfig& cfg) {
  if (cfg.method == Method::kBp) return frozen_layers(net, cfg);
  if (cfg.method == Method::kZo) return net.num_layers();
  if (cfg.memory_budget == 0) return net.head_start(cfg.bp_layers);
  const int n = cfg.train_layers ? cfg.train_layers : static_cast<int>(net.param_layers().size());
  for (int k = n; k >= 0; --k) {
    int h = net.head_start(k);
    if (training_plan(net, cfg, h).total() <= static_cast<size_t>(cfg.memory_budget)) return h;
  }
  throw InputError("--memory-budget " + std::to_string(cfg.memory_budget) +
                   " bytes is too small even for Full ZO, which needs " +
                   std::to_string(training_plan(net, cfg, net.num_layers()).total()) +
                   " bytes at batch " + std::to_string(cfg.batch));
}

double evaluate_checkpoint(const Checkpoint& ckpt, const RunData& data, int64_t batch,
                           int threads) {
  // The checkpoint's model as a Full ZO run allocates it: every layer forward only.
  Checkpoint model = ckpt;
  model.file = with_averages(ckpt.file);
  TrainConfig cfg = ckpt.meta.config;
  cfg.method = Method::kZo;
  cfg.batch = batch;
  cfg.threads = threads;
  cfg.zo_lanes = 1;
  cfg.train_layers = 0;
  cfg.cache_features = false;
  cfg.memory_budget = 0;
  cfg.momentum = cfg.zo_momentum = 0;  // no optimizer state to restore
  const ModelSpec spec = model_by_name(cfg.model, ckpt.meta.item_shape, ckpt.meta.num_classes);
  Network net(spec.item_shape, spec.layers);
  ThreadPool pool(threads);
  Arena arena;
  std::unique_ptr<Engine> engine =
      make_engine({cfg, net, arena, pool, data, net.num_layers(), 0, &model});
  const auto test = data.batches(Split::kTest, batch, false, 0);
  return engine->evaluate(*test, false);
}

MemoryReport memory_report(const TrainConfig& cfg, const Shape& item, int64_t classes) {
  validate(cfg);
  const ModelSpec spec = model_by_name(cfg.model, item, classes);
  const Network net(spec.item_shape, spec.layers);
  MemoryReport r;
  r.cfg = cfg;
  r.head = choose_head(net, cfg);
  r.plan = training_plan(net, cfg, r.head);
  TrainConfig zo = cfg, bp = cfg;
  zo.method = Method::kZo, bp.method = Method::kBp;
  zo.memory_budget = bp.memory_budget = 0;
  // int8-npu runs ZO only: its Full BP yardstick is the f32 one.
  if (bp.precision == Precision::kInt8Npu) bp.precision = Precision::kF32;
  r.full_bp_precision = bp.precision;
  // With frozen layers (train_layers), Full BP's head starts after them.
  r.full_zo = training_plan(net, zo, choose_head(net, zo)).total();
  r.full_bp = training_plan(net, bp, choose_head(net, bp)).total();
  // The f32 forward pass, the yardstick of "training memory = inference memory".
  r.inference = net.inference_plan(cfg.batch, cfg.threads).total();
  for (int i : net.param_layers()) r.bp_layers += i >= r.head, ++r.param_layers;
  return r;
}

std::string memory_report_json(const MemoryReport& r) {
  const MemoryPlan& plan = r.plan;
  const auto percent_over = [&](size_t base) {
    return 100.0 * (static_cast<double>(plan.total()) / static_cast<double>(base) - 1.0);
  };
  json rows = json::array(), buckets = json::object();
  for (const MemoryRow& row : plan.rows)
    rows.push_back({{"layer", row.layer},
                    {"buffer", row.what},
                    {"bucket", bucket_name(row.bucket)},
                    {"bytes", row.bytes}});
  for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
    buckets[bucket_name(static_cast<Bucket>(b))] = plan.bytes(static_cast<Bucket>(b));
  const json out = {{"model", r.cfg.model},
                    {"batch", r.cfg.batch},
                    {"method", name_of(r.cfg.method)},
                    {"precision", name_of(r.cfg.precision)},
                    {"bp_layers", r.bp_layers},
                    {"head_start", r.head},
                    {"rows", rows},
                    {"buckets", buckets},
                    {"total_bytes", plan.total()},
                    {"full_zo_bytes", r.full_zo},
                    {"full_bp_bytes", r.full_bp},
                    {"full_bp_precision", name_of(r.full_bp_precision)},
                    {"inference_f32_bytes", r.inference},
                    {"percent_over_inference_f32", percent_over(r.inference)},
                    {"percent_over_full_zo", percent_over(r.full_zo)},
                    {"percent_saved_vs_full_bp", -percent_over(r.full_bp)}};
  return out.dump(2);
}

double evaluate_checkpoint(const Checkpoint& ckpt, const std::string& data, int64_t batch,
                           int threads, int64_t* examples) {
  const CheckpointMeta& m = ckpt.meta;
  const std::string name = data.empty() ? m.config.data : data;
  RunData d = RunData::load(name, {0, 0, m.config.seed}, m.config.points);
  d.set_normalization(m.norm);
  if (d.item_shape() != m.item_shape)
    throw InputError(name + ": inputs are " + d.item_shape().str() + " but " + ckpt.path +
                     " was trained on " + m.item_shape.str());
  if (d.num_classes() > m.num_classes)
    throw InputError(name + ": has " + std::to_string(d.num_classes()) + " classes but " +
                     ckpt.path + " has " + std::to_string(m.num_classes));
  if (batch < 1) throw InputError("--batch: expected an integer >= 1");
  if (threads < 1 || threads > 256) throw InputError("--threads: expected an integer in [1, 256]");
  if (examples) *examples = d.size(Split::kTest);
  return evaluate_checkpoint(ckpt, d, batch, threads);
}

Trainer::Trainer(const TrainConfig& cfg)
    : Trainer(cfg, RunData::load(validated(cfg).data,
                                 {cfg.val_size, cfg.train_limit, cfg.seed, cfg.test_limit},
                                 cfg.points)) {}

Trainer::Trainer(const TrainConfig& cfg, RunData data)
    : cfg_(with_usable_threads(cfg)),
      data_(std::move(data)),
      spec_(model_by_name(cfg.model, data_.item_shape(), data_.num_classes())),
      pool_(cfg_.threads) {
  check_launch(cfg_);
  if (cfg_.input_std > 0) {
    if (data_.is_point_cloud())
      throw InputError("input_mean and input_std normalize images: " + cfg_.data +
                       " holds point clouds");
    data_.set_normalization(
        {static_cast<float>(cfg_.input_mean), static_cast<float>(cfg_.input_std)});
  }
  net_ = std::make_unique<Network>(spec_.item_shape, spec_.layers);
  frozen_ = frozen_layers(*net_, cfg_);
  head_ = choose_head(*net_, cfg_);
  plan_ = training_plan(*net_, cfg_, head_);
  check_fits(plan_, cfg_);
  if (cfg_.cache_features && data_.is_point_cloud())
    throw InputError("--cache-features 1 needs image data: " + cfg_.data +
                     " holds point clouds, sampled anew for every pass");
  std::optional<Checkpoint> init;
  if (!cfg_.init.empty()) {
    init = read_init();
  } else if (is_onnx_path(cfg_.model)) {
    // An ONNX model starts from the file's parameters (an f32 model: int8 runs quantize them).
    init.emplace();
    init->path = cfg_.model;
    init->file = read_onnx(cfg_.model).params;
    init->meta.item_shape = spec_.item_shape;
    init->meta.num_classes = spec_.num_classes;
  }
  engine_ =
      make_engine({cfg_, *net_, arena_, pool_, data_, head_, frozen_, init ? &*init : nullptr});
  if (cfg_.ema_decay > 0)
    average_ = std::make_unique<ParamAverage>(engine_->parameters(), frozen_, cfg_.ema_decay,
                                              cfg_.ema_warmup, arena_);
  labels_ = static_cast<uint8_t*>(arena_.alloc_bytes(Bucket::kInput, cfg_.batch));
  sparsity_ = parse_sparsity(cfg_.sparsity);
}

Trainer::~Trainer() = default;

void Trainer::claim_output() {
  // A distributed run's rank 0 writes its results; the other ranks write nothing.
  if (!output_ && dist::world().rank() == 0) output_ = std::make_unique<OutputFolder>(cfg_.out);
}

int Trainer::q() const {
  if (cfg_.q_schedule == QSchedule::kFixed) return cfg_.q;
  return state_.q_scheduler.q ? state_.q_scheduler.q : cfg_.q0;
}

int Trainer::bp_layers() const {
  int k = 0;
  for (int i : net_->param_layers()) k += i >= head_;
  return k;
}

QNetwork* Trainer::int8_network() {
  return engine_->int8_network();
}

NpuNetwork* Trainer::npu_network() {
  return engine_->npu_network();
}

std::pair<double, double> Trainer::learning_rates(int epoch) const {
  const double decay = std::pow(cfg_.lr_decay, epoch / cfg_.lr_step);
  // validate() keeps the exponent 0 for a fixed q, where q / q0 means nothing: pow(x, 0) is 1.
  const double q_growth = std::pow(double(q()) / cfg_.q0, cfg_.q_lr_exponent);
  return {cfg_.lr * decay, cfg_.zo_lr * decay * q_growth};
}

int64_t Trainer::fill_input(const BatchSource& batches, int64_t index) {
  return engine_->fill(batches, index, labels_, false);
}

void Trainer::forward(int64_t rows) {
  engine_->forward(rows);
}

int64_t Trainer::predict(BatchSource& batches, float* logits) {
  batches.start_epoch(0);
  int64_t n = 0;
  for (int64_t b = 0; b < batches.batches_per_epoch(); ++b)
    n += engine_->predict(batches, b, logits + n * spec_.num_classes);
  return n;
}

StepResult Trainer::step(const BatchSource& batches, int epoch) {
  if (epoch < 0) throw InputError("step: epoch " + std::to_string(epoch) + " is not >= 0");
  return step(fill_input(batches, 0), epoch);
}

std::vector<ParamView> Trainer::parameters() {
  return engine_->parameters();
}

ParamView Trainer::parameter(const std::string& name) {
  const std::vector<ParamView> all = engine_->parameters();
  for (const ParamView& p : all)
    if (p.name == name) return p;
  std::string names;
  for (const ParamView& p : all) names += (names.empty() ? "" : ", ") + p.name;
  throw InputError("no parameter called '" + name + "'; this run has " + names);
}

void Trainer::set_parameter(const std::string& name, const void* values) {
  const ParamView p = parameter(name);
  const size_t n = static_cast<size_t>(p.shape.numel());
  if (p.type == ParamView::Type::kS8) {
    const auto* v = static_cast<const int8_t*>(values);
    for (size_t i = 0; i < n; ++i)
      if (v[i] == -128)
        throw InputError("parameter " + name + ": int8 mantissas are in [-127, 127], -128 at " +
                         std::to_string(i));
    std::copy(v, v + n, static_cast<int8_t*>(p.data));
  } else {
    const auto* v = static_cast<const float*>(values);
    std::copy(v, v + n, static_cast<float*>(p.data));
  }
  engine_->parameters_changed();
}

CheckpointMeta Trainer::meta() const {
  return {cfg_, spec_.item_shape, spec_.num_classes, data_.normalization(), state_};
}

CheckpointParts Trainer::checkpoint_parts() {
  CheckpointParts parts = engine_->checkpoint();
  if (average_)
    for (auto& t : average_->state()) parts.extra.push_back(std::move(t));
  return parts;
}

Checkpoint Trainer::checkpoint() {
  const CheckpointParts parts = checkpoint_parts();
  return {"the run in " + cfg_.out + " (in memory)", meta(),
          checkpoint_file(meta(), parts.net, parts.sgd, parts.extra)};
}

void Trainer::save(const std::string& path) {
  write_checkpoint(path, checkpoint_parts());
}

void Trainer::write_checkpoint(const std::string& path, const CheckpointParts& parts) const {
  check_finite(parts, state_.epochs_done);
  write_tensor_file(path, checkpoint_file(meta(), parts.net, parts.sgd, parts.extra));
}

double Trainer::evaluate_on(Split split) {
  if (data_.size(split) == 0) return 0.0;
  auto batches = source(split, false);
  return engine_->evaluate(*batches, features_[static_cast<int>(split)] != nullptr);
}

std::pair<double, double> Trainer::evaluate_val_test() {
  if (average_) average_->swap();
  const double val = evaluate_on(Split::kVal), test = evaluate_on(Split::kTest);
  if (average_) average_->swap();
  return {val, test};
}

std::unique_ptr<BatchSource> Trainer::source(Split split, bool train) const {
  const uint64_t seed = train ? cfg_.seed : 0;
  if (const auto& f = features_[static_cast<int>(split)])
    return std::make_unique<FeatureSource>(f, cfg_.batch, train, seed);
  return data_.batches(split, cfg_.batch, train, seed);
}

void Trainer::cache_features() {
  if (!cfg_.cache_features || features_[0]) return;
  for (Split split : {Split::kTrain, Split::kVal, Split::kTest}) {
    const int64_t n = data_.size(split);
    if (n == 0) continue;
    auto images = data_.batches(split, cfg_.batch, false, 0);
    features_[static_cast<int>(split)] =
        std::make_shared<const FeatureSet>(engine_->extract_features(*images, n));
  }
}

StepResult Trainer::step(int64_t rows, int epoch) {
  const auto [lr, zo_lr] = learning_rates(epoch);
  StepInput in;
  in.rows = rows;
  in.labels = labels_;
  in.epoch = epoch;
  in.step = state_.steps;
  in.lr = lr;
  in.zo_lr = zo_lr;
  in.q = q();
  in.features = features_filled_;
  const StepResult r = engine_->step(in);
  state_.forward_passes += r.forward_passes;
  state_.backward_passes += r.backward_passes;
  features_filled_ = false;
  ++state_.steps;
  if (average_) average_->update(state_.steps);
  return r;
}

Checkpoint Trainer::read_init() const {
  Checkpoint ckpt = read_checkpoint(cfg_.init);
  if (ckpt.meta.item_shape != spec_.item_shape || ckpt.meta.num_classes != spec_.num_classes ||
      ckpt.meta.config.model != cfg_.model)
    throw InputError("--init " + cfg_.init + ": checkpoint is " + ckpt.meta.config.model +
                     " for inputs " + ckpt.meta.item_shape.str() + " with " +
                     std::to_string(ckpt.meta.num_classes) + " classes, this run is " + cfg_.model +
                     " for " + spec_.item_shape.str() + " with " +
                     std::to_string(spec_.num_classes));
  ckpt.file = with_averages(ckpt.file);  // the model the run was evaluated on
  return ckpt;
}

void Trainer::resume(const Checkpoint& ckpt) {
  if (ckpt.meta.item_shape != spec_.item_shape || ckpt.meta.num_classes != spec_.num_classes)
    throw InputError(ckpt.path + ": checkpoint is for inputs " + ckpt.meta.item_shape.str() +
                     " with " + std::to_string(ckpt.meta.num_classes) + " classes, the data has " +
                     spec_.item_shape.str() + " with " + std::to_string(spec_.num_classes));
  claim_output();
  engine_->resume(ckpt);
  if (average_) average_->restore(ckpt);
  state_ = ckpt.meta.state;
  if (output_) truncate_metrics(cfg_.out + "/metrics.jsonl", state_.epochs_done);
}

// The steps of one epoch over `batches`: their losses averaged over the rows, the other
// counts summed (forward and backward passes are counted in state_).
Trainer::EpochSums Trainer::train_epoch(BatchSource& batches, int epoch, bool cached,
                                        const TrainCallbacks& cb) {
  EpochSums sums;
  double loss_sum = 0;
  const int64_t n = batches.batches_per_epoch();
  for (int64_t b = 0; b < n; ++b) {
    const int64_t rows = engine_->fill(batches, b, labels_, cached);
    features_filled_ = cached;
    const uint64_t sent = dist::world().bytes_sent();
    const StepResult step = this->step(rows, epoch);
    step_bytes_sent_ += dist::world().bytes_sent() - sent;
    ++steps_run_;
    sums.signs += step.signs;
    sums.zero_signs += step.zero_signs;
    sums.agree += step.agree;
    sums.correct += step.correct;
    sums.rows += rows;
    loss_sum += step.loss * rows;
    if (!std::isfinite(step.loss))
      throw RuntimeError("training diverged at epoch " + std::to_string(epoch + 1) + " batch " +
                         std::to_string(b) + " (loss is " + std::to_string(step.loss) +
                         "); lower --lr");
    if (cb.on_batch) cb.on_batch(epoch + 1, b + 1, n, loss_sum / sums.rows);
  }
  sums.loss = loss_sum / sums.rows;
  return sums;
}

void Trainer::run(const TrainCallbacks& cb) {
  if (interrupted_)
    throw InputError("the run in " + cfg_.out +
                     " stopped in the middle of an epoch: continue it from its checkpoint "
                     "(zotrain train --resume, or Trainer.from_checkpoint in Python)");
  // The output folder is this run's until run() ends; a run that ends by an exception (a
  // callback's, a diverged loss) stays mid-epoch, and only its checkpoint continues it.
  struct Ending {
    Trainer& t;
    bool finished = false;
    ~Ending() {
      t.output_.reset();
      t.interrupted_ = !finished;
    }
  } ending{*this};
  claim_output();
  if (state_.epochs_done == 0 && output_) {
    if (cfg_.overwrite)
      output_->remove_results();
    else
      output_->require_no_results();
  }
  const std::string metrics_path = cfg_.out + "/metrics.jsonl";
  if (state_.epochs_done == 0 && output_) write_file(metrics_path, "", std::ios::trunc);
  {
    TrainConfig same = cfg_;  // what may differ between ranks: their threads
    same.threads = 1;
    const std::string what =
        config_to_json(same) + kernels::kernel_isa_name(kernels::active_kernel_isa());
    if (dist::world().distributed()) check_ranks_agree("zotrain binary", executable_hash());
    check_ranks_agree("config or kernel set", fnv1a(what.data(), what.size()));
    check_ranks_agree("parameters", state_hash(engine_->checkpoint()));
  }
  cache_features();
  std::unique_ptr<BatchSource> batcher = source(Split::kTrain, true);
  const bool cached = features_[0] != nullptr;
  q_scheduler_ = {cfg_.q0, cfg_.q_alpha, cfg_.q_patience, cfg_.q_tau, cfg_.q_smoothing, cfg_.q_max};
  if (cfg_.q_schedule == QSchedule::kBudget)
    q_scheduler_.q_max = q_max_for_budget(cfg_.q_budget, cfg_.q0, cfg_.q_alpha,
                                          batcher->batches_per_epoch(), cfg_.epochs, 2);
  for (int epoch = state_.epochs_done; epoch < cfg_.epochs; ++epoch) {
    const auto [lr, zo_lr] = learning_rates(epoch);
    auto t0 = std::chrono::steady_clock::now();
    batcher->start_epoch(epoch);
    const EpochSums sums = train_epoch(*batcher, epoch, cached, cb);
    // An engine's end-of-epoch passes (int8's precise batch norm) measure the model evaluated.
    if (average_) average_->swap();
    state_.forward_passes += engine_->end_epoch(epoch);
    if (average_) average_->swap();
    state_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EpochReport r;
    r.epoch = epoch + 1;
    r.epochs = cfg_.epochs;
    r.lr = lr;
    r.train_loss = sums.loss;
    r.train_acc = static_cast<double>(sums.correct) / sums.rows;
    std::tie(r.val_acc, r.test_acc) = evaluate_val_test();
    r.seconds = state_.seconds;
    r.forward_passes = state_.forward_passes;
    r.backward_passes = state_.backward_passes;
    r.arena_bytes = arena_.total_bytes();
    r.peak_rss_bytes = peak_rss_bytes();
    const int epoch_q = q();
    if (cfg_.q_schedule != QSchedule::kFixed) next_q(q_scheduler_, state_.q_scheduler, r.val_acc);
    const bool recalibrate = q() > epoch_q && engine_->on_plateau();
    state_.epochs_done = epoch + 1;
    if (r.val_acc > state_.best_val_acc) {
      state_.best_val_acc = r.val_acc;
      state_.best_epoch = r.epoch;
    }
    json line = {{"epoch", r.epoch},
                 {"lr", r.lr},
                 {"zo_lr", zo_lr},
                 {"sparsity", schedule_at(sparsity_, epoch)},
                 {"q", epoch_q},
                 {"train_loss", r.train_loss},
                 {"train_acc", r.train_acc},
                 {"val_acc", r.val_acc},
                 {"test_acc", r.test_acc},
                 {"forward_passes", r.forward_passes},
                 {"backward_passes", r.backward_passes},
                 {"seconds", r.seconds},
                 {"arena_bytes", r.arena_bytes},
                 {"peak_rss_bytes", r.peak_rss_bytes}};
    if (recalibrate) line["recalibrated"] = true;
    engine_->add_epoch_metrics(line, epoch, sums);
    r.metrics = line.dump();
    const CheckpointParts parts = checkpoint_parts();
    check_ranks_agree("parameters", state_hash(parts));
    if (!output_) {
      if (cb.on_epoch) cb.on_epoch(r);
      continue;
    }
    write_file(metrics_path, line.dump() + "\n", std::ios::app);
    write_checkpoint(cfg_.out + "/checkpoint.bin", parts);
    if (cb.on_epoch) cb.on_epoch(r);
  }
  if (output_) write_summary();
  ending.finished = true;
}

int64_t Trainer::num_parameters() const {
  return engine_->num_parameters();
}

size_t Trainer::feature_cache_bytes() const {
  size_t n = 0;
  for (const auto& f : features_)
    if (f) n += f->bytes();
  return n;
}

void Trainer::write_summary() const {
  // The last epoch's test accuracy, read back from metrics.jsonl so a resumed run reports the
  // same as an uninterrupted one.
  std::ifstream in(cfg_.out + "/metrics.jsonl");
  std::string line, last;
  while (std::getline(in, line))
    if (!line.empty()) last = line;
  json final_epoch = last.empty() ? json::object() : json::parse(last);
  json buckets = json::object();
  for (int b = 0; b < static_cast<int>(Bucket::kCount); ++b)
    buckets[bucket_name(static_cast<Bucket>(b))] = arena_.bytes(static_cast<Bucket>(b));
  json summary = {{"final_test_acc", final_epoch.value("test_acc", 0.0)},
                  {"final_val_acc", final_epoch.value("val_acc", 0.0)},
                  {"best_val_acc", state_.best_val_acc},
                  {"best_epoch", state_.best_epoch},
                  {"epochs", state_.epochs_done},
                  {"forward_passes", state_.forward_passes},
                  {"backward_passes", state_.backward_passes},
                  {"train_seconds", state_.seconds},
                  {"arena_bytes", arena_.total_bytes()},
                  {"arena_bytes_by_bucket", buckets},
                  {"planned_bytes", plan_.total()},
                  {"peak_rss_bytes", peak_rss_bytes()},
                  {"num_parameters", num_parameters()},
                  {"bp_layers", bp_layers()},
                  {"head_start", head_},
                  {"frozen_layers", frozen_},
                  {"feature_cache_bytes", feature_cache_bytes()},
                  {"npu_bytes", engine_->device_bytes()},
                  {"q_max", cfg_.q_schedule == QSchedule::kFixed ? cfg_.q : q_scheduler_.q_max},
                  {"ranks", dist::world().size()},
                  // Modeled as ring collectives send them (dist/world.h), this session's steps.
                  {"bytes_sent_per_step",
                   steps_run_ ? static_cast<double>(step_bytes_sent_) / steps_run_ : 0.0},
                  {"config", json::parse(config_to_json(cfg_))}};
  std::string tmp = cfg_.out + "/summary.json.tmp";
  write_file(tmp, summary.dump(2) + "\n", std::ios::trunc);
  std::filesystem::rename(tmp, cfg_.out + "/summary.json");
}

}  // namespace zotrain
