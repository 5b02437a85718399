#include "zotrain/train/trainer.h"

#include <sys/resource.h>

#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "zotrain/core/error.h"
#include "zotrain/models/serialize.h"
#include "zotrain/nn/int8/int_loss.h"
#include "zotrain/nn/loss.h"
#include "zotrain/train/int8_step.h"
#include "zotrain/zo/perturbation.h"
#include "zotrain/zo/ternary.h"

namespace zotrain {

using nlohmann::json;

namespace {

const TrainConfig& validated(const TrainConfig& cfg) {
  validate(cfg);
  return cfg;
}

// The dropout key of every pass of the current step (a stream apart from the perturbations').
uint64_t step_key(const TrainConfig& cfg, const TrainState& state) {
  return zo::sample_seed(cfg.seed, state.steps, -1);
}

size_t peak_rss_bytes() {
  rusage ru{};
  getrusage(RUSAGE_SELF, &ru);
  return static_cast<size_t>(ru.ru_maxrss) * 1024;
}

// Keeps the metrics lines of epochs already done, so a resumed run appends where it stopped.
void truncate_metrics(const std::string& path, int epochs_done) {
  std::ifstream in(path);
  std::string line, kept;
  while (std::getline(in, line)) {
    if (line.empty()) continue;
    json j = json::parse(line, nullptr, false);
    if (!j.is_discarded() && j.value("epoch", 0) <= epochs_done) kept += line + "\n";
  }
  std::ofstream(path, std::ios::trunc) << kept;
}

}  // namespace

namespace {

// The share of the examples of `batches` a network classifies right: run(b, labels) loads batch
// b, runs it and returns its rows and correct count.
template <typename Run>
double accuracy(BatchSource& batches, int64_t batch, Run run) {
  batches.start_epoch(0);
  std::vector<uint8_t> labels(batch);
  int64_t correct = 0, seen = 0;
  for (int64_t b = 0; b < batches.batches_per_epoch(); ++b) {
    const auto [rows, c] = run(b, labels.data());
    seen += rows, correct += c;
  }
  return seen ? static_cast<double>(correct) / seen : 0.0;
}

}  // namespace

double evaluate(Network& net, BatchSource& batches, bool features) {
  const PassMode mode = net.mode();
  net.set_mode({false, 0, false});
  const double acc = accuracy(batches, net.batch(), [&](int64_t b, uint8_t* labels) {
    Tensor in = features ? net.frozen_output(net.batch()) : net.input(net.batch());
    const int64_t rows = batches.fill(b, in.data(), labels);
    int64_t c = 0;
    softmax_cross_entropy(features ? net.forward_trained(rows) : net.forward(rows), labels, nullptr,
                          &c);
    return std::pair{rows, c};
  });
  net.set_mode(mode);
  return acc;
}

double evaluate(QNetwork& net, BatchSource& batches, int input_exp) {
  const PassMode mode = net.mode();
  net.set_mode({false, 0, false});
  net.input().exp = input_exp;
  const double acc = accuracy(batches, net.batch(), [&](int64_t b, uint8_t* labels) {
    const int64_t rows = batches.fill(b, net.input().data, labels);
    return std::pair{rows, int8::count_correct(net.forward(rows), labels)};
  });
  net.set_mode(mode);
  return acc;
}

std::vector<std::pair<std::string, Tensor>> int8_weight_tensors(const QNetwork& net) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const QWeight& w : net.weights()) {
    Tensor m = Tensor::zeros(w.value.shape), e = Tensor::zeros(Shape{1});
    for (int64_t i = 0; i < m.numel(); ++i) m[i] = w.value.data[i];
    e[0] = static_cast<float>(w.value.exp);
    out.emplace_back("qweight/" + std::to_string(w.layer), m);
    out.emplace_back("qexp/" + std::to_string(w.layer), e);
  }
  return out;
}

