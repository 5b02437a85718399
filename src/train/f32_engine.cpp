// The f32 engine: the Network with SGD on its head and the ZO update on its body.
#include <algorithm>
#include <array>
#include <cmath>

#include "engine.h"
#include "models/serialize.h"
#include "nn/loss.h"
#include "step_split.h"
#include "zo_step.h"
#include "zotrain/core/error.h"
#include "zotrain/train/trainer.h"
#include "zotrain/zo/activity.h"
#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

// Adam's β1 when zo_momentum does not set it; the running RMS's weight of zo_normalize.
constexpr float kAdamBeta1 = 0.9f;
constexpr float kNormalizeDecay = 0.99f;

// The ZO optimizer state an f32 run needs beyond the parameters.
struct ZoBuffers {
  bool m = false, v = false;  // per body parameter: momentum or Adam's moments
  bool magnitude_scratch = false;
  bool normalize = false;
};
ZoBuffers zo_buffers(const TrainConfig& cfg) {
  const bool adam = cfg.zo_optimizer == zo::Optimizer::kAdam;
  return {adam || cfg.zo_momentum > 0, adam, cfg.zo_mask == zo::Mask::kMagnitude, cfg.zo_normalize};
}

// Why zo_activity cannot estimate linear layer l by its outputs ("" when it can): the layer must
// be tapped alone or with its activation, and every layer after it treat each example apart (each
// example's loss difference estimates its own gradient).
std::string activity_refusal(const Network& net, const Graph& fused, int l) {
  const GraphNode::Kind kind = fused.node_at(l).kind;
  if (kind != GraphNode::kLayer && kind != GraphNode::kActivated) return "fused with a batch norm";
  for (int j = l + 1; j < net.num_layers(); ++j)
    if (net.spec(j).op == Op::kBatchNorm || net.spec(j).op == Op::kResidual)
      return "layer " + std::to_string(j) + " (" + net.layer(j).describe() +
             ") after it mixes a batch's examples";
  return "";
}

// The trained body layers zo_activity estimates by their outputs, on their turns: every linear
// layer it can (activity_refusal); the others perturb their weights. InputError when zo_activity
// is on for a trained body of which no layer qualifies, naming why each linear layer does not.
std::vector<int> activity_layers(const Network& net, const TrainConfig& cfg, int head, int frozen) {
  std::vector<int> tapped;
  if (!cfg.zo_activity) return tapped;
  const Graph fused = net.fusions(head, frozen);
  std::string refused;
  for (int l = frozen; l < head; ++l) {
    if (net.spec(l).op != Op::kLinear) continue;
    const std::string why = activity_refusal(net, fused, l);
    if (why.empty())
      tapped.push_back(l);
    else
      refused += "; layer " + std::to_string(l) + " (" + net.layer(l).describe() + "): " + why;
  }
  if (tapped.empty() && frozen < head)
    throw InputError("zo_activity: no trained body layer can be estimated by its outputs" +
                     (refused.empty() ? std::string("; the body has no linear layer") : refused) +
                     "; expected a linear layer alone or with its activation, followed only by "
                     "layers that treat each example apart (or zo_activity 0)");
  return tapped;
}

// Output rows of a linear layer's gradient made and applied at a time by activity perturbation.
constexpr int64_t kActivityRows = 16;

// The buffers of activity perturbation, in floats: the largest tapped layer's input and output
// gradient for a batch, and its parameters' gradient for kActivityRows outputs; distributed by
// rows, also this rank's input rows (sent to every rank: the gradient sums over the batch).
struct ActivitySizes {
  int64_t x = 0, v = 0, grad = 0, send = 0;
};
ActivitySizes activity_sizes(const Network& net, const TrainConfig& cfg,
                             const std::vector<int>& tapped) {
  ActivitySizes s;
  for (int l : tapped) {
    const int64_t in = net.input_shape(l, 1).numel(), out = net.input_shape(l + 1, 1).numel();
    s.x = std::max(s.x, cfg.batch * in);
    s.v = std::max(s.v, cfg.batch * out);
    s.grad = std::max(s.grad, kActivityRows * (in + 1));
  }
  if (cfg.distributed == Distributed::kData) s.send = s.x;
  return s;
}

// Perturbation lanes of an f32 run: cfg.zo_lanes where it has a trained body to perturb.
int lanes(const TrainConfig& cfg, int head, int frozen) {
  return frozen < head ? cfg.zo_lanes : 1;
}

// Whether the ±z passes of each sample run paired (Network::forward_pair), where there are.
bool paired_passes(const TrainConfig& cfg, int head, int frozen) {
  return cfg.zo_pair_passes && frozen < head && cfg.estimator == zo::Estimator::kSpsa &&
         lanes(cfg, head, frozen) == 1;
}

