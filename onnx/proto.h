// Between ONNX's protobuf messages and ytape's tensors and types.
#pragma once

#include <onnx/onnx_pb.h>

#include <optional>
#include <string>

#include "runtime/tensor.h"
#include "tape/dtype.h"

namespace ytape::onnx_import {

/// The name of an ONNX element type ("float", "int32", "float16"), for messages.
std::string onnx_dtype_name(int32_t elem_type);

/// The ytape dtype of an ONNX element type: float, double, int64 and bool map exactly;
/// with `widen_ints`, the other integer types map to i64 (their values convert exactly).
/// nullopt when ytape has no such dtype.
std::optional<DType> to_dtype(int32_t elem_type, bool widen_ints = false);

/// The ONNX element type of a ytape dtype.
int32_t to_onnx_dtype(DType d);

/// A TensorProto's value in ytape's layout (shape reversed, same element order). Integer
/// types other than int64 are widened to i64. Throws UnsupportedError for other types and
/// external data, UserError (prefixed with `where`) when the data disagree with the shape.
Tensor tensor_of(const onnx::TensorProto& t, const std::string& where);

}  // namespace ytape::onnx_import