void restore_int8_weights(const Checkpoint& ckpt, QNetwork& net) {
  for (QWeight& w : net.weights()) {
    const std::string layer = std::to_string(w.layer);
    Tensor m = ckpt.file.get("qweight/" + layer, w.value.shape, ckpt.path);
    Tensor e = ckpt.file.get("qexp/" + layer, Shape{1}, ckpt.path);
    for (int64_t i = 0; i < m.numel(); ++i)
      if (!(std::fabs(m[i]) <= 127) || m[i] != std::nearbyint(m[i]))
        throw InputError(ckpt.path + ": tensor qweight/" + layer +
                         " holds a value that is not an int8 mantissa (|m| <= 127)");
    for (int64_t i = 0; i < m.numel(); ++i) w.value.data[i] = static_cast<int8_t>(m[i]);
    if (!(std::fabs(e[0]) <= 64))
      throw InputError(ckpt.path + ": tensor qexp/" + layer + " is not an exponent in [-64, 64]");
    w.value.exp = static_cast<int>(e[0]);
  }
}

void quantize_weights_from(const Checkpoint& ckpt, QNetwork& net) {
  for (QWeight& w : net.weights()) {
    const std::string name =
        "param/" + std::to_string(w.layer) + "." + net.desc().layer(w.layer).param_specs()[0].name;
    const Tensor t = ckpt.file.get(name, w.value.shape, ckpt.path);
    w.value.exp = quantize(t.data(), t.numel(), w.value.data);
  }
}

int frozen_layers(const Network& net, const TrainConfig& cfg) {
  const auto n = static_cast<int>(net.param_layers().size());
  if (cfg.train_layers > n)
    throw InputError("--train-layers " + std::to_string(cfg.train_layers) +
                     " is out of range: the model has " + std::to_string(n) +
                     " layers with parameters");
  return cfg.train_layers == 0 ? 0 : net.head_start(cfg.train_layers);
}

// Perturbation lanes of an f32 run: cfg.zo_lanes where it has a trained body to perturb.
static int lanes(const Network& net, const TrainConfig& cfg, int head_start) {
  return frozen_layers(net, cfg) < head_start ? cfg.zo_lanes : 1;
}

MemoryPlan training_plan(const Network& net, const TrainConfig& cfg, int head_start) {
  if (cfg.precision == "int8") {
    MemoryPlan plan = QNetwork(net).plan(cfg.batch, head_start, cfg.threads);
    plan.add(-1, "labels", Bucket::kInput, cfg.batch);
    return plan;
  }
  const int frozen = frozen_layers(net, cfg);
  MemoryPlan plan =
      net.plan(cfg.batch, head_start, cfg.threads, frozen, lanes(net, cfg, head_start));
  // Momentum buffers: the SGD ones of the head, then the ZO ones of the trained body.
  for (bool head : {true, false}) {
    if ((head ? cfg.momentum : cfg.zo_momentum) <= 0) continue;
    for (int i = frozen; i < net.num_layers(); ++i)
      if ((i >= head_start) == head)
        for (const ParamSpec& ps : net.layer(i).param_specs())
          plan.add(i, net.layer(i).describe() + " " + ps.name + " momentum", Bucket::kOptimizer,
                   ps.shape.numel() * sizeof(float));
  }
  plan.add(-1, "labels", Bucket::kInput, cfg.batch);
  return plan;
}

