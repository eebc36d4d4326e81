// Inference rules of the elementwise family: unary and binary math, comparisons, select
// and convert. Binary ops broadcast (Julia rules) and need one dtype.
#include <fmt/format.h>

#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// Throws unless `t` is of a dtype that the row of `p` takes.
void require_dtypes(Prim p, const Type& t, std::string_view what) {
  switch (prim_info(p).dtypes) {
    case DTypes::floating:
      return require_float(t, what);
    case DTypes::numeric:
    case DTypes::ordered:
      return require_numeric(t, what);
    case DTypes::any:
    case DTypes::equality:
      return;
    case DTypes::boolean:
      internal_error("no elementwise primitive is of bools only");
  }
}

// neg, exp, floor, ...: the argument's type.
std::vector<Type> unary(Prim p, std::span<const Type> a, const Attrs&) {
  require_dtypes(p, a[0], "the argument");
  return {a[0]};
}

// add, div, eq, lt, ...: the broadcast shape, of bool for a comparison.
std::vector<Type> binary(Prim p, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a);
  require_dtypes(p, a[0], "the arguments");
  return one(prim_info(p).compares() ? DType::boolean : a[0].dtype, broadcast_shapes(a[0], a[1]));
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
  t.set(Prim::select, select);
  t.set(Prim::convert, convert);
  // The others check the dtypes of their row in ops.def, which also says which compare.
  for (Prim p : all_prims()) {
    const PrimInfo& info = prim_info(p);
    if (info.family != Family::elementwise || t.rules[static_cast<int>(p)] != nullptr) continue;
    t.set(p, info.arity == 1 ? unary : binary);
  }
}

}  // namespace ytape
