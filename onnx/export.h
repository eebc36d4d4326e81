// ONNX export: a tape becomes an ONNX model (opset 17), the inverse of import (docs/onnx.md):
// shapes reversed, dims mapped to axes (ytape dim d of rank r is ONNX axis r - d).
#pragma once

#include <string>

#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape {

/// The serialized ModelProto of `t`: its inputs are the graph's inputs, except those named
/// in `weights`, which become initializers with those values; its outputs are the graph's.
/// The model passes ONNX's checker. Throws UnsupportedError (onnx/import.h) naming the op
/// for a primitive that has no ONNX form here (effects, random numbers, the gradient-only
/// primitives, pads with interior padding, softmax over several dims). A scan is written
/// unrolled (opt/unroll.h), one copy of its body per step: ONNX's Scan is not written yet.
std::string export_onnx(const Tape& t, const TensorMap& weights = {});

}  // namespace ytape
