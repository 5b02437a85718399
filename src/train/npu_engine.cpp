// The int8-npu engine: ZO fine-tuning of an NPU-style int8 program (NpuNetwork), with float
// master weights on the host, re-quantized with their fixed scales after each update.
#include <algorithm>
#include <cmath>

#include "engine.h"
#include "models/serialize.h"
#include "nn/loss.h"
#include "nn/npu/npu_network.h"
#include "step_split.h"
#include "zo_step.h"
#include "zotrain/core/error.h"
#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

namespace {

class NpuEngine : public Engine {
 public:
  explicit NpuEngine(const EngineArgs& a)
      : cfg_(a.cfg),
        net_(a.net),
        pool_(a.pool),
        data_(a.data),
        frozen_(a.frozen),
        split_(a.cfg.distributed, dist::world()) {
    // The f32 network only holds the model (and the input batch): the program runs it.
    net_.allocate_parameters(a.arena, cfg_.batch, cfg_.seed);
    if (a.init) restore_params(a.init->file, a.init->path, net_);
    npu_ = std::make_unique<NpuNetwork>(net_, cfg_.batch, &pool_, frozen_);
    npu_->allocate(a.arena);
    if (cfg_.cache_features)
      features_ = static_cast<int8_t*>(a.arena.alloc_bytes(Bucket::kInput, feature_bytes()));
    // An int8-npu checkpoint brings its scales and master weights: nothing to calibrate.
    if (a.init && a.init->file.find(kScales))
      restore_program(*a.init);
    else
      calibrate();
    if (cfg_.zo_momentum > 0)
      for (const NpuParam* p : trained_params()) {
        zo_momentum_.push_back(a.arena.alloc(Bucket::kOptimizer, p->master.shape()));
        zo_momentum_.back().fill(0.0f);
      }
    sparsity_ = parse_sparsity(cfg_.sparsity);
  }

  int64_t fill(const BatchSource& batches, int64_t index, uint8_t* labels, bool features) override {
    // Data mode: only this rank's rows, from the first row, where the program reads them.
    if (!features)
      return batches.fill(index, net_.input(cfg_.batch).data(), labels, split_.share());
    const int64_t rows = batches.fill(index, features_, labels);
    npu_->set_prefix_output(frozen_, features_, rows);
    return rows;
  }

