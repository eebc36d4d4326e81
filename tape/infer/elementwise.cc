// Inference rules of the elementwise family: unary and binary math, comparisons, select
// and convert. Binary ops broadcast (Julia rules) and need one dtype.
#include <fmt/format.h>

#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// neg, abs, sign: any numeric dtype.
std::vector<Type> numeric_unary(Prim, std::span<const Type> a, const Attrs&) {
  require_numeric(a[0], "the argument");
  return {a[0]};
}

// exp, log, sin, ...: floats only.
std::vector<Type> float_unary(Prim, std::span<const Type> a, const Attrs&) {
  require_float(a[0], "the argument");
  return {a[0]};
}

std::vector<Type> numeric_binary(Prim, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a);
  require_numeric(a[0], "the arguments");
  return one(a[0].dtype, broadcast_shapes(a[0], a[1]));
}

std::vector<Type> float_binary(Prim, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a);
  require_float(a[0], "the arguments");
  return one(a[0].dtype, broadcast_shapes(a[0], a[1]));
}

// eq, ne: any dtype, bool included.
std::vector<Type> equality(Prim, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a);
  return one(DType::boolean, broadcast_shapes(a[0], a[1]));
}

std::vector<Type> ordering(Prim, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a);
  require_numeric(a[0], "the arguments");
  return one(DType::boolean, broadcast_shapes(a[0], a[1]));
}

// select(cond, x, y): cond is bool; all three broadcast together.
std::vector<Type> select(Prim, std::span<const Type> a, const Attrs&) {
  if (a[0].dtype != DType::boolean) {
    user_error("the condition must be bool, got {}", type_str(a[0]));
  }
  require_same_dtype(a.subspan(1));
  Type xy{a[1].dtype, broadcast_shapes(a[1], a[2])};
  return one(a[1].dtype, broadcast_shapes(a[0], xy));
}

std::vector<Type> convert(Prim, std::span<const Type> a, const Attrs& attrs) {
  return one(attrs_of<Prim::convert>(attrs).dtype, a[0].shape);
}

}  // namespace

void register_elementwise_infer(InferTable& t) {
  for (Prim p : {Prim::neg, Prim::abs, Prim::sign, Prim::relu}) t.set(p, numeric_unary);
  for (Prim p : {Prim::exp, Prim::log, Prim::log1p, Prim::expm1, Prim::sqrt, Prim::sin, Prim::cos,
                 Prim::tan, Prim::tanh, Prim::sigmoid, Prim::softplus, Prim::erf, Prim::asin,
                 Prim::acos, Prim::atan, Prim::floor, Prim::ceil, Prim::round}) {
    t.set(p, float_unary);
  }
  for (Prim p : {Prim::add, Prim::sub, Prim::mul, Prim::max, Prim::min}) t.set(p, numeric_binary);
  for (Prim p : {Prim::div, Prim::pow, Prim::rem}) t.set(p, float_binary);
  for (Prim p : {Prim::eq, Prim::ne}) t.set(p, equality);
  for (Prim p : {Prim::lt, Prim::le, Prim::gt, Prim::ge}) t.set(p, ordering);
  t.set(Prim::select, select);
  t.set(Prim::convert, convert);
}

}  // namespace ytape
