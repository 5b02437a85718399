#include "zotrain/train/config.h"

#include <algorithm>
#include <array>
#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>
#include <stdexcept>
#include <type_traits>
#include <utility>

#include "zotrain/core/error.h"

namespace zotrain {

using nlohmann::json;

std::string config_to_json(const TrainConfig& cfg) {
  json j = json::object();
  visit_config(cfg, [&](const char* key, const auto& field, const char*) {
    using T = std::remove_cvref_t<decltype(field)>;
    if constexpr (Named<T>)
      j[key] = name_of(field);
    else
      j[key] = field;
  });
  return j.dump();
}

TrainConfig config_from_json(const std::string& text, const std::string& source) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::exception& e) {
    throw InputError(source + ": config is not valid JSON: " + e.what());
  }
  if (!j.is_object()) throw InputError(source + ": config must be a JSON object");
  TrainConfig cfg;
  size_t known = 0;
  visit_config(cfg, [&](const char* key, auto& field, const char*) {
    if (!j.contains(key)) return;
    ++known;
    using T = std::remove_cvref_t<decltype(field)>;
    const json& v = j.at(key);
    const auto wrong = [&] {
      return InputError(source + ": config key '" + key + "' has the wrong type");
    };
    if constexpr (Named<T>) {
      if (!v.is_string()) throw wrong();
      field = parse_name<T>(source + ": config key '" + key + "'", v.get<std::string>());
    } else if constexpr (std::is_same_v<T, bool>) {
      // Checkpoints written before the flags were booleans hold 0 or 1.
      if (v.is_boolean())
        field = v.get<bool>();
      else if (v.is_number_integer() && (v.get<int64_t>() == 0 || v.get<int64_t>() == 1))
        field = v.get<int64_t>() == 1;
      else
        throw wrong();
    } else if constexpr (std::is_integral_v<T>) {
      // In the field's range: get_to would narrow 4294967297 epochs to 1.
      const bool fits = v.is_number_unsigned()
                            ? v.get<uint64_t>() <= uint64_t{std::numeric_limits<int64_t>::max()} &&
                                  field_holds<T>(static_cast<int64_t>(v.get<uint64_t>()))
                            : v.is_number_integer() && field_holds<T>(v.get<int64_t>());
      if (!fits)
        throw InputError(source + ": config key '" + key + "' must be an integer in " +
                         field_range<T>());
      field = static_cast<T>(v.get<int64_t>());
    } else {
      try {
        v.get_to(field);
      } catch (const json::exception&) {
        throw wrong();
      }
    }
  });
  if (known != j.size())
    for (const auto& [key, value] : j.items()) {
      auto keys = config_keys();
      if (std::find(keys.begin(), keys.end(), key) == keys.end())
        throw InputError(source + ": unknown config key '" + key + "'");
    }
  return cfg;
}