int choose_head(const Network& net, const TrainConfig& cfg) {
  if (cfg.method == "bp") return frozen_layers(net, cfg);
  if (cfg.method == "zo") return net.num_layers();
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

Trainer::Trainer(const TrainConfig& cfg)
    : Trainer(cfg, RunData::load(validated(cfg).data,
                                 {cfg.val_size, cfg.train_limit, cfg.seed, cfg.test_limit},
                                 cfg.points)) {}

Trainer::Trainer(const TrainConfig& cfg, RunData data)
    : cfg_(validated(cfg)),
      data_(std::move(data)),
      spec_(model_by_name(cfg.model, data_.item_shape(), data_.num_classes())),
      pool_(cfg.threads) {
  net_ = std::make_unique<Network>(spec_.item_shape, spec_.layers);
  frozen_ = frozen_layers(*net_, cfg_);
  head_ = choose_head(*net_, cfg_);
  plan_ = training_plan(*net_, cfg_, head_);
  if (cfg_.precision == "int8") {
    qnet_ = std::make_unique<QNetwork>(*net_);
    qnet_->allocate(arena_, cfg_.batch, head_, cfg_.seed, &pool_);
    bp_bits_ = parse_bp_bits(cfg_.bp_bits);
  } else {
    net_->allocate(arena_, cfg_.batch, head_, &pool_, cfg_.seed, frozen_,
                   lanes(*net_, cfg_, head_));
    sgd_ = std::make_unique<Sgd>(*net_, arena_, cfg_.momentum, cfg_.weight_decay);
    for (const ParamRef& p : net_->params())
      if (p.layer >= frozen_ && p.layer < head_ && cfg_.zo_momentum > 0 && cfg_.precision == "f32")
        zo_momentum_.push_back(arena_.alloc(Bucket::kOptimizer, p.value.shape()));
  }
  labels_ = static_cast<uint8_t*>(arena_.alloc_bytes(Bucket::kInput, cfg_.batch));
  if (cfg_.cache_features && data_.is_point_cloud())
    throw InputError("--cache-features 1 needs image data: " + cfg_.data +
                     " holds point clouds, sampled anew for every pass");
  if (!cfg_.init.empty()) load_init();
  if (cfg_.precision == "int8-npu") {
    npu_ = std::make_unique<NpuNetwork>(*net_, cfg_.batch, &pool_);
    if (cfg_.cache_features)
      npu_features_.resize(static_cast<size_t>(cfg_.batch * npu_->prefix_numel(frozen_)));
    calibrate_npu();
    if (cfg_.zo_momentum > 0)
      for (const NpuParam* p : trained_npu_params()) {
        zo_momentum_.push_back(arena_.alloc(Bucket::kOptimizer, p->master.shape()));
        zo_momentum_.back().fill(0.0f);
      }
  }
  sparsity_ = parse_sparsity(cfg_.sparsity);
  distribution_ = zo::parse_distribution(cfg_.perturbation);
  project_ = {zo::parse_estimator(cfg_.estimator), static_cast<float>(cfg_.eps),
              static_cast<float>(cfg_.grad_clip), cfg_.zo_update == "sign"};
}

int Trainer::q() const {
  if (cfg_.q_schedule == "fixed") return cfg_.q;
  return state_.q_scheduler.q ? state_.q_scheduler.q : cfg_.q0;
}

int Trainer::bp_layers() const {
  int k = 0;
  for (int i : net_->param_layers()) k += i >= head_;
  return k;
}

std::vector<NpuParam*> Trainer::trained_npu_params() const {
  std::vector<NpuParam*> trained;
  for (NpuParam& p : npu_->params())
    if (p.layer >= frozen_) trained.push_back(&p);
  return trained;
}

std::vector<std::pair<std::string, Tensor>> Trainer::zo_state() const {
  if (qnet_) return int8_weight_tensors(*qnet_);
  std::vector<std::pair<std::string, Tensor>> state;
  if (npu_) {
    size_t m = 0;
    for (const NpuParam* p : trained_npu_params()) {
      const std::string id = std::to_string(p->param_index);
      state.emplace_back("npu_master/" + id, p->master);
      if (!zo_momentum_.empty()) state.emplace_back("zo_momentum/npu" + id, zo_momentum_[m++]);
    }
    return state;
  }
  for (size_t i = 0; i < zo_momentum_.size(); ++i)
    state.emplace_back("zo_momentum/" + net_->params()[i].name, zo_momentum_[i]);
  return state;
}

double Trainer::pass(int64_t rows, const ParamTransform* body, double head_weight,
                     int64_t* correct) {
  // Every pass of a step drops the same units; the step's first pass moves batch norm's
  // running statistics.
  net_->set_mode({true, step_key(cfg_, state_), stats_pass_});
  stats_pass_ = false;
  return finish_pass(net_->forward_trained(rows, body), head_weight, correct);
}

void Trainer::perturbed_passes(int64_t rows, const std::vector<ParamTransform>& body,
                               double head_weight, int64_t* correct, double* loss) {
  const size_t n = body.size(), lanes = static_cast<size_t>(net_->lanes());
  for (size_t c = 0; c < n; c += lanes) {
    const size_t m = std::min(lanes, n - c);
    if (m == 1) {
      loss[c] = pass(rows, &body[c], head_weight, c == 0 ? correct : nullptr);
      continue;
    }
    std::vector<const ParamTransform*> group;
    for (size_t k = 0; k < m; ++k) group.push_back(&body[c + k]);
    // Lane 0's body and the first head take the statistics pass, if the step is at it.
    net_->set_mode({true, step_key(cfg_, state_), stats_pass_});
    const std::vector<Tensor> outputs = net_->forward_lanes(rows, group);
    for (size_t k = 0; k < m; ++k) {
      loss[c + k] =
          finish_pass(net_->forward_head(outputs[k]), head_weight, c + k == 0 ? correct : nullptr);
      stats_pass_ = false;
      net_->set_mode({true, step_key(cfg_, state_), false});
    }
  }
}

double Trainer::finish_pass(const Tensor& logits, double head_weight, int64_t* correct) {
  ++state_.forward_passes;
  if (head_weight <= 0) return softmax_cross_entropy(logits, labels_, nullptr, correct);
  Tensor dlogits = net_->logits_grad(logits.shape()[0]);
  double loss = softmax_cross_entropy(logits, labels_, &dlogits, correct);
  if (head_weight != 1.0)
    for (int64_t i = 0; i < dlogits.numel(); ++i) dlogits[i] *= static_cast<float>(head_weight);
  net_->backward(dlogits);
  ++state_.backward_passes;
  return loss;
}

std::pair<double, double> Trainer::learning_rates(int epoch) const {
  const double decay = std::pow(cfg_.lr_decay, epoch / cfg_.lr_step);
  return {cfg_.lr * decay, cfg_.zo_lr * decay};
}

int64_t Trainer::fill_input(const BatchSource& batches, int64_t index) {
  if (!qnet_) return batches.fill(index, net_->input(cfg_.batch).data(), labels_);
  qnet_->input().exp = data_.int8_exp();
  return batches.fill(index, qnet_->input().data, labels_);
}

double Trainer::evaluate_on(Split split) {
  if (data_.size(split) == 0) return 0.0;
  auto batches = source(split, false);
  const bool features = features_[static_cast<int>(split)] != nullptr;
  if (npu_) return evaluate_npu(*batches, features);
  return qnet_ ? evaluate(*qnet_, *batches, data_.int8_exp()) : evaluate(*net_, *batches, features);
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
    auto load = [&](int64_t b, uint8_t* labels) {
      const int64_t rows = images->fill(b, net_->input(cfg_.batch).data(), labels);
      if (npu_) {
        npu_->set_input(net_->input(rows).data(), rows);
        npu_->forward_prefix(rows, frozen_);
      } else {
        net_->forward_frozen(rows);
      }
      return rows;
    };
    features_[static_cast<int>(split)] = std::make_shared<const FeatureSet>(
        npu_
            ? extract_features(*images, n, npu_->prefix_numel(frozen_),
                               FrozenRun<int8_t>([&](int64_t b, uint8_t* labels) {
                                 const int64_t rows = load(b, labels);
                                 return std::pair{rows, npu_->prefix_output(frozen_)};
                               }))
            : extract_features(
                  *images, n, net_->input_shape(frozen_, 1).numel(),
                  FrozenRun<float>([&](int64_t b, uint8_t* labels) {
                    const int64_t rows = load(b, labels);
                    return std::pair<int64_t, const float*>{rows, net_->frozen_output(rows).data()};
                  })));
  }
}

