// Inference rules of the creation family: fill, iota, rand, randn. They take no arguments;
// the result's dtype and shape are attributes.
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

std::vector<Type> fill(Prim, std::span<const Type>, const Attrs& attrs) {
  const auto at = attrs_of<Prim::fill>(attrs);
  require_sane(at.shape, "shape");
  require_exact(at.value, at.dtype, "value");
  return one(at.dtype, at.shape);
}

std::vector<Type> iota(Prim, std::span<const Type>, const Attrs& attrs) {
  const auto at = attrs_of<Prim::iota>(attrs);
  require_sane(at.shape, "shape");
  if (!is_numeric(at.dtype)) user_error("dtype must be numeric, got bool");
  require_dim(at.dim, static_cast<int>(at.shape.size()), "dim");
  return one(at.dtype, at.shape);
}

template <Prim P>
std::vector<Type> random(Prim, std::span<const Type>, const Attrs& attrs) {
  const auto at = attrs_of<P>(attrs);
  require_sane(at.shape, "shape");
  if (!is_float(at.dtype)) user_error("dtype must be f32 or f64, got {}", dtype_name(at.dtype));
  return one(at.dtype, at.shape);
}

}  // namespace

void register_creation_infer(InferTable& t) {
  t.set(Prim::fill, fill);
  t.set(Prim::iota, iota);
  t.set(Prim::rand, random<Prim::rand>);
  t.set(Prim::randn, random<Prim::randn>);
}

}  // namespace ytape
