#include "progress.h"

#include <unistd.h>

#include <algorithm>
#include <cstdio>

namespace zotrain::tools {

TrainCallbacks console_callbacks() {
  TrainCallbacks cb;
  const bool tty = isatty(STDERR_FILENO);
  if (tty)
    cb.on_batch = [](int epoch, int64_t batch, int64_t batches, double loss) {
      // Redraw at most ~100 times an epoch.
      if (batch != batches && batch % std::max<int64_t>(1, batches / 100) != 0) return;
      constexpr int kWidth = 30;
      int filled = static_cast<int>(kWidth * batch / batches);
      std::fprintf(stderr, "\repoch %d [%.*s%*s] %lld/%lld loss %.4f", epoch, filled,
                   "==============================", kWidth - filled, "",
                   static_cast<long long>(batch), static_cast<long long>(batches), loss);
      std::fflush(stderr);
    };
  cb.on_epoch = [tty](const EpochReport& r) {
    if (tty) std::fprintf(stderr, "\r\033[K");
    std::printf(
        "epoch %d/%d  lr %.4g  train loss %.4f acc %.2f%%  val %.2f%%  test %.2f%%  %.1fs\n",
        r.epoch, r.epochs, r.lr, r.train_loss, 100 * r.train_acc, 100 * r.val_acc, 100 * r.test_acc,
        r.seconds);
    std::fflush(stdout);
  };
  return cb;
}

}  // namespace zotrain::tools
