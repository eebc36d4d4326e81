// Linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, in
// floats (the quantized values held as i64, docs/onnx.md, Dtypes): q = saturate(round(x /
// scale) + zero_point), rounding half to even, and x = (q - zero_point) scale. A scale and
// zero point are scalars, or 1-D along `axis` (per channel).
#include "onnx/importer.h"
#include "onnx/proto.h"
#include "onnx/rules/linalg.h"
#include "onnx/rules/spatial.h"

namespace ytape::onnx_import {

namespace {

// The range of a quantized type.
std::pair<double, double> range_of(int32_t elem_type) {
  if (elem_type == onnx::TensorProto_DataType_UINT8) return {0, 255};
  if (elem_type == onnx::TensorProto_DataType_INT8) return {-128, 127};
  unsupported("quantizing to " + onnx_dtype_name(elem_type));
}

// Input `i` (a scale or zero point) in `dtype`, shaped to broadcast along `x`'s ONNX `axis`
// (one element: the same for all).
Var per_axis(Importer& im, const Node& n, int i, Var x, DType dtype, int64_t axis) {
  Var v = im.input(n, i);
  if (im.type(v).dtype != dtype) v = im.op<Prim::convert>({v}, {.dtype = dtype});
  if (im.rank(v) == 0) return v;
  if (im.rank(v) == 1 && im.type(v).size() == 1) return im.reshape(v, {});  // per tensor
  if (im.rank(v) != 1) user_error("input {} has rank {}, not 0 or 1", i + 1, im.rank(v));
  Shape s(im.rank(x), 1);
  int dim = ydim(axis, im.rank(x));
  s[dim - 1] = im.type(v).shape[0];
  if (s[dim - 1] != im.type(x).shape[dim - 1]) {
    user_error("input {} has {} elements for an axis of {}", i + 1, s[dim - 1],
               im.type(x).shape[dim - 1]);
  }
  return im.reshape(v, s);
}

// saturate(round(x / scale) + zero_point), as i64.
Var quantize(Importer& im, Var x, Var scale, Var zero_point, std::pair<double, double> range) {
  DType d = im.type(x).dtype;
  Var q = im.op<Prim::add>({im.op<Prim::round>({im.op<Prim::div>({x, scale})}), zero_point});
  q = im.op<Prim::min>(
      {im.op<Prim::max>({q, im.scalar(d, range.first)}), im.scalar(d, range.second)});
  return im.op<Prim::convert>({q}, {.dtype = DType::i64});
}

// The range of the quantized type that zero point input `i` names: uint8's without one.
std::pair<double, double> range_named(Importer& im, const Node& n, int i) {
  if (!im.has_input(n, i)) return range_of(onnx::TensorProto_DataType_UINT8);
  int32_t type = im.narrow_type(n.input(i));
  if (type == 0) unsupported("a zero point whose type (uint8 or int8) is not known at import");
  return range_of(type);
}

void quantize_linear(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  DType d = im.type(x).dtype;
  if (!is_float(d)) user_error("x must be floats, not {}", dtype_name(d));
  int64_t axis = attr_int(n, "axis", 1);
  std::pair<double, double> range = range_named(im, n, 2);
  Var zero = im.has_input(n, 2) ? per_axis(im, n, 2, x, d, axis) : im.scalar(d, 0);
  im.set_output(n, 0, quantize(im, x, per_axis(im, n, 1, x, d, axis), zero, range));
}

void dequantize_linear(Importer& im, const Node& n) {
  Var q = im.input(n, 0), scale = im.input(n, 1);
  DType d = im.type(scale).dtype;
  if (!is_float(d)) user_error("the scale must be floats, not {}", dtype_name(d));
  Var x = im.op<Prim::convert>({q}, {.dtype = d});
  int64_t axis = attr_int(n, "axis", 1);
  if (im.has_input(n, 2)) x = im.op<Prim::sub>({x, per_axis(im, n, 2, q, d, axis)});
  im.set_output(n, 0, im.op<Prim::mul>({x, per_axis(im, n, 1, q, d, axis)}));
}

// To uint8 over [min(0, min x), max(0, max x)]: scale = (hi - lo) / 255 and zero point
// round(saturate(-lo / scale)).
void dynamic_quantize_linear(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  DType d = im.type(x).dtype;
  if (!is_float(d)) user_error("x must be floats, not {}", dtype_name(d));
  std::vector<int64_t> all(im.rank(x));
  for (int k = 0; k < im.rank(x); ++k) all[k] = k + 1;
  Var zero = im.scalar(d, 0);
  Var lo = im.op<Prim::min>({im.op<Prim::minimum>({x}, {.dims = all}), zero});
  Var hi = im.op<Prim::max>({im.op<Prim::maximum>({x}, {.dims = all}), zero});
  Var scale = im.op<Prim::div>({im.op<Prim::sub>({hi, lo}), im.scalar(d, 255)});
  Var shift = im.op<Prim::div>({im.op<Prim::neg>({lo}), scale});
  shift = im.op<Prim::min>({im.op<Prim::max>({shift, zero}), im.scalar(d, 255)});
  Var zero_point = im.op<Prim::round>({shift});
  im.set_output(n, 0, quantize(im, x, scale, zero_point, {0, 255}));
  im.set_output(n, 1, scale);
  im.set_output(n, 2, im.op<Prim::convert>({zero_point}, {.dtype = DType::i64}));
}

// ---- Products of quantized integers, in f64: a product of two 8-bit values less their
// zero points is below 2^16 in magnitude, so every partial sum of fewer than 2^37 of them is
// an integer that f64 holds exactly, in whatever order the kernels add them.

Var to_f64(Importer& im, Var v) {
  return im.type(v).dtype == DType::f64 ? v : im.op<Prim::convert>({v}, {.dtype = DType::f64});
}

// Input `i` (integers) in f64, less zero point input `zp` where given, which is a scalar or
// 1-D along the ONNX axis `axis` (`rows`: MatMul's, per row of a matrix, or broadcast).
Var centered(Importer& im, const Node& n, int i, int zp, int64_t axis, bool rows = false) {
  Var x = im.input(n, i);
  DType d = im.type(x).dtype;
  if (is_float(d)) user_error("input {} must be integers, not {}", i + 1, dtype_name(d));
  x = to_f64(im, x);
  if (!im.has_input(n, zp)) return x;
  Var z = im.input(n, zp);
  if (rows && (im.rank(z) != 1 || im.rank(x) < 2)) return im.op<Prim::sub>({x, to_f64(im, z)});
  return im.op<Prim::sub>({x, per_axis(im, n, zp, x, DType::f64, axis)});
}

// The exact integer convolution of ConvInteger and QLinearConv, in f64: input `x` less
// `x_zp`, by weights `w` less `w_zp` (per output channel).
Var integer_conv(Importer& im, const Node& n, int x, int x_zp, int w, int w_zp) {
  Var xs = centered(im, n, x, x_zp, 1);
  return convolve(im, n, xs, centered(im, n, w, w_zp, 0));
}

// The exact integer product of MatMulInteger and QLinearMatMul, in f64: `a` less `a_zp` (per
// row) times `b` less `b_zp` (per column: the last ONNX axis, as numpy broadcasts).
Var integer_matmul(Importer& im, const Node& n, int a, int a_zp, int b, int b_zp) {
  Var as = centered(im, n, a, a_zp, -2, true);
  return onnx_matmul(im, as, centered(im, n, b, b_zp, -1, true));
}

// Scale or zero point input `i` in f64, for `a` or the product: scalar, 1-D per row (where
// `a` is a matrix), or of any shape that broadcasts.
Var per_row(Importer& im, const Node& n, int i, Var a) {
  Var v = im.input(n, i);
  if (im.rank(v) == 1 && im.rank(a) >= 2) return per_axis(im, n, i, a, DType::f64, -2);
  return to_f64(im, v);
}

void conv_integer(Importer& im, const Node& n) {
  Var y = integer_conv(im, n, 0, 2, 1, 3);
  im.set_output(n, 0, im.op<Prim::convert>({y}, {.dtype = DType::i64}));
}

void matmul_integer(Importer& im, const Node& n) {
  Var y = integer_matmul(im, n, 0, 2, 1, 3);
  im.set_output(n, 0, im.op<Prim::convert>({y}, {.dtype = DType::i64}));
}

// y = quantize(acc x_scale w_scale, y_scale, y_zero_point), acc the integer convolution
// plus the bias B (int32, of scale x_scale w_scale); w's scale per output channel.
void qlinear_conv(Importer& im, const Node& n) {
  Var acc = integer_conv(im, n, 0, 2, 3, 5);
  if (im.has_input(n, 8)) acc = add_channel_bias(im, acc, to_f64(im, im.input(n, 8)));
  Var x = im.op<Prim::mul>({acc, per_axis(im, n, 1, acc, DType::f64, 1)});
  x = im.op<Prim::mul>({x, per_axis(im, n, 4, acc, DType::f64, 1)});
  Var zero = im.has_input(n, 7) ? per_axis(im, n, 7, acc, DType::f64, 1) : im.scalar(DType::f64, 0);
  std::pair<double, double> range = range_named(im, n, 7);
  im.set_output(n, 0, quantize(im, x, per_axis(im, n, 6, acc, DType::f64, 1), zero, range));
}

// y = quantize(acc a_scale b_scale, y_scale, y_zero_point), acc the integer product; the
// scales and zero points of a and y per row, b's per column.
void qlinear_matmul(Importer& im, const Node& n) {
  Var acc = integer_matmul(im, n, 0, 2, 3, 5);
  Var x = im.op<Prim::mul>({acc, per_row(im, n, 1, acc)});
  x = im.op<Prim::mul>({x, to_f64(im, im.input(n, 4))});
  Var zero = im.has_input(n, 7) ? per_row(im, n, 7, acc) : im.scalar(DType::f64, 0);
  std::pair<double, double> range = range_named(im, n, 7);
  im.set_output(n, 0, quantize(im, x, per_row(im, n, 6, acc), zero, range));
}

}  // namespace

void add_quantize_rules(Rules& r) {
  r["QuantizeLinear"] = quantize_linear;
  r["DequantizeLinear"] = dequantize_linear;
  r["DynamicQuantizeLinear"] = dynamic_quantize_linear;
  r["ConvInteger"] = conv_integer;
  r["MatMulInteger"] = matmul_integer;
  r["QLinearConv"] = qlinear_conv;
  r["QLinearMatMul"] = qlinear_matmul;
}

}  // namespace ytape::onnx_import