int64_t Trainer::fill_features(const BatchSource& features, int64_t index) {
  features_filled_ = true;
  if (!npu_) return features.fill(index, net_->frozen_output(cfg_.batch).data(), labels_);
  const int64_t rows = features.fill(index, npu_features_.data(), labels_);
  npu_->set_prefix_output(frozen_, npu_features_.data(), rows);
  return rows;
}

namespace {

// The f32 softmax cross-entropy of int8 logits, summed over the rows, as a fixed-point integer
// (2^-32 nats): the float loss of the INT8 variant and of the sign-agreement diagnostic. `z` is
// scratch for the dequantized logits.
int64_t float_loss(const QTensor& logits, const uint8_t* labels, std::vector<float>& z) {
  const int64_t rows = logits.shape[0], classes = logits.shape[1];
  z.resize(static_cast<size_t>(rows * classes));
  dequantize(logits.data, rows * classes, logits.exp, z.data());
  const double mean =
      softmax_cross_entropy(Tensor(z.data(), logits.shape), labels, nullptr, nullptr);
  return std::llround(mean * static_cast<double>(rows) * 4294967296.0);
}

}  // namespace

Trainer::StepResult Trainer::int8_step(int64_t rows, int epoch) {
  // The schedules' values, turned into the step's integers once per epoch.
  if (epoch != int8_epoch_) {
    int8_epoch_ = epoch;
    int8_cfg_.seed = cfg_.seed;
    int8_cfg_.eps = cfg_.int_eps;
    int8_cfg_.zero_threshold = zo::zero_threshold(schedule_at(sparsity_, epoch));
    int8_cfg_.bp_bits = static_cast<int>(schedule_at(bp_bits_, epoch));
    int8_cfg_.zo_bits = cfg_.zo_bits;
    int8_cfg_.loss_frac_bits = cfg_.loss_frac_bits;
  }
  int8::StepConfig c = int8_cfg_;
  c.step = state_.steps;
  c.q = q();
  qnet_->set_mode({true, step_key(cfg_, state_), false});
  const int8::PassLoss exact = [this](const QTensor& logits, const uint8_t* labels) {
    return float_loss(logits, labels, logits_f32_);
  };
  const int8::StepResult s = head_ == 0 ? int8::bp_step(*qnet_, rows, labels_, c)
                                        : int8::zo_step(*qnet_, rows, labels_, c,
                                                        cfg_.zo_sign == "float" ? &exact : nullptr,
                                                        cfg_.sign_agreement ? &exact : nullptr);
  state_.forward_passes += head_ == 0 ? 1 : 2 * c.q;
  state_.backward_passes += head_ == 0 ? 1 : (head_ < net_->num_layers() ? 2 * c.q : 0);
  StepResult r;
  // Reporting: the integer loss in nats (2^-kGradFracBits bits, times ln 2), mean over rows.
  r.loss = static_cast<double>(s.loss) * 0.69314718055994531 /
           static_cast<double>(int64_t{1} << int8::kGradFracBits) / static_cast<double>(rows);
  r.correct = s.correct;
  r.signs = s.signs;
  r.zero_signs = s.zero_signs;
  r.agree = s.agree;
  return r;
}

