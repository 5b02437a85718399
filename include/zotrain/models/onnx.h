// ONNX model files (issue 19): a graph exported by PyTorch or any other tool, read into zotrain's
// model description and its parameters, so it trains by every method and precision as a built-in
// model does. Uses the ONNX project's own protobuf definitions (Debian's libonnx-dev); a build
// without them (ZOTRAIN_WITH_ONNX off, a device build) refuses ONNX files with a message.
#pragma once

#include <string>

#include "zotrain/core/tensor_file.h"
#include "zotrain/models/model.h"

namespace zotrain {

struct OnnxModel {
  ModelSpec spec;     // name: the file's path; item_shape from its input; num_classes its output
  TensorFile params;  // named as a checkpoint's ("param/<layer>.weight", "state/...")
};

// Whether this build reads ONNX files.
bool onnx_supported();

// Whether a model name is an ONNX file (it ends in ".onnx").
bool is_onnx_path(const std::string& model);

// Reads `path`. Operators: Conv (square kernels, symmetric pads, groups, dilation 1), Gemm and
// MatMul + Add, Relu, Clip as ReLU6, MaxPool (any stride, padding below the kernel) and AveragePool
// (no padding), GlobalAveragePool, GlobalMaxPool, BatchNormalization (epsilon 1e-5), Add of two
// branches (a residual block, a ReLU after it fused), Flatten and Reshape to [batch, features],
// Dropout, Identity; opsets 9-17. InputError naming the file, the node, its operator and what
// zotrain supports for anything else.
OnnxModel read_onnx(const std::string& path);

// Writes a model and its f32 parameters (named as a checkpoint's) as an ONNX file (opset 13, a
// dynamic batch, input "input" [batch, C, H, W], output "logits"), written atomically; dropout
// is left out (inference). InputError for a model zotrain cannot express in ONNX.
void write_onnx(const std::string& path, const ModelSpec& spec, const TensorFile& params);

}  // namespace zotrain
