#!/usr/bin/python3
"""Where the PyTorch peer's MeZO-style ZO step (torch_peer.py) spends its time, by operator, with
the convolutions split into pointwise, depthwise and full: torch.profiler over a few steps, one
thread by default. For the comparisons of docs/benchmarks.md: which share of zotrain's step has a
counterpart to beat.
  bench/peers/torch_op_times.py [--model mobilenetv2:1.0] [--input 3,64,64] [--batch 32]"""
import argparse
import collections
import os
import sys

import torch
from torch.profiler import ProfilerActivity, profile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import torch_peer  # noqa: E402


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--model", default="mobilenetv2:1.0")
    ap.add_argument("--input", default="3,64,64")
    ap.add_argument("--batch", type=int, default=32)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    shape = [int(v) for v in a.input.split(",")]
    model = torch_peer.build(a.model, shape, 10)
    x = torch.randn(a.batch, *shape)
    y = torch.randint(0, 10, (a.batch,))
    params = list(model.parameters())
    for seed in range(3):
        torch_peer.zo_step(model, params, x, y, seed)
    with profile(activities=[ProfilerActivity.CPU], record_shapes=True) as prof:
        for seed in range(a.steps):
            torch_peer.zo_step(model, params, x, y, 100 + seed)
    per_step = collections.defaultdict(float)
    for e in prof.key_averages(group_by_input_shape=True):
        name = e.key
        if name == "aten::mkldnn_convolution":
            w = e.input_shapes[1]
            name += " (1x1)" if w[-1] == 1 else " (depthwise)" if w[1] == 1 else " (full)"
        per_step[name] += e.self_cpu_time_total / a.steps / 1000
    total = sum(per_step.values())
    print(f"{a.model} {a.input} batch {a.batch}, {a.threads} thread(s), torch {torch.__version__}:"
          f" ZO step {total:.1f} ms of operator self time")
    for name, ms in sorted(per_step.items(), key=lambda kv: -kv[1])[:12]:
        print(f"  {name:40s} {ms:8.2f} ms  {100 * ms / total:5.1f} %")


if __name__ == "__main__":
    main()