Trainer::StepResult Trainer::step(int64_t rows, int epoch) {
  const auto [lr, zo_lr] = learning_rates(epoch);
  stats_pass_ = true;
  if (!qnet_ && !npu_ && !features_filled_) net_->forward_frozen(rows);
  StepResult r = qnet_              ? int8_step(rows, epoch)
                 : npu_             ? npu_step(rows, zo_lr, epoch)
                 : head_ == frozen_ ? bp_step(rows, lr)
                                    : zo_step(rows, lr, zo_lr, epoch);
  features_filled_ = false;
  ++state_.steps;
  return r;
}

void Trainer::calibrate_npu() {
  auto batches = data_.batches(Split::kTrain, cfg_.batch, false, 0);
  const int64_t n = std::min<int64_t>(cfg_.npu_calibration_batches, batches->batches_per_epoch());
  npu_->reset_observations();
  for (int64_t b = 0; b < n; ++b) {
    const int64_t rows = batches->fill(b, net_->input(cfg_.batch).data(), nullptr);
    npu_->float_forward(net_->input(rows).data(), rows, true);
  }
  npu_->calibrate();
}

Trainer::StepResult Trainer::npu_step(int64_t rows, double zo_lr, int epoch) {
  const zo::PerturbationSpec spec{zo::Distribution::kRademacher,
                                  static_cast<float>(schedule_at(sparsity_, epoch))};
  if (!features_filled_) {
    npu_->set_input(net_->input(rows).data(), rows);
    npu_->forward_prefix(rows, frozen_);
  }
  StepResult r;
  zo::Estimate est;
  double sum = 0;
  const int q = this->q();
  for (int s = 0; s < q; ++s) {
    const uint64_t seed = zo::sample_seed(cfg_.seed, state_.steps, s);
    double loss[2];
    for (int k = 0; k < 2; ++k) {
      const NpuNetwork::Perturb p{seed, k == 0 ? 1 : -1, spec.p_zero, frozen_};
      int64_t* correct = s == 0 && k == 0 ? &r.correct : nullptr;
      loss[k] = softmax_cross_entropy(npu_->forward(rows, frozen_, &p), labels_, nullptr, correct);
    }
    state_.forward_passes += 2;
    sum += loss[0] + loss[1];
    est.seeds.push_back(seed);
    // The loss change per integer step along z; dividing by S_w (in the learning rate below)
    // makes it the float directional derivative.
    est.g.push_back(static_cast<float>(0.5 * (loss[0] - loss[1])));
  }
  r.loss = sum / (2 * q);
  size_t m = 0;
  for (NpuParam* p : trained_npu_params()) {
    Tensor* mom = zo_momentum_.empty() ? nullptr : &zo_momentum_[m++];
    zo::apply_update(spec, est, static_cast<uint32_t>(p->param_index),
                     static_cast<float>(zo_lr) / p->scale, p->master, mom,
                     static_cast<float>(cfg_.zo_momentum), &pool_);
    npu_->requantize(*p);
  }
  return r;
}