namespace {

// The best settings found per (method, precision), as the keys they change from TrainConfig{}
// (whose values are the f32 ElasticZO rows' of the paper's Table 1, the main job's before
// 2026-12-02). Where each comes from: docs/reproduction.md,
// "Defaults per method and precision".
struct DefaultsRow {
  Method method;
  Precision precision;
  const char* keys;  // a JSON object
};
// Every int8 method: NITI's bit-width schedule fitted to the default 10 epochs, and ZO with
// ε = 15 mantissa units and 8 fraction bits of integer loss (the tuned INT8* rows). Batch norm
// divides by the deviation in fixed point: PointNet INT8* Cls1 / Cls2 over 45 epochs +8.3 / +10.7
// points of validation, 6 seeds (docs/reproduction.md, "Twenty-fifth session's runs").
#define ZT_INT8_KEYS \
  R"("bp_bits": "5,5:4,8:3", "int_eps": 15, "loss_frac_bits": 8, "int_bn_divisor": "fixed")"
// INT8 Full BP and ElasticZO-INT8 are evaluated on the weights' integer average: +1.0 and +1.3
// points of test at 10 epochs (3 seeds; Full ZO does not gain). ElasticZO-INT8 also moves one
// body layer per step, in turn (block-coordinate ZO): +0.9 and +1.9 points on the paper's
// schedule, +1.2 and +0.4 at 10 epochs (Cls1, Cls2; 3 seeds).
constexpr const char* kInt8Keys = "{" ZT_INT8_KEYS "}";
constexpr const char* kBpInt8Keys = "{" ZT_INT8_KEYS R"(, "ema_decay": 0.999})";
constexpr const char* kElasticInt8Keys =
    "{" ZT_INT8_KEYS R"(, "zo_layer_scale": "cyclic", "ema_decay": 0.999})";
#undef ZT_INT8_KEYS
constexpr DefaultsRow kDefaults[] = {
    {Method::kBp, Precision::kF32, R"({"lr": 0.01})"},
    // Block-coordinate ZO with the linear layers estimated by their outputs, each stepping by
    // its output count: validation 68.57 against 62.56 % for {zo_lr 2e-4, zo_layer_scale dim} on
    // the main job's 10 epochs, 83.78 % test over 100 epochs (3 seeds each, LeNet-5).
    {Method::kZo, Precision::kF32,
     R"({"zo_layer_scale": "cyclic", "zo_lr": 1.5e-3, "zo_activity": true,
         "zo_activity_scale_power": 1, "zo_activity_lr": 8e-3})"},
    // Block-coordinate ZO at its tuned step: +0.5 (Cls1) and +1.1 (Cls2) points on the paper's
    // schedule, +0.5 / +0.6 at 20 epochs, +0.5 on the main job's 10 epochs (3 seeds each), and
    // a cheaper step (one layer perturbed). Evaluated on the parameters' average: +2.0 points of
    // validation on the main job's 10 epochs (3 seeds); training is unchanged by it.
    {Method::kElastic, Precision::kF32,
     R"({"zo_layer_scale": "cyclic", "zo_lr": 1.5e-3, "ema_decay": 0.999})"},
    {Method::kBp, Precision::kInt8, kBpInt8Keys},
    {Method::kZo, Precision::kInt8, kInt8Keys},
    {Method::kElastic, Precision::kInt8, kElasticInt8Keys},
    {Method::kZo, Precision::kInt8Npu, "{}"},
};

const DefaultsRow* defaults_row(Method method, Precision precision) {
  for (const DefaultsRow& r : kDefaults)
    if (r.method == method && r.precision == precision) return &r;
  return nullptr;  // a combination validate() refuses
}

}  // namespace

TrainConfig defaults_for(Method method, Precision precision) {
  json j = json::parse(config_to_json(TrainConfig{}));
  if (const DefaultsRow* r = defaults_row(method, precision)) j.update(json::parse(r->keys));
  j["method"] = name_of(method);
  j["precision"] = name_of(precision);
  return config_from_json(j.dump(), "defaults");
}

namespace {

// Whether a run can estimate layers by their outputs (zo_activity): each example's ±ε pair of
// losses (SPSA on one lane; distributed, with no head to backprop from the ranks' passes) for
// the one layer in turn.
bool activity_fits(const TrainConfig& c) {
  return c.zo_layer_scale == zo::LayerScale::kCyclic && c.estimator == zo::Estimator::kSpsa &&
         c.zo_lanes == 1 && (c.distributed == Distributed::kNone || c.method == Method::kZo);
}

}  // namespace

TrainConfig resolve_with_defaults(FunctionRef<void(TrainConfig&)> set_keys) {
  TrainConfig users;
  set_keys(users);
  TrainConfig cfg = defaults_for(users.method, users.precision);
  set_keys(cfg);
  // Refusing a key the user never set would make them undo our default; one they set is refused.
  if (cfg.zo_activity && !users.zo_activity && !activity_fits(cfg)) cfg.zo_activity = false;
  return cfg;
}

std::string defaults_note(const TrainConfig& cfg) {
  const DefaultsRow* r = defaults_row(cfg.method, cfg.precision);
  std::string note;
  if (!r) return note;
  const auto text = [](const json& value) {
    return value.is_string() ? value.get<std::string>() : value.dump();
  };
  const json keys = json::parse(r->keys), run = json::parse(config_to_json(cfg));
  for (auto it = keys.begin(); it != keys.end(); ++it) {
    note += (note.empty() ? "" : ", ") + it.key() + " " + text(it.value());
    if (run[it.key()] != it.value()) note += " (this run: " + text(run[it.key()]) + ")";
  }
  return note;
}

std::vector<std::string> config_keys() {
  std::vector<std::string> keys;
  TrainConfig cfg;
  visit_config(cfg, [&](const char* key, auto&, const char*) { keys.push_back(key); });
  return keys;
}

