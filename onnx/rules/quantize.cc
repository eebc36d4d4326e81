// Linear quantization: QuantizeLinear, DequantizeLinear and DynamicQuantizeLinear, in
// floats (the quantized values held as i64, docs/onnx.md, Dtypes): q = saturate(round(x /
// scale) + zero_point), rounding half to even, and x = (q - zero_point) scale. A scale and
// zero point are scalars, or 1-D along `axis` (per channel).
#include "onnx/importer.h"
#include "onnx/proto.h"

namespace ytape::onnx_import {

namespace {

// The range of a quantized type.
std::pair<double, double> range_of(int32_t elem_type) {
  if (elem_type == onnx::TensorProto_DataType_UINT8) return {0, 255};
  if (elem_type == onnx::TensorProto_DataType_INT8) return {-128, 127};
  unsupported("quantizing to " + onnx_dtype_name(elem_type));
}

// Input `i` (a scale or zero point) in `dtype`, shaped to broadcast along `x`'s `axis`.
Var per_axis(Importer& im, const Node& n, int i, Var x, DType dtype) {
  Var v = im.input(n, i);
  if (im.type(v).dtype != dtype) v = im.op<Prim::convert>({v}, {.dtype = dtype});
  if (im.rank(v) == 0) return v;
  if (im.rank(v) != 1) user_error("input {} has rank {}, not 0 or 1", i + 1, im.rank(v));
  Shape s(im.rank(x), 1);
  int dim = ydim(attr_int(n, "axis", 1), im.rank(x));
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

void quantize_linear(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  DType d = im.type(x).dtype;
  if (!is_float(d)) user_error("x must be floats, not {}", dtype_name(d));
  int32_t type = onnx::TensorProto_DataType_UINT8;
  Var zero = im.scalar(d, 0);
  if (im.has_input(n, 2)) {
    type = im.narrow_type(n.input(2));
    if (type == 0) unsupported("a zero point whose type (uint8 or int8) is not known at import");
    zero = per_axis(im, n, 2, x, d);
  }
  im.set_output(n, 0, quantize(im, x, per_axis(im, n, 1, x, d), zero, range_of(type)));
}

void dequantize_linear(Importer& im, const Node& n) {
  Var q = im.input(n, 0), scale = im.input(n, 1);
  DType d = im.type(scale).dtype;
  if (!is_float(d)) user_error("the scale must be floats, not {}", dtype_name(d));
  Var x = im.op<Prim::convert>({q}, {.dtype = d});
  if (im.has_input(n, 2)) x = im.op<Prim::sub>({x, per_axis(im, n, 2, q, d)});
  im.set_output(n, 0, im.op<Prim::mul>({x, per_axis(im, n, 1, q, d)}));
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

}  // namespace

void add_quantize_rules(Rules& r) {
  r["QuantizeLinear"] = quantize_linear;
  r["DequantizeLinear"] = dequantize_linear;
  r["DynamicQuantizeLinear"] = dynamic_quantize_linear;
}

}  // namespace ytape::onnx_import
