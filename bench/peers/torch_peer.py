#!/usr/bin/python3
"""The peer of `zotrain bench` in PyTorch: LeNet-5 or MobileNetV2 (the same layers as zotrain's
models, built here by hand: torchvision is not a dependency) at a batch size, one thread by
default. Times a BP step (SGD with momentum), a MeZO-style two-point ZO step (in-place
perturbation regenerated from a seed with torch.manual_seed, two forward passes, restore, and the
update regenerating z once more) and an ElasticZO step (the same ZO step on the body, the last
two layers with parameters trained by BP from both perturbed passes, as zotrain's default
--method elastic). Prints JSON."""
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

    def split(self):
        """The body and the head (the last two layers with parameters) of ElasticZO."""
        return (nn.Sequential(self.conv1, nn.ReLU(), nn.MaxPool2d(2), self.conv2, nn.ReLU(),
                              nn.MaxPool2d(2), nn.Flatten(), self.fc1, nn.ReLU()),
                nn.Sequential(self.fc2, nn.ReLU(), self.fc3))


def multiple_of_8(v):
    r = max(8, int(v + 4) // 8 * 8)
    return r + 8 if r < 0.9 * v else r


def conv_bn(cin, cout, k, stride, groups=1, act=True):
    layers = [nn.Conv2d(cin, cout, k, stride, k // 2, groups=groups, bias=False),
              nn.BatchNorm2d(cout)]
    return layers + [nn.ReLU6()] if act else layers


class InvertedResidual(nn.Module):
    def __init__(self, cin, cout, t, stride):
        super().__init__()
        hidden = round(cin * t)
        layers = conv_bn(cin, hidden, 1, 1) if t != 1 else []
        layers += conv_bn(hidden, hidden, 3, stride, hidden) + conv_bn(hidden, cout, 1, 1, act=False)
        self.block = nn.Sequential(*layers)
        self.residual = stride == 1 and cin == cout

    def forward(self, x):
        return x + self.block(x) if self.residual else self.block(x)


class MobileNetV2(nn.Module):
    """zotrain's mobilenetv2 (src/models/model.cpp): inputs up to 32x32 keep the resolution in
    the first convolution and the 24-channel stage."""

    def __init__(self, in_c, small, classes, width):
        super().__init__()
        stages = [(1, 16, 1, 1), (6, 24, 2, 2), (6, 32, 3, 2), (6, 64, 4, 2), (6, 96, 3, 1),
                  (6, 160, 3, 2), (6, 320, 1, 1)]
        c = multiple_of_8(32 * width)
        layers = conv_bn(in_c, c, 3, 1 if small else 2)
        for t, ch, n, s in stages:
            out = multiple_of_8(ch * width)
            for i in range(n):
                stride = 1 if i > 0 or (small and ch == 24) else s
                layers.append(InvertedResidual(c, out, t, stride))
                c = out
        last = multiple_of_8(1280 * max(1.0, width))
        self.body = nn.Sequential(*layers, nn.Conv2d(c, last, 1, bias=False))
        self.head = nn.Sequential(nn.BatchNorm2d(last), nn.ReLU6(), nn.AdaptiveAvgPool2d(1),
                                  nn.Flatten(), nn.Linear(last, classes))

    def forward(self, x):
        return self.head(self.body(x))

    def split(self):
        return self.body, self.head


def build(name, shape, classes):
    if name == "lenet5":
        return LeNet5()
    family, _, width = name.partition(":")
    assert family == "mobilenetv2", name
    return MobileNetV2(shape[0], max(shape[1:]) <= 32, classes, float(width or 1.0))


def perturb(params, seed, scale):
    torch.manual_seed(seed)
    for p in params:
        p.add_(torch.randn_like(p), alpha=scale)


@torch.no_grad()
def zo_step(model, params, x, y, seed, eps=1e-3, lr=1e-4):
    """MeZO's two-point step: z regenerated from the seed to perturb, restore and update."""
    perturb(params, seed, eps)
    lp = F.cross_entropy(model(x), y).item()
    perturb(params, seed, -2 * eps)
    lm = F.cross_entropy(model(x), y).item()
    perturb(params, seed, eps)
    perturb(params, seed, -lr * (lp - lm) / (2 * eps))


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
    ap.add_argument("--model", default="lenet5", help="lenet5, mobilenetv2 or mobilenetv2:WIDTH")
    ap.add_argument("--input", default="1,28,28", help="shape of one input: C,H,W")
    ap.add_argument("--classes", type=int, default=10)
    ap.add_argument("--batch", type=int, default=256)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--steps", type=int, default=50)
    ap.add_argument("--warmup", type=int, default=5)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    torch.manual_seed(0)
    shape = [int(v) for v in a.input.split(",")]
    model = build(a.model, shape, a.classes)
    x = torch.randn(a.batch, *shape)
    y = torch.randint(0, a.classes, (a.batch,))
    params = list(model.parameters())
    body, head = model.split()
    body_params, head_params = list(body.parameters()), list(head.parameters())
    head_opt = torch.optim.SGD(head_params, lr=0.01, momentum=0.9)
    opt = torch.optim.SGD(params, lr=0.01, momentum=0.9)

    def bp_step():
        opt.zero_grad()
        F.cross_entropy(model(x), y).backward()
        opt.step()

    step = [0]
    eps, lr = 1e-3, 1e-4

    def zo():
        step[0] += 1
        zo_step(model, params, x, y, step[0] - 1, eps, lr)

    def elastic_step():
        seed = step[0]
        step[0] += 1
        head_opt.zero_grad()
        losses = []
        for scale in (eps, -2 * eps):
            with torch.no_grad():
                perturb(body_params, seed, scale)
                features = body(x)
            loss = F.cross_entropy(head(features), y)
            (0.5 * loss).backward()
            losses.append(loss.item())
        with torch.no_grad():
            perturb(body_params, seed, eps)
            g = (losses[0] - losses[1]) / (2 * eps)
            perturb(body_params, seed, -lr * g)
        head_opt.step()

    @torch.no_grad()
    def forward():
        model(x)

    out = {"torch": torch.__version__, "model": a.model, "input": a.input, "batch": a.batch,
           "threads": a.threads,
           "forward": timed(forward, a.steps, a.warmup), "bp": timed(bp_step, a.steps, a.warmup),
           "zo": timed(zo, a.steps, a.warmup),
           "elastic": timed(elastic_step, a.steps, a.warmup)}
    print(json.dumps(out))


if __name__ == "__main__":
    main()
