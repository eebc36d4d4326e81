// Constants and what passes values through: Constant, ConstantOfShape, Range, EyeLike,
// the windows, Cast, CastLike, Identity (of any value: sequences and optionals too).
#include <cmath>
#include <numbers>

#include "onnx/importer.h"
#include "onnx/proto.h"
#include "onnx/rules/integer.h"

namespace ytape::onnx_import {

namespace {

template <typename T, typename Values>
Tensor vector_of(DType dtype, const Values& values, bool scalar) {
  Shape shape;
  if (!scalar) shape.push_back(values.size());
  Tensor t(Type{dtype, shape});
  for (int i = 0; i < values.size(); ++i) t.data<T>()[i] = values.Get(i);
  return t;
}

// A Constant's value, from its one attribute.
Tensor constant_value(const onnx::AttributeProto& a) {
  Tensor t;
  if (a.name() == "value") {
    t = tensor_of(a.t(), "value: ");
  } else if (a.name() == "value_float") {
    t = Tensor(Type{DType::f32, {}});
    t.data<float>()[0] = a.f();
  } else if (a.name() == "value_int") {
    t = Tensor(Type{DType::i64, {}});
    t.data<int64_t>()[0] = a.i();
  } else if (a.name() == "value_floats") {
    t = vector_of<float>(DType::f32, a.floats(), false);
  } else if (a.name() == "value_ints") {
    t = vector_of<int64_t>(DType::i64, a.ints(), false);
  } else {
    unsupported("a Constant's attribute '" + a.name() + "'");
  }
  return t;
}

// Imported once per iteration in a Loop's body, but one constant of the tape: the model's
// bytes, not the iterations, bound how much its Constants make.
void constant(Importer& im, const Node& n) {
  if (n.attribute_size() != 1)
    user_error("a Constant has exactly one attribute, not {}", n.attribute_size());
  const onnx::AttributeProto& a = n.attribute(0);
  if (a.name() == "value" && n.output_size() > 0)
    im.set_narrow_type(n.output(0), a.t().data_type());
  im.set_output(n, 0, im.given(&a, [&] { return constant_value(a); }));
}

// A tensor of the given ONNX shape filled with the one element of `value` (0.0f if absent).
void constant_of_shape(Importer& im, const Node& n) {
  std::vector<int64_t> shape = im.static_ints(n, 0);
  DType dtype = DType::f32;
  double value = 0;
  if (const onnx::AttributeProto* a = find_attr(n, "value")) {
    Tensor t = tensor_of(a->t(), "value: ");
    if (t.size() != 1) user_error("value has {} elements, not 1", t.size());
    dtype = t.dtype(), value = element_value(t, 0);
  }
  im.set_output(n, 0,
                im.op<Prim::fill>({}, {.value = value, .dtype = dtype, .shape = reversed(shape)}));
}

// Range over integers: max(ceil((limit - start) / delta), 0) values, counted exactly (the
// span of two int64 may need 64 bits unsigned), each computed modulo 2^64: exact, since it
// lies between start and limit, though i delta alone may overflow.
Tensor int_range(int64_t start, int64_t limit, int64_t delta) {
  if (delta == 0) user_error("delta is 0");
  bool up = delta > 0;
  uint64_t span = up ? static_cast<uint64_t>(limit) - static_cast<uint64_t>(start)
                     : static_cast<uint64_t>(start) - static_cast<uint64_t>(limit);
  uint64_t step = up ? static_cast<uint64_t>(delta) : 0 - static_cast<uint64_t>(delta);
  uint64_t count = (up ? limit > start : limit < start) ? (span - 1) / step + 1 : 0;
  if (count > static_cast<uint64_t>(kMaxListed)) {
    user_error("from {} to {} by {}: {} elements, more than the 2^22 that ytape computes at import",
               start, limit, delta, count);
  }
  Tensor t(Type{DType::i64, {static_cast<int64_t>(count)}});
  for (uint64_t i = 0; i < count; ++i) {
    uint64_t from = static_cast<uint64_t>(start), offset = i * step;
    t.data<int64_t>()[i] = static_cast<int64_t>(up ? from + offset : from - offset);
  }
  return t;
}

// Range over floats, as ONNX's reference: start + i delta in the dtype, for i below
// max(ceil((limit - start) / delta), 0).
template <typename T>
Tensor float_range(DType dtype, T start, T limit, T delta) {
  if (delta == 0) user_error("delta is 0");
  double count = std::max(0.0, std::ceil((static_cast<double>(limit) - start) / delta));
  if (!(count <= static_cast<double>(kMaxListed))) {
    user_error("from {} to {} by {}: {} elements, more than the 2^22 that ytape computes at import",
               start, limit, delta, count);
  }
  Tensor t(Type{dtype, {static_cast<int64_t>(count)}});
  for (int64_t i = 0; i < t.size(); ++i) t.data<T>()[i] = start + static_cast<T>(i) * delta;
  return t;
}

// start, start + delta, ... up to (not including) limit: all static, of one type.
void range(Importer& im, const Node& n) {
  Tensor start = im.static_input(n, 0), limit = im.static_input(n, 1),
         delta = im.static_input(n, 2);
  DType d = start.dtype();
  for (const Tensor* t : {&start, &limit, &delta}) {
    if (t->size() != 1) user_error("start, limit and delta must be scalars");
    if (t->dtype() != d) user_error("start, limit and delta must be of one type");
  }
  auto first = [](const Tensor& t, auto tag) { return t.data<decltype(tag)>()[0]; };
  Tensor t;
  if (d == DType::i64) {
    t = int_range(first(start, int64_t{}), first(limit, int64_t{}), first(delta, int64_t{}));
  } else if (d == DType::f32) {
    t = float_range(d, first(start, float{}), first(limit, float{}), first(delta, float{}));
  } else if (d == DType::f64) {
    t = float_range(d, first(start, double{}), first(limit, double{}), first(delta, double{}));
  } else {
    user_error("a Range of {} (ONNX's is of integers, float or double)", dtype_name(d));
  }
  im.set_output(n, 0, im.constant(t));
}

Var convert(Importer& im, Var x, DType to) {
  return im.type(x).dtype == to ? x : im.op<Prim::convert>({x}, {.dtype = to});
}

// A cast to a narrower integer type is one to i64, which holds those (docs/onnx.md,
// Dtypes), wrapped into the type's range as the cast wraps (300 to uint8 is 44).
void cast(Importer& im, const Node& n) {
  auto to = static_cast<int32_t>(attr_int(n, "to", 0));
  std::optional<DType> dtype = to_dtype(to, true);
  if (!dtype)
    unsupported("Cast to " + onnx_dtype_name(to) + " (ytape has f32, f64, f16, i64 and bool)");
  Var x = im.input(n, 0);
  Var y = convert(im, x, *dtype);
  if (to != onnx::TensorProto_DataType_INT64 && *dtype == DType::i64) y = wrap_integer(im, y, to);
  im.set_output(n, 0, y);
  if (n.output_size() > 0) im.set_narrow_type(n.output(0), to);
}

void cast_like(Importer& im, const Node& n) {
  im.set_output(n, 0, convert(im, im.input(n, 0), im.type(im.input(n, 1)).dtype));
}

// Ones where column - row = k, of the input's 2-d shape: the column numbers (along the
// tape's dim 1) minus the row numbers (dim 2), compared with k; ops of the tape, which fold
// where the shape is small.
void eye_like(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  if (im.rank(x) != 2) user_error("the input has rank {}, not 2", im.rank(x));
  auto to = static_cast<int32_t>(attr_int(n, "dtype", 0));
  std::optional<DType> dtype = to == 0 ? im.type(x).dtype : to_dtype(to, true);
  if (!dtype) unsupported("EyeLike of " + onnx_dtype_name(to));
  Shape s = im.type(x).shape;
  Var columns = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = {s[0], 1}, .dim = 1});
  Var rows = im.op<Prim::iota>({}, {.dtype = DType::i64, .shape = {1, s[1]}, .dim = 2});
  Var diff = im.op<Prim::sub>({columns, rows});
  Var on = im.op<Prim::eq>({diff, im.scalar(DType::i64, static_cast<double>(attr_int(n, "k", 0)))});
  im.set_output(n, 0, convert(im, on, *dtype));
}

