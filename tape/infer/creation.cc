// Inference rules of the creation family: fill, iota, rand, randn. They take no arguments;
// the result's dtype and shape are attributes.
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

std::vector<Type> fill(Prim, std::span<const Type>, const Attrs& attrs) {
  DType dtype = attrs.get_dtype("dtype");
  const Shape& shape = attrs.get_ints("shape");
  require_sane(shape, "shape");
  require_exact(attrs.get_float("value"), dtype, "value");
  return one(dtype, shape);
}

std::vector<Type> iota(Prim, std::span<const Type>, const Attrs& attrs) {
  DType dtype = attrs.get_dtype("dtype");
  const Shape& shape = attrs.get_ints("shape");
  require_sane(shape, "shape");
  if (!is_numeric(dtype)) user_error("dtype must be numeric, got bool");
  require_dim(attrs.get_int("dim"), static_cast<int>(shape.size()), "dim");
  return one(dtype, shape);
}

std::vector<Type> random(Prim, std::span<const Type>, const Attrs& attrs) {
  DType dtype = attrs.get_dtype("dtype");
  const Shape& shape = attrs.get_ints("shape");
  require_sane(shape, "shape");
  if (!is_float(dtype)) user_error("dtype must be f32 or f64, got {}", dtype_name(dtype));
  return one(dtype, shape);
}

}  // namespace

void register_creation_infer(InferTable& t) {
  t.set(Prim::fill, fill);
  t.set(Prim::iota, iota);
  t.set(Prim::rand, random);
  t.set(Prim::randn, random);
}

}  // namespace ytape