double Trainer::evaluate_npu(BatchSource& batches, bool features) {
  return accuracy(batches, cfg_.batch, [&](int64_t b, uint8_t* labels) {
    int64_t rows = 0;
    if (features) {
      rows = batches.fill(b, npu_features_.data(), labels);
      npu_->set_prefix_output(frozen_, npu_features_.data(), rows);
    } else {
      rows = batches.fill(b, net_->input(cfg_.batch).data(), labels);
      npu_->set_input(net_->input(rows).data(), rows);
    }
    int64_t c = 0;
    softmax_cross_entropy(npu_->forward(rows, features ? frozen_ : 0, nullptr), labels, nullptr,
                          &c);
    return std::pair{rows, c};
  });
}

Trainer::StepResult Trainer::bp_step(int64_t rows, double lr) {
  StepResult r;
  net_->zero_grad();
  r.loss = pass(rows, nullptr, 1.0, &r.correct);
  sgd_->step(lr);
  return r;
}

Trainer::StepResult Trainer::zo_step(int64_t rows, double lr, double zo_lr, int epoch) {
  const bool has_head = head_ < net_->num_layers();
  const bool forward_diff = project_.estimator == zo::Estimator::kForward;
  const bool clean_head = cfg_.head_grad == "clean" || forward_diff;
  // Forward differences need the clean loss; a head trained from a clean pass needs its backward.
  const bool clean_pass = forward_diff || (has_head && clean_head);
  const zo::PerturbationSpec spec{distribution_, static_cast<float>(schedule_at(sparsity_, epoch))};
  const int q = this->q();
  StepResult r;
  if (has_head) net_->zero_grad();
  double clean = 0;
  if (clean_pass) clean = r.loss = pass(rows, nullptr, has_head ? 1.0 : 0.0, &r.correct);
  // With the head trained from the perturbed passes, each of them weighs 1/(2q).
  const double head_weight = has_head && !clean_head ? 0.5 / q : 0.0;
  // The perturbed passes in order: θ+εz_s, then (SPSA) θ−εz_s, for each sample s.
  zo::Estimate est;
  std::vector<ParamTransform> body;
  for (int s = 0; s < q; ++s) {
    const uint64_t seed = zo::sample_seed(cfg_.seed, state_.steps, s);
    est.seeds.push_back(seed);
    for (double sign : {1.0, -1.0}) {
      if (sign < 0 && forward_diff) break;
      const auto scale = static_cast<float>(sign * cfg_.eps);
      body.push_back([&spec, seed, scale](const ParamRef& p, float* dst, int64_t b, int64_t e) {
        zo::add_perturbation(spec, seed, static_cast<uint32_t>(p.index), scale, p.value.data(), dst,
                             b, e);
      });
    }
  }
  std::vector<double> loss(body.size());
  perturbed_passes(rows, body, head_weight, clean_pass ? nullptr : &r.correct, loss.data());
  const int per_sample = forward_diff ? 1 : 2;
  double perturbed_sum = 0;
  for (int s = 0; s < q; ++s) {
    const double lp = loss[per_sample * s];
    const double other = forward_diff ? clean : loss[per_sample * s + 1];
    perturbed_sum += forward_diff ? lp : 0.5 * (lp + other);
    est.g.push_back(zo::project(project_, lp, other));
  }
  if (!clean_pass) r.loss = perturbed_sum / q;
  size_t body_param = 0;
  for (ParamRef& p : net_->params())
    if (p.layer >= frozen_ && p.layer < head_) {
      Tensor* m = zo_momentum_.empty() ? nullptr : &zo_momentum_[body_param++];
      zo::apply_update(spec, est, static_cast<uint32_t>(p.index), static_cast<float>(zo_lr),
                       p.value, m, static_cast<float>(cfg_.zo_momentum), &pool_);
    }
  if (has_head) sgd_->step(lr);
  return r;
}