class F32Engine : public Engine {
 public:
  explicit F32Engine(const EngineArgs& a)
      : cfg_(a.cfg),
        net_(a.net),
        pool_(a.pool),
        head_(a.head),
        frozen_(a.frozen),
        split_(a.cfg.distributed, dist::world()) {
    paired_ = paired_passes(cfg_, head_, frozen_);
    net_.allocate(a.arena, cfg_.batch, head_, &pool_, cfg_.seed, frozen_,
                  lanes(cfg_, head_, frozen_), paired_, cfg_.recompute_blocks);
    if (split_.by_rows()) check_rows_apart(net_, frozen_);
    if (split_.on() && head_ < net_.num_layers()) {
      const DistRows d = dist_rows(cfg_, split_.ranks());
      const int64_t row = net_.input_shape(head_, 1).numel();
      dist_send_ = a.arena.alloc(Bucket::kWorkspace, Shape{d.send * row});
      dist_gathered_ = a.arena.alloc(Bucket::kWorkspace, Shape{d.gathered * row});
    }
    if (paired_)
      pair_z_ = a.arena.alloc(Bucket::kWorkspace,
                              Shape{net_.largest_trained_layer(head_, frozen_).second});
    sgd_ = std::make_unique<Sgd>(net_, a.arena, cfg_.momentum, cfg_.weight_decay);
    const ZoBuffers buffers = zo_buffers(cfg_);
    int64_t largest = 0;
    for (ParamRef& p : net_.params()) {
      if (p.layer < frozen_ || p.layer >= head_) continue;
      BodyParam b{&p};
      if (buffers.m) b.m = a.arena.alloc(Bucket::kOptimizer, p.value.shape());
      if (buffers.v) b.v = a.arena.alloc(Bucket::kOptimizer, p.value.shape());
      if (body_.empty() || body_.back().p->layer != p.layer) layer_numel_.push_back(0);
      b.offset = layer_numel_.back();
      layer_numel_.back() += p.value.numel();
      b.group = static_cast<int>(layer_numel_.size()) - 1;
      largest = std::max(largest, p.value.numel());
      body_.push_back(std::move(b));
    }
    if (buffers.magnitude_scratch && largest > 0)
      magnitude_scratch_ = a.arena.alloc(Bucket::kWorkspace, Shape{largest});
    if (buffers.normalize) normalize_ = a.arena.alloc(Bucket::kOptimizer, Shape{2});
    if (cfg_.zo_activity) {
      const std::vector<int> tapped = activity_layers(net_, cfg_, head_, frozen_);
      if (!tapped.empty()) {
        const ActivitySizes act = activity_sizes(net_, cfg_, tapped);
        activity_x_ = a.arena.alloc(Bucket::kWorkspace, Shape{act.x});
        activity_v_ = a.arena.alloc(Bucket::kWorkspace, Shape{act.v});
        activity_grad_ = a.arena.alloc(Bucket::kWorkspace, Shape{act.grad});
        if (act.send > 0) activity_send_ = a.arena.alloc(Bucket::kWorkspace, Shape{act.send});
      }
      // Each layer's output count m, then its step factor (m_max / m)^a.
      for (const BodyParam& b : body_)
        if (b.offset == 0)
          activity_.push_back(std::find(tapped.begin(), tapped.end(), b.p->layer) != tapped.end()
                                  ? static_cast<double>(b.p->value.shape()[0])
                                  : 0.0);
      const double widest =
          activity_.empty() ? 0.0 : *std::max_element(activity_.begin(), activity_.end());
      for (double& f : activity_)
        if (f > 0) f = std::pow(widest / f, cfg_.zo_activity_scale_power);
    }
    if (a.init) restore_params(a.init->file, a.init->path, net_);
    sparsity_ = parse_sparsity(cfg_.sparsity);
    // A normalized step clips (and takes signs) after the normalization, in update().
    project_ = {cfg_.estimator, static_cast<float>(cfg_.eps),
                cfg_.zo_normalize ? 0.0f : static_cast<float>(cfg_.grad_clip),
                cfg_.zo_update == ZoUpdate::kSign && !cfg_.zo_normalize};
  }

