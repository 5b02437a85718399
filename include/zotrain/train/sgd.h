// SGD with momentum and weight decay, PyTorch's formulation:
//   g = grad + wd * w;  m = mu * m + g;  w -= lr * m
// Momentum buffers come from the arena (bucket "optimizer") for the parameters it updates.
#pragma once

#include <vector>

#include "zotrain/core/arena.h"
#include "zotrain/nn/network.h"

namespace zotrain {

class Sgd {
 public:
  // Updates every parameter of `net` that has a gradient buffer.
  Sgd(Network& net, Arena& arena, double momentum, double weight_decay);
  void step(double lr);
  // Momentum buffers, in the order of the updated parameters (for checkpoints).
  struct State {
    ParamRef* param;
    Tensor momentum;
  };
  std::vector<State>& state() { return state_; }

 private:
  std::vector<State> state_;
  float momentum_, weight_decay_;
};

}  // namespace zotrain