namespace {

void need(bool ok, const std::string& key, const std::string& expected) {
  if (!ok) throw InputError("config key '" + key + "': expected " + expected);
}

// The two powers of block-coordinate ZO's turns, which share their checks.
std::array<std::pair<const char*, double>, 2> cycle_powers(const TrainConfig& c) {
  return {{{"zo_cycle_power", c.zo_cycle_power}, {"zo_cycle_scale_power", c.zo_cycle_scale_power}}};
}

// What each integer precision cannot run.
void validate_precision(const TrainConfig& c) {
  if (c.precision != Precision::kF32) {
    // The int8 updates are integer rules of their own (NITI's bit widths, the NPU's masters).
    const std::string f32_only = " unless precision is f32";
    need(c.zo_optimizer == zo::Optimizer::kSgd, "zo_optimizer", "sgd" + f32_only);
    // Block-coordinate ZO is a choice of layers, which the integer step makes too.
    need(c.zo_layer_scale == zo::LayerScale::kNone ||
             (c.zo_layer_scale == zo::LayerScale::kCyclic && c.precision == Precision::kInt8),
         "zo_layer_scale", "none (or cyclic with precision int8)" + f32_only);
    for (const auto& [key, value] : cycle_powers(c)) need(value == 0, key, "0" + f32_only);
    need(!c.zo_normalize, "zo_normalize", "0" + f32_only);
    need(!c.zo_activity, "zo_activity", "0" + f32_only);
    need(c.zo_mask == zo::Mask::kRandom, "zo_mask", "random" + f32_only);
  }
  if (c.precision == Precision::kInt8Npu) {
    need(c.method == Method::kZo, "method",
         "zo with precision int8-npu (the NPU runs forward only)");
    need(c.estimator == zo::Estimator::kSpsa, "estimator", "spsa with precision int8-npu");
  }
  if (c.precision == Precision::kInt8) {
    need(c.estimator == zo::Estimator::kSpsa, "estimator", "spsa with precision int8");
    need(c.zo_momentum == 0, "zo_momentum", "0 with precision int8");
    need(c.q_lr_exponent == 0, "q_lr_exponent", "0 with precision int8 (its ZO steps are bits)");
    need(c.memory_budget == 0, "memory_budget", "0 with precision int8");
    need(c.train_layers == 0, "train_layers", "0 with precision int8 (NITI trains every layer)");
  }
}

}  // namespace

