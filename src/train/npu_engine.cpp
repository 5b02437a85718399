// The int8-npu engine: ZO fine-tuning of an NPU-style int8 program (NpuNetwork), with float
// master weights on the host, re-quantized with their fixed scales after each update.
#include <algorithm>

#include "engine.h"
#include "zo_step.h"
#include "zotrain/core/error.h"
#include "zotrain/models/serialize.h"
#include "zotrain/nn/loss.h"
#include "zotrain/nn/npu/npu_network.h"
#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

class NpuEngine : public Engine {
 public:
  explicit NpuEngine(const EngineArgs& a)
      : cfg_(a.cfg), net_(a.net), pool_(a.pool), data_(a.data), frozen_(a.frozen) {
    net_.allocate(a.arena, cfg_.batch, a.head, &pool_, cfg_.seed, frozen_, 1);
    sgd_ = std::make_unique<Sgd>(net_, a.arena, cfg_.momentum, cfg_.weight_decay);
    if (a.init) restore_params(a.init->file, a.init->path, net_);
    npu_ = std::make_unique<NpuNetwork>(net_, cfg_.batch, &pool_);
    if (cfg_.cache_features)
      features_.resize(static_cast<size_t>(cfg_.batch * npu_->prefix_numel(frozen_)));
    calibrate();
    if (cfg_.zo_momentum > 0)
      for (const NpuParam* p : trained_params()) {
        zo_momentum_.push_back(a.arena.alloc(Bucket::kOptimizer, p->master.shape()));
        zo_momentum_.back().fill(0.0f);
      }
    sparsity_ = parse_sparsity(cfg_.sparsity);
  }

