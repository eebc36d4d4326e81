// The products that rules other than MatMul's build (MatMulInteger, QLinearMatMul).
#pragma once

#include "onnx/importer.h"

namespace ytape::onnx_import {

/// ONNX's MatMul of `a` and `b`: numpy's matmul, a vector operand taken as a row (`a`) or
/// a column (`b`) and its dim dropped again, the batch dims broadcast.
Var onnx_matmul(Importer& im, Var a, Var b);

}  // namespace ytape::onnx_import
