#!/usr/bin/python3
"""Exports the ONNX test models with PyTorch (Debian's python3-torch) and their logits.

    tests/models/onnx_models.py OUT_DIR

For each model NAME: OUT_DIR/NAME.onnx (torch.onnx.export, opset 13, a dynamic batch),
NAME.input.bin and NAME.logits.bin (float32, little-endian, a batch of 3), in evaluation mode.
Exits 77 where torch or torchvision is missing, so the test skips with a message.
"""
import copy
import sys

try:
    import torch
    import torchvision
    from torch import nn
except ImportError:
    print("no python3-torch or python3-torchvision")
    sys.exit(77)


class Residual(nn.Module):
    def __init__(self, main, shortcut=None, relu=True):
        super().__init__()
        self.main, self.shortcut, self.relu = main, shortcut, relu

    def forward(self, x):
        y = self.main(x) + (self.shortcut(x) if self.shortcut is not None else x)
        return torch.relu(y) if self.relu else y


def bn(c):
    b = nn.BatchNorm2d(c)
    with torch.no_grad():  # running statistics that are not the identity
        b.running_mean.uniform_(-0.5, 0.5)
        b.running_var.uniform_(0.5, 2.0)
        b.weight.uniform_(0.5, 1.5)
        b.bias.uniform_(-0.2, 0.2)
    return b


def models():
    yield "lenet5", nn.Sequential(
        nn.Conv2d(1, 6, 5, padding=2), nn.ReLU(), nn.MaxPool2d(2),
        nn.Conv2d(6, 16, 5), nn.ReLU(), nn.MaxPool2d(2), nn.Flatten(),
        nn.Linear(400, 120), nn.ReLU(), nn.Linear(120, 84), nn.ReLU(), nn.Linear(84, 10))
    # Stride 2 with padding, ReLU6, a grouped convolution, batch norm, average and global pools.
    yield "odd_shapes", nn.Sequential(
        nn.Conv2d(3, 8, 3, stride=2, padding=1), nn.ReLU6(),
        nn.Conv2d(8, 8, 3, padding=1, groups=4), bn(8), nn.ReLU(), nn.AvgPool2d(2),
        nn.Conv2d(8, 16, 1), nn.ReLU(), nn.MaxPool2d(2), nn.Conv2d(16, 12, 1),
        nn.AdaptiveMaxPool2d(1), nn.Flatten(), nn.Dropout(0.2), nn.Linear(12, 7))
    # ResNet's basic blocks: an identity shortcut, then a strided one with a projection.
    yield "residual", nn.Sequential(
        nn.Conv2d(1, 8, 3, padding=1, bias=False), bn(8), nn.ReLU(),
        Residual(nn.Sequential(nn.Conv2d(8, 8, 3, padding=1, bias=False), bn(8), nn.ReLU(),
                               nn.Conv2d(8, 8, 3, padding=1, bias=False), bn(8))),
        Residual(nn.Sequential(nn.Conv2d(8, 16, 3, stride=2, padding=1, bias=False), bn(16),
                               nn.ReLU(), nn.Conv2d(16, 16, 3, padding=1, bias=False), bn(16)),
                 nn.Sequential(nn.Conv2d(8, 16, 1, stride=2, bias=False), bn(16))),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(16, 10))
    # MobileNetV2's inverted residual: expansion, depthwise, linear bottleneck, identity add.
    yield "inverted_residual", nn.Sequential(
        nn.Conv2d(3, 16, 3, stride=2, padding=1, bias=False), bn(16), nn.ReLU6(),
        Residual(nn.Sequential(nn.Conv2d(16, 96, 1, bias=False), bn(96), nn.ReLU6(),
                               nn.Conv2d(96, 96, 3, padding=1, groups=96, bias=False), bn(96),
                               nn.ReLU6(), nn.Conv2d(96, 16, 1, bias=False), bn(16)),
                 relu=False),
        nn.Conv2d(16, 32, 1, bias=False), bn(32), nn.ReLU6(),
        nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(32, 5))
    yield "shared_initializers", shared_initializers()
    # torchvision's own: ResNet18 (a 7x7 stride-2 stem, a 3x3 stride-2 max pool padded by 1) and
    # MobileNetV2, random weights and running statistics, 10 classes; no dropout, so that the
    # training-mode gradients compare.
    for name, make in (("resnet18", torchvision.models.resnet18),
                       ("mobilenetv2", torchvision.models.mobilenet_v2)):
        kw = {"dropout": 0.0} if name == "mobilenetv2" else {}
        m = make(num_classes=10, **kw)
        for b in m.modules():
            if isinstance(b, nn.BatchNorm2d):
                with torch.no_grad():
                    b.running_mean.uniform_(-0.2, 0.2)
                    b.running_var.uniform_(0.5, 1.5)
        yield name, m


# The models whose BP step is compared, and the mode of that step: lenet5 as it is; the residual
# ones in training mode (batch norm on the batch's statistics), against their "_bn" exports.
GRADIENTS = {"lenet5": False, "residual": True, "inverted_residual": True, "resnet18": True,
             "mobilenetv2": True}
def shared_initializers():
    # Two convolutions with equal (zero) biases: PyTorch's exporter keeps one initializer and
    # feeds the second through an Identity node.
    m = nn.Sequential(nn.Conv2d(1, 4, 3, padding=1), nn.ReLU(), nn.Conv2d(4, 4, 3, padding=1),
                      nn.ReLU(), nn.Flatten(), nn.Linear(4 * 28 * 28, 3))
    with torch.no_grad():
        m[0].bias.zero_()
        m[2].bias.zero_()
    return m


INPUTS = {"lenet5": (1, 28, 28), "shared_initializers": (1, 28, 28), "residual": (1, 28, 28), "odd_shapes": (3, 32, 32),
          "inverted_residual": (3, 32, 32), "resnet18": (3, 64, 64), "mobilenetv2": (3, 64, 64)}


def main(out):
    torch.manual_seed(0)
    for name, model in models():
        model.eval()
        x = torch.randn(3, *INPUTS[name])
        with torch.no_grad():
            y = model(x)
        # "_bn": batch norm kept as BatchNormalization nodes (the default folds it into the
        # convolutions before it).
        for suffix, mode in (("", torch.onnx.TrainingMode.EVAL),
                             ("_bn", torch.onnx.TrainingMode.PRESERVE)):
            torch.onnx.export(model, x, f"{out}/{name}{suffix}.onnx", opset_version=13,
                              training=mode, input_names=["x"], output_names=["logits"],
                              dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
            x.numpy().astype("<f4").tofile(f"{out}/{name}{suffix}.input.bin")
            y.numpy().astype("<f4").tofile(f"{out}/{name}{suffix}.logits.bin")
        if name in GRADIENTS:
            # A BP step's gradients: the mean cross-entropy of labels 0, 1, 2, every parameter's
            # gradient in parameter order, one file: in float64 (the reference: batch norm on
            # a few values per channel amplifies rounding, PyTorch's float32 too) and float32.
            for dtype, suffix in ((torch.float64, "grads64"), (torch.float32, "grads")):
                m = copy.deepcopy(model).to(dtype)
                m.train(GRADIENTS[name])
                nn.functional.cross_entropy(m(x.to(dtype)), torch.tensor([0, 1, 2])).backward()
                torch.cat([p.grad.flatten() for p in m.parameters()]).numpy().astype(
                    "<f4" if dtype == torch.float32 else "<f8").tofile(f"{out}/{name}.{suffix}.bin")


main(sys.argv[1])