  int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels, bool features) override {
    // Data mode: only this rank's rows, from the first row, where the passes read them.
    return batches.fill(index,
                        (features ? net_.frozen_output(cfg_.batch) : net_.input(cfg_.batch)).data(),
                        labels, split_.share());
  }

  StepResult step(const StepInput& in) override {
    in_ = &in;
    stats_pass_ = true;
    local_rows_ = split_.rows(in.rows).size();  // fill() loaded them
    if (!in.features && local_rows_ > 0) net_.forward_frozen(local_rows_);
    StepResult r = head_ == frozen_ ? bp_step() : zo_step();
    // Directions mode: batch norm's statistics moved on the rank that ran the step's first pass.
    if (split_.by_samples())
      for (ParamRef& s : net_.state())
        split_.world().broadcast(s.value.data(), s.value.numel() * sizeof(float), 0);
    return r;
  }

  double evaluate(BatchSource& batches, bool features) override {
    return zotrain::evaluate(net_, batches, features);
  }

  FeatureSet extract_features(BatchSource& images, int64_t examples) override {
    return zotrain::extract_features(
        images, examples, net_.input_shape(frozen_, 1).numel(),
        FrozenRun<float>([&](int64_t b, uint8_t* labels) {
          const int64_t rows = images.fill(b, net_.input(cfg_.batch).data(), labels);
          net_.forward_frozen(rows);
          return std::pair<int64_t, const float*>{rows, net_.frozen_output(rows).data()};
        }));
  }

  void forward(int64_t rows) override { net_.forward(rows); }

  int64_t predict(const BatchSource& batches, int64_t index, float* logits) override {
    const PassMode mode = net_.mode();
    net_.set_mode({false, 0, false});
    const int64_t rows = batches.fill(index, net_.input(cfg_.batch).data(), nullptr);
    const Tensor out = net_.forward(rows);
    std::copy(out.data(), out.data() + out.numel(), logits);
    net_.set_mode(mode);
    return rows;
  }

  std::vector<ParamView> parameters() override {
    std::vector<ParamView> views;
    for (auto* refs : {&net_.params(), &net_.state()})
      for (ParamRef& p : *refs)
        views.push_back({p.name, ParamView::Type::kF32, p.value.data(), p.value.shape()});
    return views;
  }

  CheckpointParts checkpoint() override { return {&net_, sgd_.get(), zo_state()}; }

  void resume(const Checkpoint& ckpt) override {
    restore_checkpoint(ckpt, &net_, sgd_.get(), zo_state());
  }

  int64_t num_parameters() const override { return net_.num_param_elements(); }

 private:
  // One trained body parameter and its ZO optimizer state.
  struct BodyParam {
    ParamRef* p;
    Tensor m{}, v{};     // momentum (SGD) or first moment (Adam); second moment (Adam)
    int group = 0;       // its layer among the body's layers with parameters
    int64_t offset = 0;  // of its first element among its layer's parameters
    float max_abs = 0;   // this step's magnitude-mask threshold (0: none)
  };

  std::vector<std::pair<std::string, Tensor>> zo_state() const {
    std::vector<std::pair<std::string, Tensor>> state;
    // The momentum keeps the name it always had: "zo_momentum/<i-th parameter's name>".
    for (size_t i = 0; i < body_.size(); ++i) {
      if (!body_[i].m.empty())
        state.emplace_back("zo_momentum/" + net_.params()[i].name, body_[i].m);
      if (!body_[i].v.empty())
        state.emplace_back("zo_second_moment/" + body_[i].p->name, body_[i].v);
    }
    if (!normalize_.empty()) state.emplace_back("zo_normalize", normalize_);
    return state;
  }

  // The step's per-layer scales and magnitude thresholds, from the parameters as they are now.
  void prepare_body(double p_zero) {
    std::vector<double> sum_sq(layer_numel_.size(), 0.0);
    for (BodyParam& b : body_) {
      if (cfg_.zo_layer_scale == zo::LayerScale::kRms)
        for (int64_t i = 0; i < b.p->value.numel(); ++i)
          sum_sq[b.group] += static_cast<double>(b.p->value[i]) * b.p->value[i];
      b.max_abs = cfg_.zo_mask == zo::Mask::kMagnitude && p_zero > 0
                      ? zo::magnitude_threshold(b.p->value, 1.0 - p_zero, magnitude_scratch_.data())
                      : 0.0f;
    }
    scales_ = zo::layer_scales(cfg_.zo_layer_scale, layer_numel_, sum_sq, in_->step,
                               cfg_.zo_cycle_power, cfg_.zo_cycle_scale_power);
  }

  StepResult bp_step() {
    StepResult r;
    net_.zero_grad();
    r.loss = pass(nullptr, 1.0, &r, &r.correct);
    sgd_->step(in_->lr);
    return r;
  }

  StepResult zo_step() {
    const bool has_head = head_ < net_.num_layers();
    const bool forward_diff = project_.estimator == zo::Estimator::kForward;
    const bool clean_head = cfg_.head_grad == HeadGrad::kClean || forward_diff;
    // Forward differences need the clean loss; a head trained from a clean pass needs its
    // backward.
    const bool clean_pass = forward_diff || (has_head && clean_head);
    const double p_zero = schedule_at(sparsity_, in_->epoch);
    // The magnitude mask replaces the random one.
    const zo::PerturbationSpec spec{
        cfg_.perturbation, cfg_.zo_mask == zo::Mask::kRandom ? static_cast<float>(p_zero) : 0.0f};
    prepare_body(p_zero);
    for (size_t g = 0; g < activity_.size(); ++g)
      if (activity_[g] > 0 && scales_[g] != 0.0f) return activity_step(static_cast<int>(g));
    const int q = in_->q;
    StepResult r;
    if (has_head) net_.zero_grad();
    double clean = 0;
    if (clean_pass && split_.by_rows() && has_head)
      distributed_passes({nullptr}, 1, 1.0, &r, &r.correct, &clean);
    else if (clean_pass && split_.by_rows())
      distributed_losses({nullptr}, 1, &r, &r.correct, &clean);
    else if (clean_pass)
      clean = pass(nullptr, has_head ? 1.0 : 0.0, &r, &r.correct);
    if (clean_pass) r.loss = clean;
    // With the head trained from the perturbed passes, each of them weighs 1/(2q).
    const double head_weight = has_head && !clean_head ? 0.5 / q : 0.0;
    const auto passes = [&](const std::vector<zo::Direction>& dirs, double* loss) {
      std::vector<ParamTransform> body;
      for (size_t k = 0; k < dirs.size(); ++k) {
        const zo::Direction& d = dirs[k];
        const auto scale = static_cast<float>(d.sign * cfg_.eps);
        // Paired, the −z pass of a sample applies the z its +z pass drew for the same layer.
        const int pair = paired_ ? (k % 2 == 0 ? 1 : 2) : 0;
        body.push_back([this, &spec, seed = d.seed, scale, pair](const ParamRef& p, float* dst,
                                                                 int64_t b, int64_t e) {
          const BodyParam& bp = body_param(p);
          if (scales_[bp.group] == 0.0f) {  // not this step's layer
            std::copy(p.value.data() + b, p.value.data() + e, dst);
            return;
          }
          const float s = scale * scales_[bp.group];
          if (pair == 0) {
            zo::add_perturbation(spec, seed, static_cast<uint32_t>(p.index), s, p.value.data() + b,
                                 dst, b, e, bp.max_abs);
            return;
          }
          float* z = pair_z_.data() + bp.offset;
          if (pair == 1)
            zo::perturbation_values(spec, seed, static_cast<uint32_t>(p.index), b, e, z + b);
          zo::add_values(z + b, s, p.value.data() + b, dst, e - b, bp.max_abs);
        });
      }
      int64_t* correct = clean_pass ? nullptr : &r.correct;
      if (!split_.on()) return perturbed_passes(body, head_weight, &r, correct, loss);
      std::vector<const ParamTransform*> each;
      for (const ParamTransform& t : body) each.push_back(&t);
      const size_t per_sample = forward_diff ? 1 : 2;
      if (head_weight > 0)
        return distributed_passes(each, per_sample, head_weight, &r, correct, loss);
      distributed_losses(each, per_sample, &r, correct, loss);
    };
    const auto project = [&](double plus, double other) {
      return zo::project(project_, plus, other);
    };
    const auto update = [&](const zo::Estimate& samples) {
      zo::Estimate est = samples;
      if (!normalize_.empty()) {
        zo::normalize(est, kNormalizeDecay, normalize_.data());
        for (float& g : est.g) g = zo::limit(project_options(), g);
      }
      for (BodyParam& b : body_) {
        if (scales_[b.group] == 0.0f) continue;  // not this step's layer
        const zo::UpdateRule rule =
            zo_rule(static_cast<float>(in_->zo_lr) * scales_[b.group], b.max_abs);
        zo::apply_update(spec, est, static_cast<uint32_t>(b.p->index), rule, b.p->value,
                         zo_state(b), &pool_);
      }
    };
    const std::vector<double> loss =
        zo::run_step({cfg_.seed, in_->step, q, !forward_diff}, clean, passes, project, update);
    // The step's loss: the clean pass's, or the mean of each sample's two passes.
    if (!clean_pass) {
      double perturbed_sum = 0;
      for (int s = 0; s < q; ++s) perturbed_sum += 0.5 * (loss[2 * s] + loss[2 * s + 1]);
      r.loss = perturbed_sum / q;
    }
    if (has_head) sgd_->step(in_->lr);
    return r;
  }

  // Activity perturbation (zo/activity.h) on the turn of the linear layer of body group `group`:
  // q pairs of passes moving its outputs by ±ε u, each example's loss difference weighting its
  // own u; the layers below it run unperturbed, so every pass sees the same input x.
  StepResult activity_step(int group) {
    const bool has_head = head_ < net_.num_layers();
    const bool clean_head = cfg_.head_grad == HeadGrad::kClean;
    const int q = in_->q;
    const int64_t rows = in_->rows;
    BodyParam* weight = nullptr;  // the layer's weight, then its bias
    for (BodyParam& b : body_)
      if (b.group == group && !weight) weight = &b;
    BodyParam& bias = weight[1];
    const int layer = weight->p->layer;
    const int64_t out = weight->p->value.shape()[0], in = weight->p->value.numel() / out;
    Tensor x(activity_x_.data(), Shape{rows, in});
    Tensor v(activity_v_.data(), Shape{rows, out});
    v.fill(0.0f);
    StepResult r;
    if (has_head) net_.zero_grad();
    if (has_head && clean_head) r.loss = pass(nullptr, 1.0, &r, &r.correct);
    const double head_weight = has_head && !clean_head ? 0.5 / q : 0.0;
    // Dense: the sparsity schedule masks weights, not outputs.
    const zo::PerturbationSpec spec{cfg_.perturbation, 0.0f};
    const auto tensor = static_cast<uint32_t>(weight->p->index);
    const double eps = cfg_.eps;
    row_loss_[0].resize(2 * rows), row_loss_[1].resize(2 * rows), coef_.resize(rows);
    // Distributed, each rank runs its rows of every pass (data: with their elements of the
    // batch's u) or its samples' passes on the whole batch (directions), and every rank gets
    // every pass's row losses and the layer's input, to make one process's gradient.
    const RowRange mine = split_.rows(rows);
    float* x_mine = split_.by_rows() ? activity_send_.data() : x.data();
    // Pass p = 2 s + k of sample s (k = 0: +ε u, 1: −ε u) on the first `local` rows.
    const auto tapped_pass = [&](int64_t p, int64_t local) {
      const uint64_t seed = zo::sample_seed(cfg_.seed, in_->step, static_cast<int>(p / 2));
      const auto scale = static_cast<float>(p % 2 == 0 ? eps : -eps);
      step_mode(stats_pass_ && p == 0);
      return net_.forward_trained_tapped(local, layer, [&](const Tensor& input, Tensor& y) {
        if (p == 0) std::copy(input.data(), input.data() + input.numel(), x_mine);
        const int64_t at = mine.begin * out;
        zo::add_perturbation(spec, seed, tensor, scale, y.data(), y.data(), at, at + y.numel());
      });
    };
    // d(mean loss)/d(output of example b) along sample s's u_b, over the q samples, from its
    // passes' (loss, correct) row pairs. Not clipped: grad_clip bounds the batch's mean
    // difference, and an example's own is larger (clipping it at 1 cost 3 points on Fashion Cls2).
    const auto add_sample = [&](int64_t s, const double* plus, const double* minus) {
      for (int64_t b = 0; b < rows; ++b)
        coef_[b] = static_cast<float>((plus[2 * b] - minus[2 * b]) /
                                      (2.0 * eps * static_cast<double>(rows) * q));
      zo::add_weighted_directions(spec, zo::sample_seed(cfg_.seed, in_->step, static_cast<int>(s)),
                                  tensor, coef_.data(), v);
    };
    double perturbed_sum = 0;
    if (split_.on()) {
      loss_send_.resize(2 * 2 * static_cast<size_t>(rows));
      loss_gathered_.resize(2 * 2 * static_cast<size_t>(rows) *
                            (split_.by_samples() ? static_cast<size_t>(split_.ranks()) : 1));
      const auto run = [&](size_t a, size_t b, int64_t local, double* pairs) {
        for (size_t p = a; p < b; ++p)
          softmax_cross_entropy_rows(tapped_pass(static_cast<int64_t>(p), local),
                                     in_->labels + mine.begin,
                                     pairs + 2 * static_cast<int64_t>(p - a) * local);
      };
      const auto finish = [&](size_t p, double* pairs) {
        perturbed_sum += mean_row_loss(pairs, rows);
        if (p == 0 && !clean_head) r.correct += correct_rows(pairs, rows);
        if (p % 2 == 0)
          std::copy(pairs, pairs + 2 * rows, row_loss_[0].data());
        else
          add_sample(static_cast<int64_t>(p / 2), row_loss_[0].data(), pairs);
      };
      run_passes(split_, 2 * static_cast<size_t>(q), 2, 2, rows, 2, loss_send_.data(),
                 loss_gathered_.data(), run, finish);
      r.forward_passes += 2 * q;
      step_mode(false);
      if (split_.by_rows()) {
        split_.world().allgather(x_mine, row_counts(split_, rows, in * sizeof(float)), x.data());
      } else {  // rank 0 ran sample 0 on the whole batch
        split_.world().broadcast(x.data(), static_cast<size_t>(x.numel()) * sizeof(float), 0);
      }
    } else {
      for (int64_t s = 0; s < q; ++s) {
        for (int64_t k = 0; k < 2; ++k) {
          const Tensor logits = tapped_pass(2 * s + k, rows);
          softmax_cross_entropy_rows(logits, in_->labels, row_loss_[k].data());
          perturbed_sum += finish_pass(logits, head_weight, &r,
                                       s == 0 && k == 0 && !clean_head ? &r.correct : nullptr);
        }
        add_sample(s, row_loss_[0].data(), row_loss_[1].data());
      }
    }
    stats_pass_ = false;
    if (!(has_head && clean_head)) r.loss = perturbed_sum / (2.0 * q);
    // The gradient a block of output rows at a time, each applied as it is made.
    const zo::UpdateRule rule = zo_rule(
        static_cast<float>(in_->zo_lr * cfg_.zo_activity_lr * activity_[group] / cfg_.zo_lr), 0.0f);
    float* dw = activity_grad_.data();
    float* db = dw + kActivityRows * in;
    for (int64_t o0 = 0; o0 < out; o0 += kActivityRows) {
      const int64_t o1 = std::min(out, o0 + kActivityRows);
      zo::linear_gradient(v, x, o0, o1, dw, db, &pool_);
      zo::apply_gradient(dw, o0 * in, o1 * in, rule, weight->p->value, zo_state(*weight), &pool_);
      zo::apply_gradient(db, o0, o1, rule, bias.p->value, zo_state(bias), &pool_);
    }
    if (has_head) sgd_->step(in_->lr);
    return r;
  }

  static zo::UpdateState zo_state(BodyParam& b) {
    return {b.m.empty() ? nullptr : &b.m, b.v.empty() ? nullptr : &b.v};
  }

  // The ZO optimizer's rule of this step at learning rate `lr`.
  zo::UpdateRule zo_rule(float lr, float max_abs) const {
    const bool adam = cfg_.zo_optimizer == zo::Optimizer::kAdam;
    zo::UpdateRule rule{
        cfg_.zo_optimizer, lr,
        static_cast<float>(adam && cfg_.zo_momentum == 0 ? kAdamBeta1 : cfg_.zo_momentum)};
    rule.t = in_->step + 1;
    rule.max_abs = max_abs;
    return rule;
  }

  // The mode of the step's training passes: its dropout key; `stats` moves batch norm's
  // running statistics (the step's first pass).
  void step_mode(bool stats) { net_.set_mode({true, step_key(cfg_, in_->step), stats}); }

  // The loss of one forward pass; with `head_weight` > 0 also backprops the head, scaling
  // dL/dlogits by head_weight. Counts its passes in `r`.
  double pass(const ParamTransform* body, double head_weight, StepResult* r, int64_t* correct) {
    // Every pass of a step drops the same units; the step's first pass moves batch norm's
    // running statistics.
    step_mode(stats_pass_);
    stats_pass_ = false;
    return finish_pass(net_.forward_trained(in_->rows, body), head_weight, r, correct);
  }

  // The losses of the step's perturbed passes (each as pass() gives it) in loss[0..n): up to
  // cfg.zo_lanes passes at a time run their body at once (Network::forward_lanes).
  void perturbed_passes(const std::vector<ParamTransform>& body, double head_weight, StepResult* r,
                        int64_t* correct, double* loss) {
    const size_t n = body.size(), lanes = static_cast<size_t>(net_.lanes());
    if (paired_) {
      for (size_t c = 0; c < n; c += 2) {
        step_mode(stats_pass_);
        const std::array<Tensor, 2> outputs = net_.forward_pair(in_->rows, &body[c], &body[c + 1]);
        for (size_t k = 0; k < 2; ++k) {
          loss[c + k] = finish_pass(net_.forward_head(outputs[k]), head_weight, r,
                                    c + k == 0 ? correct : nullptr);
          stats_pass_ = false;
          step_mode(false);
        }
      }
      return;
    }
    for (size_t c = 0; c < n; c += lanes) {
      const size_t m = std::min(lanes, n - c);
      if (m == 1) {
        loss[c] = pass(&body[c], head_weight, r, c == 0 ? correct : nullptr);
        continue;
      }
      std::vector<const ParamTransform*> group;
      for (size_t k = 0; k < m; ++k) group.push_back(&body[c + k]);
      // Lane 0's body and the first head take the statistics pass, if the step is at it.
      step_mode(stats_pass_);
      const std::vector<Tensor> outputs = net_.forward_lanes(in_->rows, group);
      for (size_t k = 0; k < m; ++k) {
        loss[c + k] = finish_pass(net_.forward_head(outputs[k]), head_weight, r,
                                  c + k == 0 ? correct : nullptr);
        stats_pass_ = false;
        step_mode(false);
      }
    }
  }

  // The bodies of passes [a, b) on the first `rows` rows, a ±z pair at a time when paired; the
  // step's first pass moves batch norm's statistics. out(k, body output) for each, in order.
  template <typename Out>
  void run_bodies(const std::vector<const ParamTransform*>& body, size_t a, size_t b, int64_t rows,
                  Out&& out) {
    for (size_t k = a; k < b;) {
      step_mode(stats_pass_ && k == 0);
      if (paired_ && k + 1 < b) {
        const std::array<Tensor, 2> pair = net_.forward_pair(rows, body[k], body[k + 1]);
        out(k, pair[0]);
        out(k + 1, pair[1]);
        k += 2;
        continue;
      }
      out(k, net_.forward_lanes(rows, {body[k]})[0]);
      ++k;
    }
  }

  // Distributed (docs/distributed.md): the losses of the passes along body[k] (null: clean), each
  // the loss one process computes. This rank runs the body of its share: its rows of every pass
  // (data), or whole samples of `per_sample` passes on the whole batch (directions, sample s on
  // rank s mod N). An all-gather gives every rank each pass's body output on the whole batch,
  // and every rank runs the head on it in pass order, so the losses and the head's gradient are
  // the same bits on every rank, whatever the number of ranks.
  void distributed_passes(const std::vector<const ParamTransform*>& body, size_t per_sample,
                          double head_weight, StepResult* r, int64_t* correct, double* loss) {
    const int64_t rows = in_->rows;
    const auto run = [&](size_t a, size_t b, int64_t local, float* out) {
      run_bodies(body, a, b, local, [&](size_t, const Tensor& t) {
        out = std::copy(t.data(), t.data() + t.numel(), out);
      });
    };
    const auto finish = [&](size_t k, float* output) {
      step_mode(stats_pass_);
      const Tensor out(output, net_.input_shape(head_, rows));
      loss[k] = finish_pass(net_.forward_head(out), head_weight, r, k == 0 ? correct : nullptr);
      stats_pass_ = false;
    };
    run_passes(split_, body.size(), paired_ ? 2 : 1, per_sample, rows,
               net_.input_shape(head_, 1).numel(), dist_send_.data(), dist_gathered_.data(), run,
               finish);
    step_mode(false);
  }

  // distributed_passes for passes that only need their loss (no head to backprop from them):
  // the ranks exchange losses, not body outputs.
  void distributed_losses(const std::vector<const ParamTransform*>& body, size_t per_sample,
                          StepResult* r, int64_t* correct, double* loss) {
    const auto run = [&](size_t a, size_t b, int64_t rows, const auto& emit) {
      run_bodies(body, a, b, rows, [&](size_t k, const Tensor& t) {
        step_mode(stats_pass_ && k == 0);
        emit(k, net_.forward_head(t));
      });
    };
    exchange_losses(split_, body.size(), paired_ ? 2 : 1, per_sample, in_->rows, in_->labels,
                    loss_send_, loss_gathered_, run, loss, correct);
    r->forward_passes += static_cast<int64_t>(body.size());
    stats_pass_ = false;
    step_mode(false);
  }

  // The loss of the logits of a pass; with `head_weight` > 0 also backprops the head.
  double finish_pass(const Tensor& logits, double head_weight, StepResult* r, int64_t* correct) {
    ++r->forward_passes;
    if (head_weight <= 0) return softmax_cross_entropy(logits, in_->labels, nullptr, correct);
    Tensor dlogits = net_.logits_grad(logits.shape()[0]);
    double loss = softmax_cross_entropy(logits, in_->labels, &dlogits, correct);
    if (head_weight != 1.0)
      for (int64_t i = 0; i < dlogits.numel(); ++i) dlogits[i] *= static_cast<float>(head_weight);
    net_.backward(dlogits);
    ++r->backward_passes;
    return loss;
  }

  const TrainConfig& cfg_;
  Network& net_;
  ThreadPool& pool_;
  int head_, frozen_;
  StepSplit split_;
  int64_t local_rows_ = 0;                // the rows of the batch this rank runs
  Tensor dist_send_{}, dist_gathered_{};  // distributed with a head: body outputs (dist_rows)
  std::vector<double> loss_send_, loss_gathered_;  // distributed: exchange_losses' (bytes)
  // The body parameter of a network parameter (body_ follows Network::params()' order).
  const BodyParam& body_param(const ParamRef& p) const {
    return body_[static_cast<size_t>(p.index - body_.front().p->index)];
  }
  zo::ProjectOptions project_options() const {
    return {cfg_.estimator, static_cast<float>(cfg_.eps), static_cast<float>(cfg_.grad_clip),
            cfg_.zo_update == ZoUpdate::kSign};
  }

  std::unique_ptr<Sgd> sgd_;
  bool paired_ = false;               // the ±z passes of a sample run paired (paired_passes)
  Tensor pair_z_{};                   // paired: the z of the layer being run, drawn by its +z pass
  std::vector<BodyParam> body_;       // the trained body's parameters, in Network::params() order
  std::vector<int64_t> layer_numel_;  // elements of each of the body's layers with parameters
  std::vector<float> scales_;         // this step's per-layer scale of z (1 without layer scaling)
  Tensor magnitude_scratch_{};        // |w| of the largest body tensor, for the magnitude mask
  Tensor normalize_{};                // zo::normalize's state
  // zo_activity: per body group, the step factor of its output turns (0: its turns perturb its
  // weights); the layer's input x, its output gradient v, its parameters' gradient; each
  // example's (loss, correct) at +εu and −εu and its weight in v.
  std::vector<double> activity_;
  Tensor activity_x_{}, activity_v_{}, activity_grad_{}, activity_send_{};
  std::vector<double> row_loss_[2];
  std::vector<float> coef_;
  std::vector<std::pair<int, double>> sparsity_;
  zo::ProjectOptions project_;
  const StepInput* in_ = nullptr;  // the step being taken
  bool stats_pass_ = false;        // the next pass is the step's first
};

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