  // The q ±1 integer perturbation pairs on the int8 program, the update on the host's master
  // weights, re-quantized with their fixed scales.
  StepResult step(const StepInput& in) override {
    const zo::PerturbationSpec spec{zo::Distribution::kRademacher,
                                    static_cast<float>(schedule_at(sparsity_, in.epoch))};
    const int64_t local = split_.rows(in.rows).size();  // fill() loaded them
    if (!in.features && local > 0) {
      npu_->set_input(net_.input(local).data(), local);
      npu_->forward_prefix(local, frozen_);
    }
    StepResult r;
    const auto passes = [&](const std::vector<zo::Direction>& dirs, double* loss) {
      r.forward_passes += static_cast<int64_t>(dirs.size());
      if (split_.on()) return distributed_passes(dirs, spec, in, &r, loss);
      for (size_t i = 0; i < dirs.size(); ++i) {
        const NpuNetwork::Perturb p{dirs[i].seed, dirs[i].sign, spec.p_zero, frozen_};
        loss[i] = softmax_cross_entropy(npu_->forward(in.rows, frozen_, &p), in.labels, nullptr,
                                        i == 0 ? &r.correct : nullptr);
      }
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
        const zo::UpdateRule rule{zo::Optimizer::kSgd, static_cast<float>(in.zo_lr) / p->scale,
                                  static_cast<float>(cfg_.zo_momentum)};
        zo::apply_update(spec, est, static_cast<uint32_t>(p->param_index), rule, p->master, {mom},
                         &pool_);
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
        rows = batches.fill(b, features_, labels);
        npu_->set_prefix_output(frozen_, features_, rows);
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

  int64_t predict(const BatchSource& batches, int64_t index, float* logits) override {
    const int64_t rows = batches.fill(index, net_.input(cfg_.batch).data(), nullptr);
    npu_->set_input(net_.input(rows).data(), rows);
    const Tensor out = npu_->forward(rows, 0, nullptr);
    std::copy(out.data(), out.data() + out.numel(), logits);
    return rows;
  }

  // The program's float master weights (batch norm folded in), named after the model's weight
  // each came from; written only through set_parameter, which re-quantizes them.
  std::vector<ParamView> parameters() override {
    std::vector<ParamView> views;
    for (NpuParam& p : npu_->params())
      views.push_back({net_.params()[p.param_index].name, ParamView::Type::kF32, p.master.data(),
                       p.master.shape(), 0, false});
    return views;
  }

  void parameters_changed() override {
    for (const NpuParam& p : npu_->params()) npu_->requantize(p);
  }

  CheckpointParts checkpoint() override {
    std::vector<std::pair<std::string, Tensor>> state = momentum_state();
    for (const NpuParam* p : trained_params())
      state.emplace_back(kMaster + std::to_string(p->param_index), p->master);
    const std::vector<float> scales = npu_->scales();
    scales_ = Tensor::zeros(Shape{static_cast<int64_t>(scales.size())});
    std::copy(scales.begin(), scales.end(), scales_.data());
    state.emplace_back(kScales, scales_);
    return {&net_, nullptr, state};
  }

  void resume(const Checkpoint& ckpt) override {
    if (cfg_.npu_recalibrate && !ckpt.file.find(kScales))
      throw InputError(ckpt.path +
                       ": an int8-npu run with npu_recalibrate 1 cannot resume from a checkpoint "
                       "without its scales (npu_scales: written since issue 16)");
    restore_checkpoint(ckpt, &net_, nullptr, momentum_state());
    restore_program(ckpt);
  }

  // A grown q marks a plateau: with npu_recalibrate, the scales are fitted to the weights now.
  bool on_plateau() override {
    if (!cfg_.npu_recalibrate) return false;
    calibrate();
    return true;
  }

  int64_t num_parameters() const override { return net_.num_param_elements(); }
  size_t device_bytes() const override { return npu_->bytes(); }
  // One batch of cached int8 features.
  size_t feature_bytes() const {
    return static_cast<size_t>(cfg_.batch * npu_->prefix_numel(frozen_));
  }
  NpuNetwork* npu_network() override { return npu_.get(); }

 private:
  // Distributed (docs/distributed.md): each rank runs its rows of every pass, or whole samples,
  // and the ranks exchange losses.
  void distributed_passes(const std::vector<zo::Direction>& dirs, const zo::PerturbationSpec& spec,
                          const StepInput& in, StepResult* r, double* loss) {
    const auto run = [&](size_t a, size_t b, int64_t rows, const auto& emit) {
      for (size_t k = a; k < b; ++k) {
        const NpuNetwork::Perturb p{dirs[k].seed, dirs[k].sign, spec.p_zero, frozen_};
        emit(k, npu_->forward(rows, frozen_, &p));
      }
    };
    exchange_losses(split_, dirs.size(), 1, 2, in.rows, in.labels, loss_send_, loss_gathered_, run,
                    loss, &r->correct);
  }

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

  std::vector<std::pair<std::string, Tensor>> momentum_state() const {
    std::vector<std::pair<std::string, Tensor>> state;
    size_t m = 0;
    if (!zo_momentum_.empty())
      for (const NpuParam* p : trained_params())
        state.emplace_back("zo_momentum/npu" + std::to_string(p->param_index), zo_momentum_[m++]);
    return state;
  }

  // The program of a checkpoint: every master weight it holds (those its run trained) and its
  // scales; a checkpoint from before the scales were kept keeps this run's calibration.
  void restore_program(const Checkpoint& ckpt) {
    for (NpuParam& p : npu_->params()) {
      const std::string name = kMaster + std::to_string(p.param_index);
      if (ckpt.file.find(name))
        p.master.copy_from(ckpt.file.get(name, p.master.shape(), ckpt.path));
    }
    if (!ckpt.file.find(kScales)) {
      for (const NpuParam& p : npu_->params()) npu_->requantize(p);
      return;
    }
    const Tensor& t =
        ckpt.file.get(kScales, Shape{static_cast<int64_t>(npu_->num_scales())}, ckpt.path);
    for (int64_t i = 0; i < t.numel(); ++i)
      if (!(t[i] > 0) || !std::isfinite(t[i]))
        throw InputError(ckpt.path + ": tensor " + kScales + " holds a scale that is not > 0");
    npu_->set_scales(std::vector<float>(t.data(), t.data() + t.numel()));
  }

  static constexpr const char* kMaster = "npu_master/";
  static constexpr const char* kScales = "npu_scales";

  const TrainConfig& cfg_;
  Network& net_;  // the f32 model the program came from; its input buffer feeds the program
  ThreadPool& pool_;
  const RunData& data_;
  int frozen_;
  StepSplit split_;
  std::vector<double> loss_send_, loss_gathered_;  // distributed: exchange_losses' (bytes)
  std::unique_ptr<NpuNetwork> npu_;
  int8_t* features_ = nullptr;       // one batch of cached int8 features (cache_features)
  std::vector<Tensor> zo_momentum_;  // per trained NPU weight, when zo_momentum > 0
  Tensor scales_;                    // the scales of the last checkpoint()
  std::vector<std::pair<int, double>> sparsity_;
};

}  // namespace

MemoryPlan npu_plan(const Network& net, const TrainConfig& cfg, int, int frozen) {
  MemoryPlan plan = net.parameter_plan(cfg.batch);
  // The program's shapes come from folding a model of the same layers.
  std::vector<LayerSpec> specs;
  for (int i = 0; i < net.num_layers(); ++i) specs.push_back(net.spec(i));
  Network model(net.item_shape(), specs);
  Arena scratch;
  model.allocate_parameters(scratch, cfg.batch, 0);
  const NpuNetwork program(model, cfg.batch, nullptr, frozen);
  for (const MemoryRow& row : program.plan(cfg.threads).rows) plan.rows.push_back(row);
  if (cfg.cache_features)
    plan.add(frozen - 1, "npu cached features batch", Bucket::kInput,
             static_cast<size_t>(cfg.batch * program.prefix_numel(frozen)));
  if (cfg.zo_momentum > 0)
    for (const NpuParam& p : program.params())
      if (p.layer >= frozen)
        plan.add(p.layer, "npu master weights momentum", Bucket::kOptimizer,
                 static_cast<size_t>(p.master.numel()) * sizeof(float));
  return plan;
}

std::unique_ptr<Engine> make_npu_engine(const EngineArgs& args) {
  return std::make_unique<NpuEngine>(args);
}

}  // namespace zotrain
