// The f32 engine: the Network with SGD on its head and the ZO update on its body.
#include <algorithm>

#include "engine.h"
#include "zo_step.h"
#include "zotrain/models/serialize.h"
#include "zotrain/nn/loss.h"
#include "zotrain/train/trainer.h"
#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

// Perturbation lanes of an f32 run: cfg.zo_lanes where it has a trained body to perturb.
int lanes(const TrainConfig& cfg, int head, int frozen) {
  return frozen < head ? cfg.zo_lanes : 1;
}

class F32Engine : public Engine {
 public:
  explicit F32Engine(const EngineArgs& a)
      : cfg_(a.cfg), net_(a.net), pool_(a.pool), head_(a.head), frozen_(a.frozen) {
    net_.allocate(a.arena, cfg_.batch, head_, &pool_, cfg_.seed, frozen_,
                  lanes(cfg_, head_, frozen_));
    sgd_ = std::make_unique<Sgd>(net_, a.arena, cfg_.momentum, cfg_.weight_decay);
    for (const ParamRef& p : net_.params())
      if (p.layer >= frozen_ && p.layer < head_ && cfg_.zo_momentum > 0)
        zo_momentum_.push_back(a.arena.alloc(Bucket::kOptimizer, p.value.shape()));
    if (a.init) restore_params(a.init->file, a.init->path, net_);
    sparsity_ = parse_sparsity(cfg_.sparsity);
    project_ = {cfg_.estimator, static_cast<float>(cfg_.eps), static_cast<float>(cfg_.grad_clip),
                cfg_.zo_update == ZoUpdate::kSign};
  }

  int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels, bool features) override {
    return batches.fill(
        index, (features ? net_.frozen_output(cfg_.batch) : net_.input(cfg_.batch)).data(), labels);
  }

  StepResult step(const StepInput& in) override {
    in_ = &in;
    stats_pass_ = true;
    if (!in.features) net_.forward_frozen(in.rows);
    return head_ == frozen_ ? bp_step() : zo_step();
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

  CheckpointParts checkpoint() override { return {&net_, sgd_.get(), zo_state()}; }

  void resume(const Checkpoint& ckpt) override {
    restore_checkpoint(ckpt, &net_, sgd_.get(), zo_state());
  }

  int64_t num_parameters() const override { return net_.num_param_elements(); }

 private:
  std::vector<std::pair<std::string, Tensor>> zo_state() const {
    std::vector<std::pair<std::string, Tensor>> state;
    for (size_t i = 0; i < zo_momentum_.size(); ++i)
      state.emplace_back("zo_momentum/" + net_.params()[i].name, zo_momentum_[i]);
    return state;
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
    const zo::PerturbationSpec spec{cfg_.perturbation,
                                    static_cast<float>(schedule_at(sparsity_, in_->epoch))};
    const int q = in_->q;
    StepResult r;
    if (has_head) net_.zero_grad();
    double clean = 0;
    if (clean_pass) clean = r.loss = pass(nullptr, has_head ? 1.0 : 0.0, &r, &r.correct);
    // With the head trained from the perturbed passes, each of them weighs 1/(2q).
    const double head_weight = has_head && !clean_head ? 0.5 / q : 0.0;
    const auto passes = [&](const std::vector<zo::Direction>& dirs, double* loss) {
      std::vector<ParamTransform> body;
      for (const zo::Direction& d : dirs) {
        const auto scale = static_cast<float>(d.sign * cfg_.eps);
        body.push_back(
            [&spec, seed = d.seed, scale](const ParamRef& p, float* dst, int64_t b, int64_t e) {
              zo::add_perturbation(spec, seed, static_cast<uint32_t>(p.index), scale,
                                   p.value.data(), dst, b, e);
            });
      }
      perturbed_passes(body, head_weight, &r, clean_pass ? nullptr : &r.correct, loss);
    };
    const auto project = [&](double plus, double other) {
      return zo::project(project_, plus, other);
    };
    const auto update = [&](const zo::Estimate& est) {
      size_t body_param = 0;
      for (ParamRef& p : net_.params())
        if (p.layer >= frozen_ && p.layer < head_) {
          Tensor* m = zo_momentum_.empty() ? nullptr : &zo_momentum_[body_param++];
          zo::apply_update(spec, est, static_cast<uint32_t>(p.index),
                           static_cast<float>(in_->zo_lr), p.value, m,
                           static_cast<float>(cfg_.zo_momentum), &pool_);
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

  // The loss of one forward pass; with `head_weight` > 0 also backprops the head, scaling
  // dL/dlogits by head_weight. Counts its passes in `r`.
  double pass(const ParamTransform* body, double head_weight, StepResult* r, int64_t* correct) {
    // Every pass of a step drops the same units; the step's first pass moves batch norm's
    // running statistics.
    net_.set_mode({true, step_key(cfg_, in_->step), stats_pass_});
    stats_pass_ = false;
    return finish_pass(net_.forward_trained(in_->rows, body), head_weight, r, correct);
  }

  // The losses of the step's perturbed passes (each as pass() gives it) in loss[0..n): up to
  // cfg.zo_lanes passes at a time run their body at once (Network::forward_lanes).
  void perturbed_passes(const std::vector<ParamTransform>& body, double head_weight, StepResult* r,
                        int64_t* correct, double* loss) {
    const size_t n = body.size(), lanes = static_cast<size_t>(net_.lanes());
    for (size_t c = 0; c < n; c += lanes) {
      const size_t m = std::min(lanes, n - c);
      if (m == 1) {
        loss[c] = pass(&body[c], head_weight, r, c == 0 ? correct : nullptr);
        continue;
      }
      std::vector<const ParamTransform*> group;
      for (size_t k = 0; k < m; ++k) group.push_back(&body[c + k]);
      // Lane 0's body and the first head take the statistics pass, if the step is at it.
      net_.set_mode({true, step_key(cfg_, in_->step), stats_pass_});
      const std::vector<Tensor> outputs = net_.forward_lanes(in_->rows, group);
      for (size_t k = 0; k < m; ++k) {
        loss[c + k] = finish_pass(net_.forward_head(outputs[k]), head_weight, r,
                                  c + k == 0 ? correct : nullptr);
        stats_pass_ = false;
        net_.set_mode({true, step_key(cfg_, in_->step), false});
      }
    }
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
  std::unique_ptr<Sgd> sgd_;
  std::vector<Tensor> zo_momentum_;  // per body parameter, when zo_momentum > 0
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
  MemoryPlan plan = net.plan(cfg.batch, head, cfg.threads, frozen, lanes(cfg, head, frozen));
  // Momentum buffers: the SGD ones of the head, then the ZO ones of the trained body.
  for (bool in_head : {true, false}) {
    if ((in_head ? cfg.momentum : cfg.zo_momentum) <= 0) continue;
    for (int i = frozen; i < net.num_layers(); ++i)
      if ((i >= head) == in_head)
        for (const ParamSpec& ps : net.layer(i).param_specs())
          plan.add(i, net.layer(i).describe() + " " + ps.name + " momentum", Bucket::kOptimizer,
                   ps.shape.numel() * sizeof(float));
  }
  return plan;
}

std::unique_ptr<Engine> make_f32_engine(const EngineArgs& args) {
  return std::make_unique<F32Engine>(args);
}

}  // namespace zotrain