MemoryPlan f32_plan(const Network& net, const TrainConfig& cfg, int head, int frozen) {
  const bool paired = paired_passes(cfg, head, frozen);
  MemoryPlan plan = net.plan(cfg.batch, head, cfg.threads, frozen, lanes(cfg, head, frozen), paired,
                             cfg.recompute_blocks);
  if (paired)
    plan.add(-1, "perturbation of one layer (paired passes)", Bucket::kWorkspace,
             net.largest_trained_layer(head, frozen).second * sizeof(float));
  // Momentum buffers: the SGD ones of the head, then the ZO ones of the trained body.
  const ZoBuffers zo = zo_buffers(cfg);
  int64_t largest = 0;
  for (bool in_head : {true, false}) {
    for (int i = frozen; i < net.num_layers(); ++i) {
      if ((i >= head) != in_head) continue;
      for (const ParamSpec& ps : net.layer(i).param_specs()) {
        const std::string name = net.layer(i).describe() + " " + ps.name;
        const size_t bytes = ps.shape.numel() * sizeof(float);
        if (in_head ? cfg.momentum > 0 : zo.m)
          plan.add(i, name + " momentum", Bucket::kOptimizer, bytes);
        if (in_head) continue;
        if (zo.v) plan.add(i, name + " second moment", Bucket::kOptimizer, bytes);
        largest = std::max(largest, ps.shape.numel());
      }
    }
  }
  if (zo.magnitude_scratch && largest > 0)
    plan.add(-1, "magnitude mask scratch", Bucket::kWorkspace, largest * sizeof(float));
  if (zo.normalize) plan.add(-1, "normalized step state", Bucket::kOptimizer, 2 * sizeof(float));
  if (const std::vector<int> tapped = activity_layers(net, cfg, head, frozen); !tapped.empty()) {
    const ActivitySizes act = activity_sizes(net, cfg, tapped);
    std::string layers;
    for (int l : tapped) layers += (layers.empty() ? "" : ", ") + std::to_string(l);
    plan.add(-1, "activity perturbation: linear layer input (layers " + layers + " by outputs)",
             Bucket::kWorkspace, act.x * sizeof(float));
    plan.add(-1, "activity perturbation: output gradient", Bucket::kWorkspace,
             act.v * sizeof(float));
    plan.add(-1,
             "activity perturbation: gradient of " + std::to_string(kActivityRows) + " output rows",
             Bucket::kWorkspace, act.grad * sizeof(float));
    if (act.send > 0)
      plan.add(-1, "activity perturbation: this rank's linear layer input", Bucket::kWorkspace,
               act.send * sizeof(float));
  }
  if (head < net.num_layers())
    add_dist_rows(plan, cfg, net.input_shape(head, 1).numel() * sizeof(float), "body outputs");
  return plan;
}

std::unique_ptr<Engine> make_f32_engine(const EngineArgs& args) {
  return std::make_unique<F32Engine>(args);
}

}  // namespace zotrain
