#include "onnx/rules/integer.h"

#include <cmath>

namespace ytape::onnx_import {

namespace {

Var as(Importer& im, Var x, DType to) {
  return im.type(x).dtype == to ? x : im.op<Prim::convert>({x}, {.dtype = to});
}

// The bits of ONNX's integer types, and whether they are signed; 0 for other types.
int bits_of(int32_t elem_type, bool* is_signed) {
  *is_signed = false;
  switch (elem_type) {
    case onnx::TensorProto_DataType_UINT8:
      return 8;
    case onnx::TensorProto_DataType_UINT16:
      return 16;
    case onnx::TensorProto_DataType_UINT32:
      return 32;
    case onnx::TensorProto_DataType_INT8:
      *is_signed = true;
      return 8;
    case onnx::TensorProto_DataType_INT16:
      *is_signed = true;
      return 16;
    case onnx::TensorProto_DataType_INT32:
      *is_signed = true;
      return 32;
    default:
      return 0;
  }
}

}  // namespace

// fmod is exact on doubles; Python's remainder is C's plus y where the two signs differ.
Var integer_mod(Importer& im, Var x, Var y, bool c_sign) {
  Var xf = as(im, x, DType::f64), yf = as(im, y, DType::f64);
  Var r = im.op<Prim::rem>({xf, yf});
  if (!c_sign) {
    Var zero = im.scalar(DType::f64, 0);
    Var differ = im.op<Prim::ne>({im.op<Prim::lt>({r, zero}), im.op<Prim::lt>({yf, zero})});
    Var nonzero = im.op<Prim::ne>({r, zero});
    Var shift = im.op<Prim::select>({nonzero, differ, im.scalar(DType::boolean, 0)});
    r = im.op<Prim::select>({shift, im.op<Prim::add>({r, yf}), r});
  }
  return as(im, r, DType::i64);
}

// Below 2^53 the quotient's rounding error, at most |x / y| 2^-53, is smaller than its
// distance 1/|y| to any integer it is not: truncating it (convert's rule) is exact.
Var integer_div(Importer& im, Var x, Var y) {
  Var q = im.op<Prim::div>({as(im, x, DType::f64), as(im, y, DType::f64)});
  return as(im, q, DType::i64);
}

// Python's mod 2^bits lands in 0..2^bits - 1; a signed type shifts by half of that first.
Var wrap_integer(Importer& im, Var x, int32_t elem_type) {
  bool is_signed = false;
  int bits = bits_of(elem_type, &is_signed);
  if (bits == 0) return x;
  Var span = im.scalar(DType::i64, std::ldexp(1.0, bits));
  if (!is_signed) return integer_mod(im, x, span, false);
  Var half = im.scalar(DType::i64, std::ldexp(1.0, bits - 1));
  Var r = integer_mod(im, im.op<Prim::add>({x, half}), span, false);
  return im.op<Prim::sub>({r, half});
}

}  // namespace ytape::onnx_import
