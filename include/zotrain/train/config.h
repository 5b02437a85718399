// Everything that defines a training run. Each field is a CLI flag and a config-file key of
// the same name (with '-' for '_' on the command line); summary.json and checkpoints carry it.
#pragma once

#include <cstdint>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "zotrain/core/function_ref.h"
#include "zotrain/core/names.h"
#include "zotrain/zo/estimator.h"
#include "zotrain/zo/perturbation.h"

namespace zotrain {

enum class Method { kBp, kZo, kElastic };
enum class Precision { kF32, kInt8, kInt8Npu };
enum class QSchedule { kFixed, kQScheduler, kBudget };
enum class ZoUpdate { kGradient, kSign };
enum class HeadGrad { kPerturbed, kClean };
enum class ZoSign { kInteger, kFloat };
enum class BnDivisor { kPow2, kFixed };
enum class Distributed { kNone, kData, kDirections };

template <>
struct Names<Method> {
  static constexpr NameOf<Method> list[] = {
      {Method::kBp, "bp"}, {Method::kZo, "zo"}, {Method::kElastic, "elastic"}};
};
template <>
struct Names<Precision> {
  static constexpr NameOf<Precision> list[] = {
      {Precision::kF32, "f32"}, {Precision::kInt8, "int8"}, {Precision::kInt8Npu, "int8-npu"}};
};
template <>
struct Names<QSchedule> {
  static constexpr NameOf<QSchedule> list[] = {{QSchedule::kFixed, "fixed"},
                                               {QSchedule::kQScheduler, "qscheduler"},
                                               {QSchedule::kBudget, "budget"}};
};
template <>
struct Names<ZoUpdate> {
  static constexpr NameOf<ZoUpdate> list[] = {{ZoUpdate::kGradient, "gradient"},
                                              {ZoUpdate::kSign, "sign"}};
};
template <>
struct Names<HeadGrad> {
  static constexpr NameOf<HeadGrad> list[] = {{HeadGrad::kPerturbed, "perturbed"},
                                              {HeadGrad::kClean, "clean"}};
};
template <>
struct Names<Distributed> {
  static constexpr NameOf<Distributed> list[] = {{Distributed::kNone, "none"},
                                                 {Distributed::kData, "data"},
                                                 {Distributed::kDirections, "directions"}};
};
template <>
struct Names<BnDivisor> {
  static constexpr NameOf<BnDivisor> list[] = {{BnDivisor::kPow2, "pow2"},
                                               {BnDivisor::kFixed, "fixed"}};
};
template <>
struct Names<ZoSign> {
  static constexpr NameOf<ZoSign> list[] = {{ZoSign::kInteger, "integer"},
                                            {ZoSign::kFloat, "float"}};
};

// The defaults are the main job: ElasticZO (ZO-Feat-Cls1: BP on the last two layers) training
// LeNet-5 on Fashion-MNIST, with the hyperparameters of configs/fp32/lenet5-fashion-cls1.toml
// but 10 epochs instead of 20.
struct TrainConfig {
  std::string model = "lenet5";
  std::string data = "fashion-mnist";
  std::string out = "runs/default";
  bool overwrite = false;            // a new run may replace the results of another run in `out`
  Method method = Method::kElastic;  // bp: Full BP; zo: Full ZO; elastic: ZO body + BP head
  int bp_layers = 2;          // elastic: layers with parameters trained by BP, counted from the end
  int64_t memory_budget = 0;  // elastic: bytes; when set, picks the largest head that fits
  zo::Estimator estimator = zo::Estimator::kSpsa;  // central or forward difference
  zo::Distribution perturbation = zo::Distribution::kGaussian;
  std::string sparsity = "0";  // p_zero, or a schedule "P0,EPOCH:P1,..." e.g. "0.33,20:0.5,50:0.9"
  int q = 1;                   // perturbation samples per step (q_schedule fixed)
  QSchedule q_schedule = QSchedule::kFixed;  // fixed (q), qscheduler, budget (QScheduler,
                                             // q_max from q_budget)
  int q0 = 8;                                // QScheduler: the paper's defaults, q_scheduler.h
  int q_alpha = 2;
  int q_patience = 5;
  double q_tau = 0.0;
  double q_smoothing = 0.0;
  int q_max = 64;
  int64_t q_budget = 0;        // budget: forward passes the whole run may spend
  double q_lr_exponent = 0.0;  // q schedule: ZO step zo_lr (q / q0)^e (docs/design.md)
  double eps = 1e-3;           // perturbation radius
  double zo_lr = 5e-4;         // learning rate of the ZO-trained layers
  double zo_momentum = 0.0;    // momentum of the ZO update (costs a buffer per ZO parameter)
  double grad_clip = 1.0;      // clip the projected gradient to ±grad_clip (0: no clipping)
  // f32 ZO estimators (issue 17): zo/estimator.h. The defaults are plain SPSA + SGD.
  zo::Optimizer zo_optimizer = zo::Optimizer::kSgd;  // adam: ZO-AdaMM (β1 = zo_momentum or 0.9)
  zo::LayerScale zo_layer_scale = zo::LayerScale::kNone;
  double zo_cycle_power = 0.0;        // cyclic: layer l's share of the steps ∝ d_l^p (0: in turn)
  double zo_cycle_scale_power = 0.0;  // cyclic: the layer in turn's s_l² = (d̄ / d_l)^a
  bool zo_normalize = false;          // divide g by its running RMS (FZOO-style)
  // cyclic: a linear layer's turns perturb its outputs per example (zo/activity.h), stepped at
  // zo_activity_lr (with zo_lr's schedule) times (m_max / m_l)^zo_activity_scale_power
  bool zo_activity = false;
  double zo_activity_lr = 1e-3;
  double zo_activity_scale_power = 0.0;
  zo::Mask zo_mask = zo::Mask::kRandom;      // which elements `sparsity` zeroes
  ZoUpdate zo_update = ZoUpdate::kGradient;  // gradient: θ -= lr·g·z; sign: θ -= lr·sign(g)·z
  HeadGrad head_grad = HeadGrad::kPerturbed;  // elastic: head gradient from the perturbed passes,
                                              // or from an extra clean pass
  int epochs = 10;
  int64_t batch = 64;
  double lr = 0.05;
  double momentum = 0.9;
  double weight_decay = 0.0;
  // f32, int8: decay of an exponential moving average of the trained parameters, which
  // evaluation (validation, test, a checkpoint's evaluation and export) uses; 0: off. One more
  // copy of the trained parameters (int8: int32 averages and the mantissas set aside).
  double ema_decay = 0.0;
  // The average's warm-up: its decay at step t is min(ema_decay, (1 + t) / (ema_warmup + t)), so
  // until ema_decay caps it the average spans about the last 1 / (ema_warmup - 1) of the steps
  // (10: a ninth, TensorFlow's form; 3: half).
  int ema_warmup = 10;
  double lr_decay = 0.8;  // learning rate multiplied by lr_decay every lr_step epochs
  int lr_step = 10;
  uint64_t seed = 0;
  std::string init;      // checkpoint to start from (its parameters only): fine-tuning
  int train_layers = 0;  // train only the last N layers with parameters (0: all); the frozen
                         // layers before them run in evaluation mode, once per step
  // f32 BP head: residual blocks recompute their inner activations in backward from one shared
  // buffer instead of keeping their own (Network::allocate's recompute_blocks).
  bool recompute_blocks = false;
  bool cache_features = false;  // with train_layers: compute the frozen layers' output once per
                                // example of image data, not once per step (feature_cache.h)
  int threads = 1;
  int zo_lanes = 1;  // f32 ZO: perturbed passes run at once, one per thread, each with forward
                     // buffers of its own (more memory; results do not depend on it)
  // f32 SPSA: each sample's ±z passes take turns layer by layer, drawing each layer's z once
  // (Network::forward_pair): faster where drawing z is the cost (small batches), for one more
  // layer's z and the second pass's activations.
  bool zo_pair_passes = false;
  // Under mpirun (docs/distributed.md): each rank runs its rows of every pass (data) or its
  // share of the q samples on the whole batch (directions); the result does not depend on it.
  Distributed distributed = Distributed::kNone;
  int64_t train_limit = 0;  // 0: all training examples
  int64_t test_limit = 0;   // 0: all test examples
  int64_t val_size = 5000;  // held out from the training files for validation
  int64_t points = 1024;    // point clouds: points sampled from each cloud per pass
  // Images: pixels p become (p / 255 - input_mean) / input_std; input_std 0 takes both from the
  // training split. A model trained elsewhere (an ONNX file) needs its own training's values.
  double input_mean = 0.0;
  double input_std = 0.0;
  // Integer-only training (NITI int8, ElasticZO-INT8). lr, momentum, eps, zo_lr, grad_clip and
  // perturbation do not apply: updates are NITI's bit-width rule, z is ternary.
  Precision precision = Precision::kF32;  // f32, int8, or int8-npu (ZO on an NPU-style int8 net)
  ZoSign zo_sign = ZoSign::kInteger;      // int8 ZO: sign of the integer loss difference (INT8*,
                                          // Eq. 12) or of the float one (INT8)
  int int_eps = 1;                        // int8 ZO: perturbation radius, in weight mantissa units
  std::string bp_bits = "5,10:4,15:3";    // int8: bit width of the BP updates, or a schedule
  int zo_bits = 1;                        // int8: bit width of the ZO updates
  std::string zo_move = "1";      // int8 ZO: fraction of the perturbed body weights a step moves,
                                  // or a schedule "F0,EPOCH:F1,..." (an integer learning rate)
  int loss_frac_bits = 0;         // int8 ZO: fraction bits of the integer loss (0: Eq. 12)
  bool sign_agreement = false;    // int8 ZO: also compute the float loss difference and record
                                  // how often its sign agrees (metrics.jsonl)
  int64_t bn_stats_batches = 64;  // int8 with batch norm: training batches whose statistics are
                                  // averaged, weights fixed, before each evaluation (0: none)
  BnDivisor int_bn_divisor = BnDivisor::kPow2;  // int8 batch norm: divides each channel by the
                                                // power of two nearest its standard deviation,
                                                // or by the deviation itself (fixed point)
  // NPU-style int8 (nn/npu/npu_network.h): ±1 integer perturbations; eps, perturbation and
  // grad_clip do not apply.
  int npu_calibration_batches = 8;  // training batches the fixed scales are calibrated on
  bool npu_recalibrate = false;     // calibrate again whenever the q schedule grows q
};

// Whether the integer i is a value of the integer field type T, and that range as "[lo, hi]":
// config files and checkpoints are read through them, so 2^32 + 1 epochs is refused, not 1.
template <typename T>
bool field_holds(int64_t i) {
  return i >= static_cast<int64_t>(std::numeric_limits<T>::min()) &&
         (i < 0 ||
          static_cast<uint64_t>(i) <= static_cast<uint64_t>(std::numeric_limits<T>::max()));
}
template <typename T>
std::string field_range() {
  std::string r = "[";  // appended: GCC 12 warns (-Wrestrict) on "[" + std::string chains
  r += std::to_string(std::numeric_limits<T>::min());
  r += ", ";
  r += std::to_string(std::numeric_limits<T>::max());
  r += "]";
  return r;
}

// Visits every field as v(key, field, help): the single list that CLI flags, config files and
// JSON are built from. Fields are strings, integers, doubles, booleans (written true/false,
// read also as 1/0) and Named enums (written by name_of).
template <typename Config, typename Visitor>
void visit_config(Config& c, Visitor&& v) {
  v("model", c.model,
    "model: lenet5, pointnet, pointnet:nobn, mlp, mlp:W1,W2,..., resnet18[:WIDTH], "
    "mobilenetv2[:WIDTH] (e.g. resnet18:0.25)");
  v("data", c.data,
    "data set name (mnist, fashion-mnist, mnist-rotated[:DEG|:LO..HI], "
    "fashion-mnist-rotated[...], eurosat, stl10, modelnet40, modelnet40-standin) or folder "
    "(IDX files, STL-10 binaries, one sub-folder of JPEG images per class, or ModelNet40 HDF5 "
    "files)");
  v("out", c.out, "output folder for metrics.jsonl, summary.json, checkpoint.bin");
  v("overwrite", c.overwrite,
    "1 lets a new run replace another run's results in the output folder (otherwise refused; "
    "--resume continues one)");
  v("method", c.method, "training method: bp (Full BP), zo (Full ZO), elastic (ZO body, BP head)");
  v("bp_layers", c.bp_layers, "elastic: number of last layers with parameters trained by BP");
  v("memory_budget", c.memory_budget,
    "elastic: bytes; pick the largest BP head that fits (0: off)");
  v("estimator", c.estimator, "ZO estimator: spsa (central difference) or forward");
  v("perturbation", c.perturbation, "ZO perturbation: gaussian, rademacher or uniform");
  v("sparsity", c.sparsity,
    "probability of zeroing a perturbation element, or a schedule P0,EPOCH:P,...");
  v("q", c.q, "ZO perturbation samples per step");
  v("q_schedule", c.q_schedule,
    "q per epoch: fixed (q), qscheduler (grow q when validation stalls) or budget (qscheduler "
    "with q_max from q_budget)");
  v("q0", c.q0, "qscheduler: first q");
  v("q_alpha", c.q_alpha, "qscheduler: factor q grows by");
  v("q_patience", c.q_patience, "qscheduler: epochs without improvement before q grows");
  v("q_tau", c.q_tau, "qscheduler: validation accuracy gain that counts as improvement");
  v("q_smoothing", c.q_smoothing, "qscheduler: s of the smoothed accuracy M = s M + (1 - s) acc");
  v("q_max", c.q_max, "qscheduler: largest q");
  v("q_budget", c.q_budget,
    "budget: forward passes of the whole run; q_max is the largest q0 alpha^k whose fixed-q run "
    "fits");
  v("q_lr_exponent", c.q_lr_exponent,
    "qscheduler, budget: the ZO step is zo_lr (q / q0)^q_lr_exponent, in [0, 1] (0: it stays as q "
    "grows)");
  v("eps", c.eps, "ZO perturbation radius");
  v("zo_lr", c.zo_lr, "learning rate of the ZO-trained layers");
  v("zo_momentum", c.zo_momentum, "momentum of the ZO update");
  v("grad_clip", c.grad_clip, "clip the projected ZO gradient to this magnitude (0: off)");
  v("zo_update", c.zo_update, "ZO update: gradient or sign");
  v("zo_optimizer", c.zo_optimizer,
    "f32 ZO update rule: sgd (with zo_momentum) or adam (ZO-AdaMM, beta1 = zo_momentum or 0.9, "
    "beta2 0.999; two buffers per ZO parameter)");
  v("zo_layer_scale", c.zo_layer_scale,
    "ZO: scale each layer's perturbation and step: none, dim (equal energy per layer), "
    "rms (proportional to the layer's weight RMS), f32 only, or cyclic (one layer per step, in "
    "turn; also int8)");
  v("zo_cycle_power", c.zo_cycle_power,
    "f32 ZO, zo_layer_scale cyclic: layer l takes a share of the steps proportional to its "
    "size d_l^p, p in [-1, 1] (0: every layer in turn; below 0 the small layers more often)");
  v("zo_cycle_scale_power", c.zo_cycle_scale_power,
    "f32 ZO, zo_layer_scale cyclic: the layer in turn is perturbed by eps s_l and moved by "
    "lr s_l^2 with s_l^2 = (geometric mean of the layers' sizes / d_l)^a, a in [-1, 1] (0: "
    "unscaled; 1: dim's split, the small layers' steps larger)");
  v("zo_normalize", c.zo_normalize,
    "f32 ZO: 1 divides the projected gradient by its running RMS before grad_clip (FZOO-style)");
  v("zo_activity", c.zo_activity,
    "f32 ZO, zo_layer_scale cyclic, estimator spsa: 1 estimates each linear body layer on its "
    "turn by perturbing its outputs per example (each example's loss difference weights its "
    "own direction; the layer's input and gradient buffers more memory) instead of its weights, "
    "where no batch norm or residual block follows it");
  v("zo_activity_lr", c.zo_activity_lr,
    "zo_activity: learning rate of the linear layers' output-perturbation steps (decays with "
    "zo_lr's schedule)");
  v("zo_activity_scale_power", c.zo_activity_scale_power,
    "zo_activity: a linear layer of m outputs steps at zo_activity_lr (m_max / m)^a, m_max the "
    "widest such layer's, a in [0, 1] (0: one step for all; 1: inversely proportional to m, as "
    "the estimate's noise grows with m)");
  v("zo_mask", c.zo_mask,
    "f32 ZO: which elements sparsity zeroes: random, or magnitude (the largest |w|; the small "
    "weights are perturbed)");
  v("head_grad", c.head_grad, "elastic: head gradient from the perturbed passes or a clean pass");
  v("epochs", c.epochs, "number of epochs");
  v("batch", c.batch, "batch size");
  v("lr", c.lr, "learning rate");
  v("momentum", c.momentum, "SGD momentum");
  v("weight_decay", c.weight_decay, "L2 weight decay");
  v("ema_decay", c.ema_decay,
    "f32, int8: evaluate (and export) an exponential moving average of the trained parameters "
    "with this decay per step, in [0, 1) (0: off; one more copy of the trained parameters; "
    "int8 averages in int32 with the decay rounded to 1 - 2^-k)");
  v("ema_warmup", c.ema_warmup,
    "the average's decay at step t is min(ema_decay, (1 + t) / (ema_warmup + t)), an integer "
    ">= 2: it spans about the last 1 / (ema_warmup - 1) of the steps until ema_decay caps it");
  v("lr_decay", c.lr_decay, "learning-rate factor applied every lr_step epochs");
  v("lr_step", c.lr_step, "epochs between learning-rate decays");
  v("seed", c.seed, "seed of initialization, split and shuffling");
  v("init", c.init,
    "start from this checkpoint's parameters (fine-tuning); an f32 checkpoint also initializes "
    "an int8 run (quantized, biases dropped)");
  v("train_layers", c.train_layers,
    "fine-tuning: train only the last N layers with parameters, the others frozen (0: all)");
  v("recompute_blocks", c.recompute_blocks,
    "f32 backprop: 1 recomputes a residual block's inner activations in its backward (one block "
    "forward more per backward) instead of keeping every head block's (memory of one block's)");
  v("cache_features", c.cache_features,
    "with train_layers on image data: 1 computes the frozen layers' output once per example "
    "and keeps it in memory");
  v("threads", c.threads, "worker threads (results do not depend on it)");
  v("zo_lanes", c.zo_lanes,
    "f32 zo/elastic: run this many perturbed passes at once, one thread each, with forward "
    "buffers of their own (faster for small batches, more memory; results do not depend on it)");
  v("zo_pair_passes", c.zo_pair_passes,
    "f32 zo/elastic with spsa: 1 runs each sample's +z and -z passes layer by layer, drawing "
    "each layer's z once for both (faster at small batches; one layer's z and the second pass's "
    "activations more memory; results do not depend on it)");
  v("distributed", c.distributed,
    "under mpirun: data (each rank runs its share of each batch's rows) or directions (its share "
    "of the q samples, on the whole batch); zo and elastic only; results do not depend on it or "
    "on the number of ranks");
  v("train_limit", c.train_limit, "train on the first N examples only (0: all)");
  v("test_limit", c.test_limit, "image data: test on the first N test examples only (0: all)");
  v("val_size", c.val_size, "examples held out from the training files for validation");
  v("points", c.points, "point-cloud data: points sampled from each cloud (PointNet's 1024)");
  v("input_mean", c.input_mean,
    "images: the mean m of pixels x in [0, 1] that inputs are normalized by, (x - m) / s (with "
    "input_std; a model from elsewhere needs its training's)");
  v("input_std", c.input_std,
    "images: the standard deviation s of the normalization (0: mean and std of the training "
    "split's pixels)");
  v("precision", c.precision,
    "arithmetic: f32, int8 (NITI integer-only training) or int8-npu (ZO fine-tuning of an "
    "int8-quantized net, float master weights on the host)");
  v("zo_sign", c.zo_sign,
    "int8 ZO gradient: sign of the integer loss difference (integer, INT8*) or of the float one "
    "(float, INT8)");
  v("int_eps", c.int_eps, "int8 ZO perturbation radius in weight mantissa units (1..127)");
  v("bp_bits", c.bp_bits, "int8: bit width of BP updates, or a schedule B0,EPOCH:B,...");
  v("zo_bits", c.zo_bits, "int8: bit width of ZO updates");
  v("zo_move", c.zo_move,
    "int8 ZO: fraction in (0, 1] of the perturbed body weights a step moves (a random subset, "
    "drawn from the perturbation's mask), or a schedule F0,EPOCH:F,...");
  v("loss_frac_bits", c.loss_frac_bits,
    "int8 ZO: fraction bits of the integer loss (0: the paper's Eq. 12, floors)");
  v("sign_agreement", c.sign_agreement,
    "int8 ZO: 1 records how often the integer loss sign agrees with the float one");
  v("bn_stats_batches", c.bn_stats_batches,
    "int8 with batch norm: training batches whose statistics, averaged with the weights fixed, "
    "become the running ones before each evaluation (forward passes, counted); 0 keeps the "
    "exponential average of the training passes");
  v("int_bn_divisor", c.int_bn_divisor,
    "int8 batch norm: divide each channel by the power of two nearest its standard deviation "
    "(pow2, a shift) or by the deviation (fixed, a 12-bit fixed-point multiplier)");
  v("npu_calibration_batches", c.npu_calibration_batches,
    "int8-npu: training batches the quantization scales are calibrated on");
  v("npu_recalibrate", c.npu_recalibrate,
    "int8-npu: 1 recalibrates the scales whenever the q schedule grows q (a plateau)");
}

// The config as a JSON object, and back. from_json rejects unknown keys and wrong types with
// an InputError naming the key and `source` (a file name, or "checkpoint").
std::string config_to_json(const TrainConfig& cfg);
TrainConfig config_from_json(const std::string& json, const std::string& source);
// Checks values (positive batch, epochs >= 1, known method...); InputError naming the key.
void validate(const TrainConfig& cfg);
// The sparsity schedule as (first epoch, p_zero) pairs, epochs increasing from 0; InputError
// for text that is not "P" or "P0,EPOCH:P1,...".
std::vector<std::pair<int, double>> parse_sparsity(const std::string& text);
// A schedule "V0,EPOCH:V1,..." of values that pass `valid` ("before" applies before the first
// epoch given); InputError naming `key`, saying `what` is valid and showing `example`.
std::vector<std::pair<int, double>> parse_schedule(const std::string& key, const std::string& text,
                                                   bool (*valid)(double), const std::string& what,
                                                   const std::string& example, double before);
// The int8 BP bit-width schedule.
std::vector<std::pair<int, double>> parse_bp_bits(const std::string& text);
// The int8 ZO move-fraction schedule.
std::vector<std::pair<int, double>> parse_zo_move(const std::string& text);
// The value in force at a 0-based epoch.
double schedule_at(const std::vector<std::pair<int, double>>& schedule, int epoch);

// The best settings found for a method and precision: TrainConfig{} with the keys of that
// row changed (BP's learning rate, the int8 bit widths, ...). The CLI starts a run from them;
// config keys and flags still override them.
TrainConfig defaults_for(Method method, Precision precision);
// A new run's config from the user's keys, which `set_keys` writes (a config file, flags):
// over TrainConfig{} they choose the method and precision, then over that pair's defaults they
// make the run. A default the user's keys rule out yields: zo_activity where they choose a
// layer scale, estimator or lane count it cannot run with (or distribute ElasticZO).
TrainConfig resolve_with_defaults(FunctionRef<void(TrainConfig&)> set_keys);
// What defaults_for changes for cfg's method and precision, as "key value, key value" ("" for
// none), with cfg's own value after a key it differs in: the run's first line.
std::string defaults_note(const TrainConfig& cfg);

// The names of every key, for --help and error messages.
std::vector<std::string> config_keys();

}  // namespace zotrain
