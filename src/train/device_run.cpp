// The host's side of the device program: packing a run (Trainer::write_device_run) and checking
// the device's weights against a checkpoint (device_run.h, device_run_format.h).
#include "zotrain/train/device_run.h"

#include <cstring>
#include <fstream>
#include <iterator>
#include <sstream>

#include "train/device_run_format.h"
#include "train/engine.h"
#include "zotrain/core/error.h"
#include "zotrain/core/tensor_file.h"
#include "zotrain/nn/int8/qnetwork.h"
#include "zotrain/train/trainer.h"

namespace zotrain {

namespace {

// A checkpoint's value as written: integers without a fraction.
std::string number(float v) {
  std::ostringstream s;
  s << v;
  return s.str();
}

template <typename T>
void put(std::string& out, const T& v) {
  out.append(reinterpret_cast<const char*>(&v), sizeof v);
}

// Reads the device's weights file, InputError naming it and what is wrong.
class WeightsReader {
 public:
  explicit WeightsReader(const std::string& path) : path_(path) {
    std::ifstream f(path, std::ios::binary);
    if (!f) ZT_THROW(InputError(path + ": cannot open the device's weights file"));
    bytes_.assign(std::istreambuf_iterator<char>(f), {});
    char magic[8];
    take(magic, 8, "magic");
    if (std::memcmp(magic, device::kWeightsMagic, 8) != 0)
      ZT_THROW(InputError(path + ": not a device weights file (magic ZTDEVWTS expected)"));
    if (const auto v = get<uint32_t>("version"); v != device::kVersion)
      ZT_THROW(InputError(path + ": version " + std::to_string(v) + ", expected " +
                          std::to_string(device::kVersion)));
  }
  template <typename T>
  T get(const char* field) {
    T v;
    take(&v, sizeof v, field);
    return v;
  }
  void take(void* dst, size_t n, const char* field) {
    if (n > bytes_.size() - at_)
      ZT_THROW(
          InputError(path_ + ": truncated at byte " + std::to_string(at_) + " (" + field + ")"));
    std::memcpy(dst, bytes_.data() + at_, n);
    at_ += n;
  }
  bool done() const { return at_ == bytes_.size(); }