  int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels, bool features) override {
    if (!features) return batches.fill(index, net_.input(cfg_.batch).data(), labels);
    const int64_t rows = batches.fill(index, features_.data(), labels);
    npu_->set_prefix_output(frozen_, features_.data(), rows);
    return rows;
  }

  // The q ±1 integer perturbation pairs on the int8 program, the update on the host's master
  // weights, re-quantized with their fixed scales.
  StepResult step(const StepInput& in) override {
    const zo::PerturbationSpec spec{zo::Distribution::kRademacher,
                                    static_cast<float>(schedule_at(sparsity_, in.epoch))};
    if (!in.features) {
      npu_->set_input(net_.input(in.rows).data(), in.rows);
      npu_->forward_prefix(in.rows, frozen_);
    }
    StepResult r;
    const auto passes = [&](const std::vector<zo::Direction>& dirs, double* loss) {
      for (size_t i = 0; i < dirs.size(); ++i) {
        const NpuNetwork::Perturb p{dirs[i].seed, dirs[i].sign, spec.p_zero, frozen_};
        loss[i] = softmax_cross_entropy(npu_->forward(in.rows, frozen_, &p), in.labels, nullptr,
                                        i == 0 ? &r.correct : nullptr);
      }
      r.forward_passes += static_cast<int64_t>(dirs.size());
    };
    // The loss change per integer step along z; dividing by S_w (in the learning rate below)
    // makes it the float directional derivative.
    const auto project = [](double plus, double minus) {
      return static_cast<float>(0.5 * (plus - minus));
    };
    const auto update = [&](const zo::Estimate& est) {
      size_t m = 0;
      for (NpuParam* p : trained_params()) {
        Tensor* mom = zo_momentum_.empty() ? nullptr : &zo_momentum_[m++];
        zo::apply_update(spec, est, static_cast<uint32_t>(p->param_index),
                         static_cast<float>(in.zo_lr) / p->scale, p->master, mom,
                         static_cast<float>(cfg_.zo_momentum), &pool_);
        npu_->requantize(*p);
      }
    };
    const std::vector<double> loss =
        zo::run_step({cfg_.seed, in.step, in.q, true}, 0.0, passes, project, update);
    double sum = 0;
    for (int s = 0; s < in.q; ++s) sum += loss[2 * s] + loss[2 * s + 1];
    r.loss = sum / (2 * in.q);
    return r;
  }

  double evaluate(BatchSource& batches, bool features) override {
    return accuracy(batches, cfg_.batch, [&](int64_t b, uint8_t* labels) {
      int64_t rows = 0;
      if (features) {
        rows = batches.fill(b, features_.data(), labels);
        npu_->set_prefix_output(frozen_, features_.data(), rows);
      } else {
        rows = batches.fill(b, net_.input(cfg_.batch).data(), labels);
        npu_->set_input(net_.input(rows).data(), rows);
      }
      int64_t c = 0;
      softmax_cross_entropy(npu_->forward(rows, features ? frozen_ : 0, nullptr), labels, nullptr,
                            &c);
      return std::pair{rows, c};
    });
  }

  FeatureSet extract_features(BatchSource& images, int64_t examples) override {
    return zotrain::extract_features(images, examples, npu_->prefix_numel(frozen_),
                                     FrozenRun<int8_t>([&](int64_t b, uint8_t* labels) {
                                       const int64_t rows =
                                           images.fill(b, net_.input(cfg_.batch).data(), labels);
                                       npu_->set_input(net_.input(rows).data(), rows);
                                       npu_->forward_prefix(rows, frozen_);
                                       return std::pair{rows, npu_->prefix_output(frozen_)};
                                     }));
  }

  void forward(int64_t rows) override {
    npu_->set_input(net_.input(rows).data(), rows);
    npu_->forward(rows, 0, nullptr);
  }

  CheckpointParts checkpoint() override { return {&net_, sgd_.get(), state()}; }

  void resume(const Checkpoint& ckpt) override {
    if (cfg_.npu_recalibrate)
      throw InputError(ckpt.path +
                       ": an int8-npu run with npu_recalibrate 1 cannot resume (its recalibrated "
                       "scales are not in the checkpoint)");
    restore_checkpoint(ckpt, &net_, sgd_.get(), state());
    for (const NpuParam* p : trained_params()) npu_->requantize(*p);
  }

  // A grown q marks a plateau: with npu_recalibrate, the scales are fitted to the weights now.
  bool on_plateau() override {
    if (!cfg_.npu_recalibrate) return false;
    calibrate();
    return true;
  }

  int64_t num_parameters() const override { return net_.num_param_elements(); }
  size_t device_bytes() const override { return npu_->bytes(); }
  NpuNetwork* npu_network() override { return npu_.get(); }

 private:
  // Observes the float program on the first npu_calibration_batches training batches and fixes
  // the scales.
  void calibrate() {
    auto batches = data_.batches(Split::kTrain, cfg_.batch, false, 0);
    const int64_t n = std::min<int64_t>(cfg_.npu_calibration_batches, batches->batches_per_epoch());
    npu_->reset_observations();
    for (int64_t b = 0; b < n; ++b) {
      const int64_t rows = batches->fill(b, net_.input(cfg_.batch).data(), nullptr);
      npu_->float_forward(net_.input(rows).data(), rows, true);
    }
    npu_->calibrate();
  }

  // The NPU weights the run trains: those of the layers after the frozen ones.
  std::vector<NpuParam*> trained_params() const {
    std::vector<NpuParam*> trained;
    for (NpuParam& p : npu_->params())
      if (p.layer >= frozen_) trained.push_back(&p);
    return trained;
  }

  std::vector<std::pair<std::string, Tensor>> state() const {
    std::vector<std::pair<std::string, Tensor>> state;
    size_t m = 0;
    for (const NpuParam* p : trained_params()) {
      const std::string id = std::to_string(p->param_index);
      state.emplace_back("npu_master/" + id, p->master);
      if (!zo_momentum_.empty()) state.emplace_back("zo_momentum/npu" + id, zo_momentum_[m++]);
    }
    return state;
  }

  const TrainConfig& cfg_;
  Network& net_;  // the f32 model the program came from; its input buffer feeds the program
  ThreadPool& pool_;
  const RunData& data_;
  int frozen_;
  std::unique_ptr<Sgd> sgd_;
  std::unique_ptr<NpuNetwork> npu_;
  std::vector<int8_t> features_;     // one batch of cached int8 features (cache_features)
  std::vector<Tensor> zo_momentum_;  // per trained NPU weight, when zo_momentum > 0
  std::vector<std::pair<int, double>> sparsity_;
};

}  // namespace

std::unique_ptr<Engine> make_npu_engine(const EngineArgs& args) {
  return std::make_unique<NpuEngine>(args);
}

}  // namespace zotrain