void validate(const TrainConfig& c) {
  // Every number finite and one a float holds: the f32 path takes eps, lr and zo_lr as floats,
  // where 1e300 is inf and 1e-300 zero (NaN weights, or no step at all).
  visit_config(c, [&](const char* key, const auto& field, const char*) {
    using T = std::remove_cvref_t<decltype(field)>;
    if constexpr (std::is_floating_point_v<T>)
      need(std::isfinite(field) && std::fabs(field) <= 1e30 &&
               (field == 0 || std::fabs(field) >= 1e-30),
           key, "a finite number, 0 or of magnitude in [1e-30, 1e30]");
  });
  // Counts whose products must not overflow (q * q_alpha, batch * features).
  need(c.epochs <= 1000000, "epochs", "an integer in [1, 10^6]");
  need(c.batch <= (int64_t{1} << 24), "batch", "an integer in [1, 2^24]");
  need(c.bp_layers <= 1 << 16 && c.train_layers <= 1 << 16, "bp_layers and train_layers",
       "integers in [0, 2^16]");
  need(c.q0 <= 1 << 20 && c.q_max <= 1 << 20, "q0 and q_max", "integers in [1, 2^20], as q");
  need(c.q_alpha <= 1 << 10, "q_alpha", "an integer in [2, 1024]");
  need(c.points <= 1 << 24, "points", "an integer in [1, 2^24]");
  need(c.bp_layers >= 0, "bp_layers", "an integer >= 0");
  need(c.memory_budget >= 0, "memory_budget", "a number of bytes >= 0");
  need(c.memory_budget == 0 || c.method == Method::kElastic, "memory_budget",
       "to be used with method elastic");
  parse_sparsity(c.sparsity);
  need(c.q >= 1 && c.q <= 1 << 20, "q", "an integer in [1, 2^20]");
  need(c.eps > 0, "eps", "a positive number");
  need(c.zo_lr > 0, "zo_lr", "a positive number");
  need(c.zo_momentum >= 0 && c.zo_momentum < 1, "zo_momentum", "a number in [0, 1)");
  need(c.grad_clip >= 0, "grad_clip", "a number >= 0");
  need(c.zo_activity_lr > 0, "zo_activity_lr", "a positive number");
  need(c.zo_activity_scale_power >= 0 && c.zo_activity_scale_power <= 1, "zo_activity_scale_power",
       "a number in [0, 1]");
  need(!c.zo_activity || activity_fits(c), "zo_activity",
       "0 unless zo_layer_scale is cyclic, estimator spsa, zo_lanes 1 and "
       "distributed none (or method zo)");
  need(c.epochs >= 1, "epochs", "an integer >= 1");
  need(c.batch >= 1, "batch", "an integer >= 1");
  need(c.lr > 0, "lr", "a positive number");
  need(c.momentum >= 0 && c.momentum < 1, "momentum", "a number in [0, 1)");
  need(c.weight_decay >= 0, "weight_decay", "a number >= 0");
  need(c.ema_decay >= 0 && c.ema_decay < 1, "ema_decay", "a number in [0, 1)");
  need(c.ema_warmup >= 2, "ema_warmup", "an integer >= 2");
  need(!c.recompute_blocks || c.precision == Precision::kF32, "recompute_blocks",
       "0 for precision int8 and int8-npu (an option of the f32 network)");
  need(c.ema_decay == 0 || c.precision != Precision::kInt8Npu, "ema_decay",
       "0 for precision int8-npu (its program is quantized from the masters once per run)");
  need(c.lr_decay > 0 && c.lr_decay <= 1, "lr_decay", "a number in (0, 1]");
  need(c.lr_step >= 1, "lr_step", "an integer >= 1");
  need(c.threads >= 1 && c.threads <= 256, "threads", "an integer in [1, 256]");
  need(c.zo_lanes >= 1 && c.zo_lanes <= c.threads, "zo_lanes",
       "an integer in [1, threads]: each lane's passes run on a thread of their own");
  need(c.zo_lanes == 1 || (c.precision == Precision::kF32 && c.method != Method::kBp), "zo_lanes",
       "1 unless precision is f32 and method zo or elastic (the runs with perturbed passes)");
  need(!c.zo_pair_passes || (c.precision == Precision::kF32 && c.method != Method::kBp &&
                             c.estimator == zo::Estimator::kSpsa && c.zo_lanes == 1),
       "zo_pair_passes",
       "0 unless precision is f32, method zo or elastic, estimator spsa and zo_lanes 1");
  need(c.distributed == Distributed::kNone || (c.method != Method::kBp && c.zo_lanes == 1),
       "distributed", "none unless method is zo or elastic with zo_lanes 1 (ranks replace lanes)");
  need(c.distributed != Distributed::kData || c.cache_features == false, "distributed",
       "directions or none with cache_features 1");
  need(c.train_limit >= 0, "train_limit", "an integer >= 0");
  need(c.test_limit >= 0, "test_limit", "an integer >= 0");
  need(c.train_layers >= 0, "train_layers", "an integer >= 0");
  need(!c.cache_features || c.train_layers > 0, "cache_features",
       "0 unless train_layers freezes layers to cache");
  need(c.train_layers == 0 || c.method != Method::kElastic || c.bp_layers <= c.train_layers,
       "bp_layers", "at most train_layers: the BP head lies among the trained layers");
  need(c.val_size >= 0, "val_size", "an integer >= 0");
  need(c.points >= 1, "points", "an integer >= 1");
  need(c.input_std >= 0 && c.input_std <= 1e3 && std::fabs(c.input_mean) <= 1e3, "input_std",
       "a number in [0, 1000] (0: from the training split), with |input_mean| <= 1000");
  need(c.input_std > 0 || c.input_mean == 0, "input_mean",
       "0 unless input_std is given: both come from the training split");
  need(c.q0 >= 1, "q0", "an integer >= 1");
  need(c.q_alpha >= 2, "q_alpha", "an integer >= 2");
  need(c.q_patience >= 1, "q_patience", "an integer >= 1");
  need(c.q_tau >= 0, "q_tau", "a number >= 0");
  need(c.q_smoothing >= 0 && c.q_smoothing < 1, "q_smoothing", "a number in [0, 1)");
  need(c.q_max >= 1, "q_max", "an integer >= 1");
  need(c.q_budget >= 0, "q_budget", "an integer >= 0");
  need(c.q_lr_exponent >= 0 && c.q_lr_exponent <= 1, "q_lr_exponent", "a number in [0, 1]");
  need(c.q_lr_exponent == 0 || c.q_schedule != QSchedule::kFixed, "q_lr_exponent",
       "0 for q_schedule fixed (set zo_lr for the fixed q)");
  need(c.q_schedule != QSchedule::kBudget || c.q_budget > 0, "q_budget",
       "a positive number of forward passes for q_schedule budget");
  need(c.q_schedule == QSchedule::kFixed || c.val_size > 0, "val_size",
       "> 0 for a q schedule, which reads the validation accuracy");
  need(!c.out.empty(), "out", "a folder name");
  for (const auto& [key, value] : cycle_powers(c)) {
    need(value >= -1 && value <= 1, key, "a number in [-1, 1]");
    need(value == 0 || c.zo_layer_scale == zo::LayerScale::kCyclic, key,
         "0 unless zo_layer_scale is cyclic");
  }
  validate_precision(c);
  need(c.npu_calibration_batches >= 1, "npu_calibration_batches", "an integer >= 1");
  need(c.int_eps >= 1 && c.int_eps <= 127, "int_eps", "an integer in [1, 127]");
  parse_bp_bits(c.bp_bits);
  need(c.zo_bits >= 1 && c.zo_bits <= 15, "zo_bits", "an integer in [1, 15]");
  for (const auto& [epoch, fraction] : parse_zo_move(c.zo_move))
    need(fraction == 1 || (c.precision == Precision::kInt8 && c.method != Method::kBp), "zo_move",
         "1 unless precision is int8 and method zo or elastic (the integer ZO step)");
  need(c.loss_frac_bits >= 0 && c.loss_frac_bits <= 16, "loss_frac_bits", "an integer in [0, 16]");
  need(c.bn_stats_batches >= 0 && c.bn_stats_batches <= 1 << 20, "bn_stats_batches",
       "an integer in [0, 2^20]");
}

}  // namespace zotrain

