#!/usr/bin/python3
"""The peer of `zotrain bench` in PyTorch: LeNet-5 (28x28, the same layers as zotrain's) at a
batch size, one thread by default. Times a BP step (SGD with momentum) and a MeZO-style
two-point ZO step: in-place perturbation regenerated from a seed (torch.manual_seed), two
forward passes, restore, and the update regenerating z once more. Prints JSON."""
import argparse
import json
import statistics
import time

import torch
import torch.nn as nn
import torch.nn.functional as F


class LeNet5(nn.Module):
    def __init__(self):
        super().__init__()
        self.conv1 = nn.Conv2d(1, 6, 5, padding=2)
        self.conv2 = nn.Conv2d(6, 16, 5)
        self.fc1 = nn.Linear(400, 120)
        self.fc2 = nn.Linear(120, 84)
        self.fc3 = nn.Linear(84, 10)

    def forward(self, x):
        x = F.max_pool2d(F.relu(self.conv1(x)), 2)
        x = F.max_pool2d(F.relu(self.conv2(x)), 2)
        x = torch.flatten(x, 1)
        return self.fc3(F.relu(self.fc2(F.relu(self.fc1(x)))))


def perturb(params, seed, scale):
    torch.manual_seed(seed)
    for p in params:
        p.add_(torch.randn_like(p), alpha=scale)


def timed(fn, steps, warmup):
    for _ in range(warmup):
        fn()
    ms = []
    for _ in range(steps):
        t0 = time.perf_counter()
        fn()
        ms.append(1000 * (time.perf_counter() - t0))
    return {"ms_median": statistics.median(ms), "ms_min": min(ms), "ms_max": max(ms)}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    model = LeNet5()
    x = torch.randn(a.batch, 1, 28, 28)
    y = torch.randint(0, 10, (a.batch,))
    params = list(model.parameters())
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)

    def bp_step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step = [0]
    eps, lr = 1e-3, 1e-4

    @torch.no_grad()
    def zo_step():
        seed = step[0]
        step[0] += 1
        perturb(params, seed, eps)
        lp = F.cross_entropy(model(x), y).item()
        perturb(params, seed, -2 * eps)
        lm = F.cross_entropy(model(x), y).item()
        perturb(params, seed, eps)
        g = (lp - lm) / (2 * eps)
        perturb(params, seed, -lr * g)

    @torch.no_grad()
    def forward():
        model(x)

    out = {"torch": torch.__version__, "batch": a.batch, "threads": a.threads,
           "forward": timed(forward, a.steps, a.warmup), "bp": timed(bp_step, a.steps, a.warmup),
           "zo": timed(zo_step, a.steps, a.warmup)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