 private:
  std::string path_;
  std::string bytes_;
  size_t at_ = 0;
};

}  // namespace

DeviceRunSummary Trainer::write_device_run(const std::string& path) {
  const auto refuse = [](const std::string& why) {
    ZT_THROW(InputError("the device program does not run " + why));
  };
  if (cfg_.precision != Precision::kInt8) refuse("this precision: use precision = int8");
  if (cfg_.q_schedule != QSchedule::kFixed) refuse("a q schedule: use q_schedule = fixed");
  if (!cfg_.init.empty()) refuse("from an init checkpoint: it draws its weights from the seed");
  if (cfg_.distributed != Distributed::kNone) refuse("distributed runs");
  for (const auto& [epoch, fraction] : parse_zo_move(cfg_.zo_move))
    if (fraction != 1) refuse("a partial move (zo_move below 1): it moves every perturbed weight");
  if (cfg_.head_grad == HeadGrad::kClean)
    refuse("a clean head pass (head_grad clean): it backprops the head from the perturbed passes");
  if (cfg_.zo_sign == ZoSign::kFloat || cfg_.sign_agreement)
    refuse("the float loss (zo_sign float, sign_agreement): use the integer loss");
  if (cfg_.model.size() >= sizeof(device::RunHeader::model))
    refuse("a model whose name is longer than 51 characters");
  const Shape item = spec_.item_shape;
  if (item.rank > 4) refuse("examples of rank > 4");
  QNetwork& net = *engine_->int8_network();

  std::unique_ptr<BatchSource> batches = source(Split::kTrain, true);
  batches->start_epoch(0);
  const int8::StepConfig c = int8_step_config(cfg_, 0);
  device::RunHeader h{};
  std::memcpy(h.magic, device::kRunMagic, 8);
  h.version = device::kVersion;
  std::memcpy(h.model, cfg_.model.data(), cfg_.model.size());
  for (int d = 0; d < item.rank; ++d) h.item[d] = static_cast<int32_t>(item[d]);
  h.classes = static_cast<int32_t>(spec_.num_classes);
  h.batch = static_cast<int32_t>(cfg_.batch);
  h.steps = static_cast<int32_t>(batches->batches_per_epoch());
  h.head = head_;
  h.input_exp = data_.int8_exp();
  h.q = q();
  h.eps = c.eps;
  h.bp_bits = c.bp_bits;
  h.zo_bits = c.zo_bits;
  h.loss_frac_bits = c.loss_frac_bits;
  h.cyclic = c.cyclic;
  h.fixed_norm = cfg_.int_bn_divisor == BnDivisor::kFixed;
  h.zero_threshold = c.zero_threshold;
  h.seed = c.seed;
  std::string out;
  put(out, h);
  DeviceRunSummary s;
  const int64_t item_bytes = item.numel();
  for (int64_t b = 0; b < h.steps; ++b) {
    const int64_t rows = fill_input(*batches, b);
    put(out, static_cast<int32_t>(rows));
    out.append(reinterpret_cast<const char*>(labels_), static_cast<size_t>(cfg_.batch));
    out.append(reinterpret_cast<const char*>(net.input().data),
               static_cast<size_t>(cfg_.batch * item_bytes));
    s.examples += rows;
  }
  write_file_atomically(path, out);
  s.steps = h.steps;
  s.bytes = static_cast<int64_t>(out.size());
  return s;
}

std::vector<std::string> compare_device_weights(const std::string& weights_path,
                                                const std::string& checkpoint_path,
                                                int64_t* values_compared) {
  WeightsReader r(weights_path);
  const Checkpoint ckpt = read_checkpoint(checkpoint_path);
  std::vector<std::string> diffs;
  int64_t compared = 0;
  const auto compare = [&](const std::string& name, const int32_t* device, int64_t n) {
    const Tensor* t = ckpt.file.find(name);
    if (!t) return diffs.push_back(name + ": not in " + checkpoint_path);
    if (t->numel() != n)
      return diffs.push_back(name + ": " + std::to_string(n) + " values on the device, " +
                             std::to_string(t->numel()) + " in the checkpoint");
    int64_t differ = 0, first = -1;
    for (int64_t i = 0; i < n; ++i)
      if (static_cast<float>(device[i]) != (*t)[i]) differ += 1, first = first < 0 ? i : first;
    compared += n;
    if (differ > 0)
      diffs.push_back(name + ": " + std::to_string(differ) + " of " + std::to_string(n) +
                      " values differ (the first at " + std::to_string(first) + ": " +
                      std::to_string(device[first]) + " on the device, " + number((*t)[first]) +
                      " in the checkpoint)");
  };
  std::vector<int32_t> values;
  const uint32_t weights = r.get<uint32_t>("weights");
  for (uint32_t i = 0; i < weights; ++i) {
    const std::string layer = std::to_string(r.get<int32_t>("layer"));
    const int32_t exp = r.get<int32_t>("exponent");
    const int64_t n = r.get<int64_t>("elements");
    if (n < 0 || n > (int64_t{1} << 31))
      ZT_THROW(InputError(weights_path + ": weight of layer " + layer + " has " +
                          std::to_string(n) + " elements"));
    std::vector<int8_t> m(static_cast<size_t>(n));
    r.take(m.data(), m.size(), "mantissas");
    values.assign(m.begin(), m.end());
    compare("qweight/" + layer, values.data(), n);
    compare("qexp/" + layer, &exp, 1);
  }
  const uint32_t states = r.get<uint32_t>("states");
  for (uint32_t i = 0; i < states; ++i) {
    const std::string layer = std::to_string(r.get<int32_t>("layer"));
    const int64_t n = r.get<int64_t>("elements");
    if (n < 0 || n > (int64_t{1} << 28))
      ZT_THROW(InputError(weights_path + ": state of layer " + layer + " has " + std::to_string(n) +
                          " elements"));
    values.resize(static_cast<size_t>(n));
    r.take(values.data(), values.size() * sizeof(int32_t), "state values");
    compare("qstate/" + layer, values.data(), n);
  }
  if (!r.done()) ZT_THROW(InputError(weights_path + ": bytes after the last state"));
  size_t in_checkpoint = 0;
  for (const auto& [name, t] : ckpt.file.tensors) in_checkpoint += name.rfind("qweight/", 0) == 0;
  if (in_checkpoint != weights)
    diffs.push_back(std::to_string(weights) + " weights on the device, " +
                    std::to_string(in_checkpoint) + " in the checkpoint");
  if (values_compared) *values_compared = compared;
  return diffs;
}

}  // namespace zotrain