// The generalized cosine windows a0 - a1 cos(2 pi n / N) + a2 cos(4 pi n / N), n < size,
// with N = size when periodic, size - 1 when symmetric.
template <int A0, int A1, int A2, int Denominator>
void cosine_window(Importer& im, const Node& n) {
  int64_t count = im.static_integer(n, 0);
  if (count < 0 || count > (int64_t{1} << 16)) user_error("size {} is not in 0..2^16", count);
  auto to = static_cast<int32_t>(attr_int(n, "output_datatype", onnx::TensorProto_DataType_FLOAT));
  std::optional<DType> dtype = to_dtype(to, true);
  if (!dtype) unsupported(n.op_type() + " of " + onnx_dtype_name(to));
  auto period = static_cast<double>(attr_int(n, "periodic", 1) != 0 ? count : count - 1);
  Tensor w(Type{DType::f64, {count}});
  for (int64_t i = 0; i < w.size(); ++i) {
    double t = 2 * std::numbers::pi * static_cast<double>(i) / period;
    w.data<double>()[i] = (A0 - A1 * std::cos(t) + A2 * std::cos(2 * t)) / Denominator;
  }
  im.set_output(n, 0, convert(im, im.constant(w), *dtype));
}

// Of a tensor, a sequence or an optional.
void identity(Importer& im, const Node& n) {
  im.set_output_value(n, 0, im.value_input(n, 0));
}

}  // namespace

void add_creation_rules(Rules& r) {
  r["Constant"] = constant;
  r["ConstantOfShape"] = constant_of_shape;
  r["Range"] = range;
  r["Cast"] = cast;
  r["CastLike"] = cast_like;
  r["Identity"] = identity;
  r["EyeLike"] = eye_like;
  r["HannWindow"] = cosine_window<1, 1, 0, 2>;          // 0.5 - 0.5 cos
  r["HammingWindow"] = cosine_window<25, 21, 0, 46>;    // 25/46 - 21/46 cos
  r["BlackmanWindow"] = cosine_window<42, 50, 8, 100>;  // 0.42 - 0.5 cos + 0.08 cos
}

}  // namespace ytape::onnx_import
