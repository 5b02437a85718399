// The NITI int8 engine: integer-only training of the QNetwork (int8_step.h), for every method.
#include <cmath>

#include "engine.h"
#include "nn/int8/int_loss.h"
#include "nn/loss.h"
#include "step_split.h"
#include "train/int8_step.h"
#include "zo/ternary.h"
#include "zotrain/core/error.h"
#include "zotrain/nn/int8/qnetwork.h"

namespace zotrain {

namespace {

// The weights of an int8 network as checkpoint tensors ("qweight/<layer>" holding the mantissas,
// "qexp/<layer>" the exponent) and its layers' integer state ("qstate/<layer>", values below
// 2^24, which floats hold exactly).
std::vector<std::pair<std::string, Tensor>> int8_weight_tensors(const QNetwork& net) {
  std::vector<std::pair<std::string, Tensor>> out;
  for (const QState& st : net.states()) {
    Tensor t = Tensor::zeros(Shape{st.elems});
    for (int64_t i = 0; i < st.elems; ++i) t[i] = static_cast<float>(st.data[i]);
    out.emplace_back("qstate/" + std::to_string(st.layer), t);
  }
  for (const QWeight& w : net.weights()) {
    Tensor m = Tensor::zeros(w.value.shape), e = Tensor::zeros(Shape{1});
    for (int64_t i = 0; i < m.numel(); ++i) m[i] = w.value.data[i];
    e[0] = static_cast<float>(w.value.exp);
    out.emplace_back("qweight/" + std::to_string(w.layer), m);
    out.emplace_back("qexp/" + std::to_string(w.layer), e);
  }
  return out;
}

// int8_weight_tensors back into the network; InputError naming the file for a missing tensor or
// a mantissa out of range.
void restore_int8_weights(const Checkpoint& ckpt, QNetwork& net) {
  for (const QState& st : net.states()) {
    const std::string name = "qstate/" + std::to_string(st.layer);
    const Tensor t = ckpt.file.get(name, Shape{st.elems}, ckpt.path);
    for (int64_t i = 0; i < st.elems; ++i)
      if (!(std::fabs(t[i]) < 16777216.0f) || t[i] != std::nearbyint(t[i]))
        throw InputError(ckpt.path + ": tensor " + name +
                         " holds a value that is not an integer below 2^24");
    std::vector<int32_t> values(t.data(), t.data() + st.elems);
    if (!net.layer(st.layer).valid_state(values.data()))
      throw InputError(ckpt.path + ": tensor " + name + " is not a state of layer " +
                       std::to_string(st.layer) + " (" + net.desc().layer(st.layer).describe() +
                       ")");
    std::copy(values.begin(), values.end(), st.data);
  }
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

// The weights of an f32 checkpoint quantized into the network (biases are dropped: the integer
// layers have none).
void quantize_weights_from(const Checkpoint& ckpt, QNetwork& net) {
  for (QWeight& w : net.weights()) {
    const std::string name =
        "param/" + std::to_string(w.layer) + "." + net.desc().layer(w.layer).param_specs()[0].name;
    const Tensor t = ckpt.file.get(name, w.value.shape, ckpt.path);
    w.value.exp = quantize(t.data(), t.numel(), w.value.data);
  }
}

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

double evaluate_int8(QNetwork& net, BatchSource& batches, int input_exp) {
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

class Int8Engine : public Engine {
 public:
  explicit Int8Engine(const EngineArgs& a)
      : cfg_(a.cfg),
        data_(a.data),
        qnet_(a.net),
        head_(a.head),
        split_(cfg_.distributed, dist::world()) {
    qnet_.allocate(a.arena, cfg_.batch, head_, cfg_.seed, &a.pool);
    qnet_.set_fixed_norm(cfg_.int_bn_divisor == BnDivisor::kFixed);
    if (split_.by_rows()) {
      check_rows_apart(a.net, 0);
      if (cfg_.zo_sign == ZoSign::kFloat || cfg_.sign_agreement)
        throw InputError(
            "distributed = data: zo_sign float and sign_agreement need the float loss of the "
            "whole batch on one rank; use distributed = directions");
    }
    bp_bits_ = parse_bp_bits(cfg_.bp_bits);
    if (!a.init) return;
    if (a.init->meta.config.precision == Precision::kInt8)
      restore_int8_weights(*a.init, qnet_);
    else
      quantize_weights_from(*a.init, qnet_);
  }

  int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels, bool) override {
    qnet_.input().exp = data_.int8_exp();
    // Data mode: only this rank's rows, from the first row, where the passes read them (no layer
    // with state runs in data mode, so end_epoch's batch-norm statistics never get a share).
    return batches.fill(index, qnet_.input().data, labels, split_.share());
  }

  StepResult step(const StepInput& in) override {
    // The schedules' values, turned into the step's integers once per epoch.
    if (in.epoch != epoch_) {
      epoch_ = in.epoch;
      step_cfg_ = int8_step_config(cfg_, in.epoch);
    }
    int8::StepConfig c = step_cfg_;
    c.step = in.step;
    c.q = in.q;
    c.buffers = &buffers_;
    if (split_.on()) c.world = &split_.world(), c.by_samples = split_.by_samples();
    // Data mode: fill() loaded only this rank's rows.
    if (split_.by_rows() && in.rows < split_.ranks())  // every rank sees it
      throw InputError("distributed = data with int8: a batch of " + std::to_string(in.rows) +
                       " rows on " + std::to_string(split_.ranks()) +
                       " ranks leaves a rank without rows; use fewer ranks, another batch size "
                       "or distributed = directions");
    const RowRange mine = split_.rows(in.rows);
    const uint8_t* labels = in.labels + mine.begin;
    // The step's passes on rows spread over the ranks share each tensor's range (evaluation
    // runs whole batches on each rank).
    if (split_.by_rows())
      qnet_.set_all_ranks_range([](int range) { return dist::world().max(range); });
    // The step's first pass moves batch norm's running statistics (int8_step.cpp).
    qnet_.set_mode({true, step_key(cfg_, in.step), true});
    const int8::PassLoss exact = [this](const QTensor& logits, const uint8_t* labels) {
      return float_loss(logits, labels, logits_f32_);
    };
    const bool zo = head_ > 0, has_head = head_ < qnet_.num_layers();
    const int8::StepResult s = zo ? int8::zo_step(qnet_, mine.size(), labels, c,
                                                  cfg_.zo_sign == ZoSign::kFloat ? &exact : nullptr,
                                                  cfg_.sign_agreement ? &exact : nullptr)
                                  : int8::bp_step(qnet_, in.rows, in.labels, c);
    qnet_.set_all_ranks_range(nullptr);
    // By samples: batch norm's statistics moved on the rank that ran the step's first pass.
    if (split_.by_samples())
      for (const QState& st : qnet_.states())
        split_.world().broadcast(st.data, static_cast<size_t>(st.elems) * sizeof(int32_t), 0);
    StepResult r;
    const bool clean = has_head && c.clean_head;
    r.forward_passes = zo ? 2 * c.q + (clean ? 1 : 0) : 1;
    r.backward_passes = !zo ? 1 : (has_head ? (clean ? 1 : 2 * c.q) : 0);
    // Reporting: the integer loss in nats (2^-kGradFracBits bits, times ln 2), mean over rows.
    r.loss = static_cast<double>(s.loss) * 0.69314718055994531 /
             static_cast<double>(int64_t{1} << int8::kGradFracBits) / static_cast<double>(in.rows);
    r.correct = s.correct;
    r.signs = s.signs;
    r.zero_signs = s.zero_signs;
    r.agree = s.agree;
    return r;
  }

  // Precise batch norm: the statistics of the weights that are evaluated, averaged over the
  // first batches of this epoch's training order (augmented as in training), not the
  // exponential average of passes whose weights moved at every step.
  int64_t end_epoch(int epoch) override {
    if (qnet_.states().empty() || cfg_.bn_stats_batches == 0) return 0;
    auto batches = data_.batches(Split::kTrain, cfg_.batch, true, cfg_.seed);
    batches->start_epoch(epoch);
    const int64_t n = std::min(cfg_.bn_stats_batches, batches->batches_per_epoch());
    qnet_.set_mode({true, step_key(cfg_, -1 - epoch), false});
    qnet_.average_stats(n, [&](int64_t b) { return fill(*batches, b, labels_.data(), false); });
    return n;
  }

  double evaluate(BatchSource& batches, bool) override {
    return evaluate_int8(qnet_, batches, data_.int8_exp());
  }

  FeatureSet extract_features(BatchSource&, int64_t) override {
    ZT_ASSERT(false && "validate() refuses cache_features for int8");
    return {};
  }

  void forward(int64_t rows) override { qnet_.forward(rows); }

  int64_t predict(const BatchSource& batches, int64_t index, float* logits) override {
    const PassMode mode = qnet_.mode();
    qnet_.set_mode({false, 0, false});
    qnet_.input().exp = data_.int8_exp();
    const int64_t rows = batches.fill(index, qnet_.input().data, nullptr);
    const QTensor out = qnet_.forward(rows);
    for (int64_t i = 0; i < out.numel(); ++i) logits[i] = std::ldexp(out.data[i], out.exp);
    qnet_.set_mode(mode);
    return rows;
  }

  // The weights' mantissas; the integer batch norms' state is not a parameter.
  std::vector<ParamView> parameters() override {
    std::vector<ParamView> views;
    for (QWeight& w : qnet_.weights())
      views.push_back({std::to_string(w.layer) + ".weight", ParamView::Type::kS8, w.value.data,
                       w.value.shape, w.value.exp});
    return views;
  }

  CheckpointParts checkpoint() override { return {nullptr, nullptr, int8_weight_tensors(qnet_)}; }

  void resume(const Checkpoint& ckpt) override { restore_int8_weights(ckpt, qnet_); }

  void add_epoch_metrics(nlohmann::json& line, int epoch, const StepResult& sums) const override {
    line["bp_bits"] = schedule_at(bp_bits_, epoch);
    if (sums.signs > 0) line["zero_sign_rate"] = static_cast<double>(sums.zero_signs) / sums.signs;
    if (cfg_.sign_agreement && sums.signs > 0)
      line["sign_agreement"] = static_cast<double>(sums.agree) / sums.signs;
  }

  int64_t num_parameters() const override {
    int64_t n = 0;
    for (const QWeight& w : qnet_.weights()) n += w.value.numel();
    return n;
  }

  QNetwork* int8_network() override { return &qnet_; }

 private:
  const TrainConfig& cfg_;
  const RunData& data_;
  QNetwork qnet_;
  int head_;
  StepSplit split_;
  std::vector<std::pair<int, double>> bp_bits_;
  int8::StepConfig step_cfg_;  // of epoch epoch_ (the step number aside)
  int8::StepBuffers buffers_;
  int epoch_ = -1;
  std::vector<float> logits_f32_;  // INT8's float loss and the sign diagnostic (not in the plan)
  std::vector<uint8_t> labels_ = std::vector<uint8_t>(static_cast<size_t>(cfg_.batch));
};

}  // namespace

int8::StepConfig int8_step_config(const TrainConfig& cfg, int epoch) {
  int8::StepConfig c;
  c.seed = cfg.seed;
  c.eps = cfg.int_eps;
  c.clean_head = cfg.head_grad == HeadGrad::kClean;
  c.zero_threshold = zo::zero_threshold(schedule_at(parse_sparsity(cfg.sparsity), epoch));
  c.move_threshold =
      zo::move_threshold(c.zero_threshold, schedule_at(parse_zo_move(cfg.zo_move), epoch));
  c.bp_bits = static_cast<int>(schedule_at(parse_bp_bits(cfg.bp_bits), epoch));
  c.zo_bits = cfg.zo_bits;
  c.loss_frac_bits = cfg.loss_frac_bits;
  c.cyclic = cfg.zo_layer_scale == zo::LayerScale::kCyclic;
  return c;
}

MemoryPlan int8_plan(const Network& net, const TrainConfig& cfg, int head, int) {
  return QNetwork(net).plan(cfg.batch, head, cfg.threads);
}

std::unique_ptr<Engine> make_int8_engine(const EngineArgs& args) {
  return std::make_unique<Int8Engine>(args);
}

}  // namespace zotrain
