// What `zotrain train` prints: a progress bar per epoch on a terminal, one line per epoch.
#pragma once

#include "zotrain/train/trainer.h"

namespace zotrain::tools {

// Callbacks that draw a progress bar on stderr when it is a terminal and print one line per
// epoch on stdout.
TrainCallbacks console_callbacks();

}  // namespace zotrain::tools