namespace zotrain {

std::vector<std::pair<int, double>> parse_schedule(const std::string& key, const std::string& text,
                                                   bool (*valid)(double), const std::string& what,
                                                   const std::string& example, double before) {
  std::vector<std::pair<int, double>> steps;
  std::stringstream ss(text);
  std::string part;
  while (std::getline(ss, part, ',')) {
    size_t colon = part.find(':');
    int epoch = 0;
    std::string value = part;
    try {
      if (colon != std::string::npos) {
        size_t used = 0;
        epoch = std::stoi(part.substr(0, colon), &used);
        if (used != colon) throw std::invalid_argument("epoch");
        value = part.substr(colon + 1);
      }
      size_t used = 0;
      double p = std::stod(value, &used);
      if (used != value.size() || !valid(p) || epoch < 0) throw std::invalid_argument("p");
      if (!steps.empty() && epoch <= steps.back().first) throw std::invalid_argument("order");
      if (steps.empty() && epoch != 0) steps.push_back({0, before});
      steps.push_back({epoch, p});
    } catch (const std::exception&) {
      throw InputError("config key '" + key + "': '" + text + "' is not " + what +
                       " or a schedule like " + example + " (epochs increasing)");
    }
  }
  if (steps.empty()) throw InputError("config key '" + key + "': expected a value, got ''");
  // getline stops without an empty last part: "0.5," would read as "0.5".
  if (text.back() == ',')
    throw InputError("config key '" + key + "': '" + text + "' ends with a comma; expected " +
                     what + " or a schedule like " + example);
  return steps;
}

std::vector<std::pair<int, double>> parse_sparsity(const std::string& text) {
  return parse_schedule(
      "sparsity", text, [](double p) { return p >= 0 && p < 1; }, "a probability in [0, 1)",
      "0.33,20:0.5,50:0.9", 0.0);
}

std::vector<std::pair<int, double>> parse_bp_bits(const std::string& text) {
  return parse_schedule(
      "bp_bits", text, [](double b) { return b >= 1 && b <= 15 && b == static_cast<int>(b); },
      "a bit width in [1, 15]", "5,10:4,15:3", 5.0);
}

std::vector<std::pair<int, double>> parse_zo_move(const std::string& text) {
  return parse_schedule(
      "zo_move", text, [](double f) { return f > 0 && f <= 1; }, "a fraction in (0, 1]", "1,50:0.5",
      1.0);
}

double schedule_at(const std::vector<std::pair<int, double>>& schedule, int epoch) {
  double p = 0;
  for (const auto& [from, value] : schedule)
    if (epoch >= from) p = value;
  return p;
}

}  // namespace zotrain
