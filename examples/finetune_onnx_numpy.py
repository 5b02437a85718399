#!/usr/bin/python3
"""Fine-tunes a model trained elsewhere on numpy data, by forward passes: the device story.

A small CNN is trained on upright MNIST digits in PyTorch and exported as ONNX; on the "device",
the digits arrive rotated by 45 degrees, where it does worse. zotrain loads the ONNX file,
fine-tunes it by ElasticZO (zeroth-order body, backprop for the last layer) on uint8 numpy
arrays of rotated digits, and exports the result as ONNX again.

    PYTHONPATH=build/python examples/finetune_onnx_numpy.py [--out DIR] [--epochs N]

Needs Debian's python3-torch and python3-numpy, and MNIST (scripts/setup.sh fetches it).
"""
import argparse
import pathlib

import numpy as np
import torch

import zotrain

ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
ap.add_argument("--out", default="runs/example-finetune", help="folder for the run and models")
ap.add_argument("--epochs", type=int, default=3)
args = ap.parse_args()
out = pathlib.Path(args.out)
out.mkdir(parents=True, exist_ok=True)

# 1. Elsewhere: PyTorch trains on upright digits (zotrain only lends its data loader here).
upright = zotrain.load_data("mnist", train_limit=10000)
x, y = upright["train"]
mean, std = (x / 255).mean(), (x / 255).std()
torch.manual_seed(0)
net = torch.nn.Sequential(
    torch.nn.Conv2d(1, 8, 5, padding=2), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Conv2d(8, 16, 5), torch.nn.ReLU(), torch.nn.MaxPool2d(2),
    torch.nn.Flatten(), torch.nn.Linear(400, 64), torch.nn.ReLU(), torch.nn.Linear(64, 10))
opt = torch.optim.SGD(net.parameters(), lr=0.05, momentum=0.9)
xt = torch.from_numpy(((x / 255 - mean) / std).astype(np.float32))
yt = torch.from_numpy(y.astype(np.int64))
for i in range(0, len(xt), 64):
    opt.zero_grad()
    torch.nn.functional.cross_entropy(net(xt[i:i + 64]), yt[i:i + 64]).backward()
    opt.step()
net.eval()
onnx_in = out / "pretrained.onnx"
torch.onnx.export(net, torch.zeros(1, 1, 28, 28), onnx_in, input_names=["x"],
                  output_names=["logits"], dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})

# 2. On the device: rotated digits as numpy arrays (uint8 images [N, 1, 28, 28], labels [N]).
rotated = zotrain.load_data("mnist-rotated:45", train_limit=2000, val_size=1000, test_limit=2000)
# The model expects its own training's normalization, not that of the rotated digits.
cfg = zotrain.Config(model=str(onnx_in), method="elastic", bp_layers=1, epochs=args.epochs,
                     batch=32, q=4, input_mean=float(mean), input_std=float(std),
                     out=str(out / "run"), overwrite=True)
trainer = zotrain.Trainer(cfg, **rotated)
test_x, test_y = rotated["test"]
print(f"pretrained model on rotated digits: {100 * trainer.evaluate(test_x, test_y):.1f}%")
plan = trainer.memory_plan()
print(f"training plan: {plan['total_bytes'] / 1024:.0f} KiB "
      f"(gradients {plan['buckets']['gradients'] / 1024:.1f} KiB: only the last layer's)")
for m in trainer.run():
    print(f"epoch {m['epoch']}: train loss {m['train_loss']:.3f}, val {100 * m['val_acc']:.1f}%, "
          f"test {100 * m['test_acc']:.1f}%, {m['forward_passes']} forward passes")

# 3. Back out: the fine-tuned model as ONNX, and its logits in PyTorch's hands agree.
onnx_out = out / "finetuned.onnx"
print(trainer.export_onnx(onnx_out))
logits = trainer.forward(test_x[:256])
for name, p in zip(["0", "3", "7", "9"], [net[0], net[3], net[7], net[9]]):
    p.weight.data = torch.from_numpy(trainer.get(f"{name}.weight").copy())
    p.bias.data = torch.from_numpy(trainer.get(f"{name}.bias").copy())
xs = torch.from_numpy(((test_x[:256] / 255 - mean) / std).astype(np.float32))
diff = np.abs(net(xs).detach().numpy() - logits).max()
print(f"PyTorch with the fine-tuned weights: logits within {diff:.1e} of zotrain's")