void Trainer::load_init() {
  const Checkpoint ckpt = read_checkpoint(cfg_.init);
  if (ckpt.meta.item_shape != spec_.item_shape || ckpt.meta.num_classes != spec_.num_classes ||
      ckpt.meta.config.model != cfg_.model)
    throw InputError("--init " + cfg_.init + ": checkpoint is " + ckpt.meta.config.model +
                     " for inputs " + ckpt.meta.item_shape.str() + " with " +
                     std::to_string(ckpt.meta.num_classes) + " classes, this run is " + cfg_.model +
                     " for " + spec_.item_shape.str() + " with " +
                     std::to_string(spec_.num_classes));
  const bool int8_ckpt = ckpt.meta.config.precision == "int8";
  if (!qnet_ && int8_ckpt)
    throw InputError("--init " + cfg_.init +
                     ": an int8 checkpoint cannot initialize an f32 run (use --precision int8)");
  if (!qnet_)
    restore_params(ckpt.file, ckpt.path, *net_);
  else if (int8_ckpt)
    restore_int8_weights(ckpt, *qnet_);
  else
    quantize_weights_from(ckpt, *qnet_);
}

void Trainer::resume(const Checkpoint& ckpt) {
  if (ckpt.meta.item_shape != spec_.item_shape || ckpt.meta.num_classes != spec_.num_classes)
    throw InputError(ckpt.path + ": checkpoint is for inputs " + ckpt.meta.item_shape.str() +
                     " with " + std::to_string(ckpt.meta.num_classes) + " classes, the data has " +
                     spec_.item_shape.str() + " with " + std::to_string(spec_.num_classes));
  if (npu_ && cfg_.npu_recalibrate)
    throw InputError(ckpt.path +
                     ": an int8-npu run with npu_recalibrate 1 cannot resume (its recalibrated "
                     "scales are not in the checkpoint)");
  if (qnet_)
    restore_int8_weights(ckpt, *qnet_);
  else
    restore_checkpoint(ckpt, net_.get(), sgd_.get(), zo_state());
  if (npu_)
    for (const NpuParam* p : trained_npu_params()) npu_->requantize(*p);
  state_ = ckpt.meta.state;
  truncate_metrics(cfg_.out + "/metrics.jsonl", state_.epochs_done);
}

