// The host's side of the bare-metal device program (device/m55, docs/devices.md): a run packed
// for the device (Trainer::write_device_run) and the device's weights checked against the same
// run's checkpoint from `zotrain train`.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace zotrain {

struct DeviceRunSummary {
  int64_t steps = 0, examples = 0, bytes = 0;
};

// The differences between the weights the device wrote (`weights_path`) and the int8 weights
// and integer states of a checkpoint ("qweight/<layer>", "qexp/<layer>", "qstate/<layer>"), one
// line each; empty when every value is the same. InputError naming the file for a file that is
// not a device weights file.
std::vector<std::string> compare_device_weights(const std::string& weights_path,
                                                const std::string& checkpoint_path,
                                                int64_t* values_compared = nullptr);

}  // namespace zotrain
