// Constants and what passes values through: Constant, ConstantOfShape, Range, Cast,
// CastLike, Identity, Dropout (inference).
#include <cmath>

#include "onnx/importer.h"
#include "onnx/proto.h"

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

void constant(Importer& im, const Node& n) {
  if (n.attribute_size() != 1)
    user_error("a Constant has exactly one attribute, not {}", n.attribute_size());
  const onnx::AttributeProto& a = n.attribute(0);
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
  im.set_output(n, 0, im.constant(t));
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

// start, start + delta, ... up to (not including) limit: all static.
void range(Importer& im, const Node& n) {
  Tensor start = im.static_input(n, 0), limit = im.static_input(n, 1),
         delta = im.static_input(n, 2);
  double s = element_value(start, 0), l = element_value(limit, 0), d = element_value(delta, 0);
  if (d == 0) user_error("delta is 0");
  auto count = static_cast<int64_t>(std::max(0.0, std::ceil((l - s) / d)));
  Tensor t(Type{start.dtype(), {count}});
  for (int64_t i = 0; i < count; ++i) {
    if (start.dtype() == DType::i64)
      t.data<int64_t>()[i] = start.data<int64_t>()[0] + i * delta.data<int64_t>()[0];
    if (start.dtype() == DType::f32)
      t.data<float>()[i] = start.data<float>()[0] + i * delta.data<float>()[0];
    if (start.dtype() == DType::f64) t.data<double>()[i] = s + static_cast<double>(i) * d;
  }
  im.set_output(n, 0, im.constant(t));
}

Var convert(Importer& im, Var x, DType to) {
  return im.type(x).dtype == to ? x : im.op<Prim::convert>({x}, {.dtype = to});
}

void cast(Importer& im, const Node& n) {
  auto to = static_cast<int32_t>(attr_int(n, "to", 0));
  std::optional<DType> dtype = to_dtype(to);
  if (!dtype)
    unsupported("Cast to " + onnx_dtype_name(to) + " (ytape has f32, f64, f16, i64 and bool)");
  im.set_output(n, 0, convert(im, im.input(n, 0), *dtype));
}

void cast_like(Importer& im, const Node& n) {
  im.set_output(n, 0, convert(im, im.input(n, 0), im.type(im.input(n, 1)).dtype));
}

void identity(Importer& im, const Node& n) {
  im.set_output(n, 0, im.input(n, 0));
}

// In inference the output is the input and the mask all true; training draws at random,
// which a tape would do with other numbers than ONNX's.
void dropout(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  bool training = im.has_input(n, 2) && element_value(im.static_input(n, 2), 0) != 0;
  if (training && (!im.has_input(n, 1) || element_value(im.static_input(n, 1), 0) != 0)) {
    unsupported("Dropout in training mode");
  }
  im.set_output(n, 0, x);
  im.set_output(
      n, 1,
      im.op<Prim::fill>({}, {.value = 1, .dtype = DType::boolean, .shape = im.type(x).shape}));
}

}  // namespace

void add_creation_rules(Rules& r) {
  r["Constant"] = constant;
  r["ConstantOfShape"] = constant_of_shape;
  r["Range"] = range;
  r["Cast"] = cast;
  r["CastLike"] = cast_like;
  r["Identity"] = identity;
  r["Dropout"] = dropout;
}

}  // namespace ytape::onnx_import