void Trainer::run(const TrainCallbacks& cb) {
  std::filesystem::create_directories(cfg_.out);
  const std::string metrics_path = cfg_.out + "/metrics.jsonl";
  if (state_.epochs_done == 0) std::ofstream(metrics_path, std::ios::trunc);
  cache_features();
  std::unique_ptr<BatchSource> batcher = source(Split::kTrain, true);
  const bool cached = features_[0] != nullptr;
  q_scheduler_ = {cfg_.q0, cfg_.q_alpha, cfg_.q_patience, cfg_.q_tau, cfg_.q_smoothing, cfg_.q_max};
  if (cfg_.q_schedule == "budget")
    q_scheduler_.q_max = q_max_for_budget(cfg_.q_budget, cfg_.q0, cfg_.q_alpha,
                                          batcher->batches_per_epoch(), cfg_.epochs, 2);
  for (int epoch = state_.epochs_done; epoch < cfg_.epochs; ++epoch) {
    const auto [lr, zo_lr] = learning_rates(epoch);
    auto t0 = std::chrono::steady_clock::now();
    batcher->start_epoch(epoch);
    double loss_sum = 0;
    int64_t correct = 0, seen = 0, signs = 0, zero_signs = 0, agree = 0;
    const int64_t batches = batcher->batches_per_epoch();
    for (int64_t b = 0; b < batches; ++b) {
      const int64_t rows = cached ? fill_features(*batcher, b) : fill_input(*batcher, b);
      StepResult step = this->step(rows, epoch);
      signs += step.signs;
      zero_signs += step.zero_signs;
      agree += step.agree;
      const double loss = step.loss;
      loss_sum += loss * rows;
      correct += step.correct;
      seen += rows;
      if (!std::isfinite(loss))
        throw RuntimeError("training diverged at epoch " + std::to_string(epoch + 1) + " batch " +
                           std::to_string(b) + " (loss is " + std::to_string(loss) +
                           "); lower --lr");
      if (cb.on_batch) cb.on_batch(epoch + 1, b + 1, batches, loss_sum / seen);
    }
    state_.seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    EpochReport r;
    r.epoch = epoch + 1;
    r.epochs = cfg_.epochs;
    r.lr = lr;
    r.train_loss = loss_sum / seen;
    r.train_acc = static_cast<double>(correct) / seen;
    r.val_acc = evaluate_on(Split::kVal);
    r.test_acc = evaluate_on(Split::kTest);
    r.seconds = state_.seconds;
    r.forward_passes = state_.forward_passes;
    r.backward_passes = state_.backward_passes;
    r.arena_bytes = arena_.total_bytes();
    r.peak_rss_bytes = peak_rss_bytes();
    const int epoch_q = q();
    if (cfg_.q_schedule != "fixed") next_q(q_scheduler_, state_.q_scheduler, r.val_acc);
    // A grown q marks a plateau: with npu_recalibrate, the scales are fitted to the weights now.
    const bool recalibrate = npu_ && cfg_.npu_recalibrate && q() > epoch_q;
    if (recalibrate) calibrate_npu();
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
    if (qnet_) {
      line["bp_bits"] = schedule_at(bp_bits_, epoch);
      if (signs > 0) line["zero_sign_rate"] = static_cast<double>(zero_signs) / signs;
      if (cfg_.sign_agreement && signs > 0)
        line["sign_agreement"] = static_cast<double>(agree) / signs;
    }
    std::ofstream(metrics_path, std::ios::app) << line.dump() << "\n";
    save_checkpoint(cfg_.out + "/checkpoint.bin",
                    {cfg_, spec_.item_shape, spec_.num_classes, data_.normalization(), state_},
                    qnet_ ? nullptr : net_.get(), sgd_.get(), zo_state());
    if (cb.on_epoch) cb.on_epoch(r);
  }
  write_summary();
}

int64_t Trainer::num_parameters() const {
  if (!qnet_) return net_->num_param_elements();
  int64_t n = 0;
  for (const QWeight& w : qnet_->weights()) n += w.value.numel();
  return n;
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
                  {"npu_bytes", npu_ ? npu_->bytes() : 0},
                  {"q_max", cfg_.q_schedule == "fixed" ? cfg_.q : q_scheduler_.q_max},
                  {"config", json::parse(config_to_json(cfg_))}};
  std::string tmp = cfg_.out + "/summary.json.tmp";
  std::ofstream(tmp, std::ios::trunc) << summary.dump(2) << "\n";
  std::filesystem::rename(tmp, cfg_.out + "/summary.json");
}

}  // namespace zotrain
