#!/usr/bin/python3
"""Writes torchvision's MobileNetV2 (random weights: no pretrained ones on these machines) for
one-channel 28 x 28 inputs and 10 classes as ONNX, for the fine-tuning example of docs/onnx.md.

    examples/mobilenetv2_onnx.py OUT.onnx
"""
import sys

import torch
import torchvision

torch.manual_seed(0)
model = torchvision.models.mobilenet_v2(num_classes=10)
model.features[0][0] = torch.nn.Conv2d(1, 32, 3, stride=2, padding=1, bias=False)  # grey inputs
model.eval()
# Batch norm kept as BatchNormalization nodes (PRESERVE), so that zotrain trains it as batch norm.
torch.onnx.export(model, torch.zeros(1, 1, 28, 28), sys.argv[1], opset_version=13,
                  training=torch.onnx.TrainingMode.PRESERVE,
                  input_names=["x"], output_names=["logits"],
                  dynamic_axes={"x": {0: "batch"}, "logits": {0: "batch"}})
