#include "zotrain/train/checkpoint.h"

#include <cmath>
#include <nlohmann/json.hpp>

#include "models/serialize.h"
#include "zotrain/core/error.h"

namespace zotrain {

using nlohmann::json;

TensorFile checkpoint_file(const CheckpointMeta& m, const Network* net, Sgd* sgd,
                           const std::vector<std::pair<std::string, Tensor>>& extra) {
  json shape = json::array();
  for (int i = 0; i < m.item_shape.rank; ++i) shape.push_back(m.item_shape[i]);
  json meta = {{"kind", "zotrain-checkpoint"},
               {"model", m.config.model},
               {"item_shape", shape},
               {"num_classes", m.num_classes},
               {"norm_mean", m.norm.mean},
               {"norm_std", m.norm.std},
               {"config", json::parse(config_to_json(m.config))},
               {"epochs_done", m.state.epochs_done},
               {"steps", m.state.steps},
               {"forward_passes", m.state.forward_passes},
               {"backward_passes", m.state.backward_passes},
               {"seconds", m.state.seconds},
               {"best_val_acc", m.state.best_val_acc},
               {"best_epoch", m.state.best_epoch},
               {"q", m.state.q_scheduler.q},
               {"q_smoothed", m.state.q_scheduler.smoothed},
               {"q_best", m.state.q_scheduler.best},
               {"q_stall", m.state.q_scheduler.stall}};
  TensorFile file;
  file.meta = meta.dump();
  if (net) append_params(file, *net);
  if (sgd)
    for (auto& s : sgd->state())
      if (!s.momentum.empty()) file.tensors.emplace_back("momentum/" + s.param->name, s.momentum);
  file.tensors.insert(file.tensors.end(), extra.begin(), extra.end());
  return file;
}

void save_checkpoint(const std::string& path, const CheckpointMeta& meta, const Network* net,
                     Sgd* sgd, const std::vector<std::pair<std::string, Tensor>>& extra) {
  write_tensor_file(path, checkpoint_file(meta, net, sgd, extra));
}

Checkpoint read_checkpoint(const std::string& path) {
  Checkpoint c{path, {}, read_tensor_file(path)};
  try {
    json j = json::parse(c.file.meta);
    if (j.value("kind", "") != "zotrain-checkpoint")
      throw InputError(path + ": not a zotrain checkpoint (metadata kind is '" +
                       j.value("kind", "") + "')");
    CheckpointMeta& m = c.meta;
    m.config = config_from_json(j.at("config").dump(), path);
    auto shape = j.at("item_shape").get<std::vector<int64_t>>();
    if (shape.empty() || shape.size() > 3)
      throw InputError(path + ": item_shape must have 1 to 3 dimensions");
    for (int64_t d : shape) m.item_shape[m.item_shape.rank++] = d;
    j.at("num_classes").get_to(m.num_classes);
    const double mean = j.at("norm_mean").get<double>(), sd = j.at("norm_std").get<double>();
    // The input normalization (p / 255 - mean) / std of pixels in [0, 1]: a crafted -1 or 1e30
    // evaluated to garbage with exit 0.
    if (!(std::fabs(mean) <= 1e3) || !(sd >= 1e-6 && sd <= 1e3))
      throw InputError(path + ": norm_mean " + std::to_string(mean) + " and norm_std " +
                       std::to_string(sd) +
                       " must be a normalization of pixels: |mean| <= 1000, std in [1e-6, 1000]");
    m.norm = {static_cast<float>(mean), static_cast<float>(sd)};
    j.at("epochs_done").get_to(m.state.epochs_done);
    j.at("steps").get_to(m.state.steps);
    j.at("forward_passes").get_to(m.state.forward_passes);
    j.at("backward_passes").get_to(m.state.backward_passes);
    j.at("seconds").get_to(m.state.seconds);
    j.at("best_val_acc").get_to(m.state.best_val_acc);
    j.at("best_epoch").get_to(m.state.best_epoch);
    // The counters a resume starts from (crafted values resumed "after epoch 1000 of 2", or
    // hit an internal assertion for -5).
    const TrainState& st = m.state;
    if (st.epochs_done < 0 || st.epochs_done > m.config.epochs)
      throw InputError(path + ": epochs_done " + std::to_string(st.epochs_done) +
                       " is not in [0, the run's epochs " + std::to_string(m.config.epochs) + "]");
    if (st.steps < 0 || st.forward_passes < 0 || st.backward_passes < 0 || st.best_epoch < -1 ||
        st.best_epoch > st.epochs_done)
      throw InputError(path + ": steps and passes must be >= 0, best_epoch in [-1, epochs_done]");
    // Absent in checkpoints written before the q schedules: a fixed-q run's state.
    m.state.q_scheduler = {j.value("q", 0), j.value("q_smoothed", -1.0), j.value("q_best", -1.0),
                           j.value("q_stall", 0)};
  } catch (const json::exception& e) {
    throw InputError(path + ": bad checkpoint metadata: " + e.what());
  }
  return c;
}

void restore_checkpoint(const Checkpoint& c, Network* net, Sgd* sgd,
                        std::vector<std::pair<std::string, Tensor>> extra) {
  if (net) restore_params(c.file, c.path, *net);
  if (sgd)
    for (auto& s : sgd->state())
      if (!s.momentum.empty())
        s.momentum.copy_from(c.file.get("momentum/" + s.param->name, s.momentum.shape(), c.path));
  for (auto& [name, t] : extra) t.copy_from(c.file.get(name, t.shape(), c.path));
}

}  // namespace zotrain
