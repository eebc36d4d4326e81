// Inference rules of the reduce family: sum, maximum and minimum drop the reduced dims,
// argmax drops its dim and gives i64 positions, softmax and log_softmax keep the shape.
#include <fmt/format.h>

#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// Which dims of x the attribute `dims` names; each must be a dim of x, named once.
std::vector<bool> named_dims(const Type& x, const std::vector<int64_t>& dims) {
  std::vector<bool> named(x.rank(), false);
  for (int64_t d : dims) {
    if (d < 1 || d > x.rank()) {
      user_error("dims=[{}]: dim {} is out of range for {} (dims are 1-based)",
                 fmt::join(dims, ","), d, type_str(x));
    }
    if (named[d - 1]) user_error("dims=[{}] names dim {} twice", fmt::join(dims, ","), d);
    named[d - 1] = true;
  }
  return named;
}

Shape drop(const Shape& shape, const std::vector<bool>& dropped) {
  Shape out;
  for (size_t i = 0; i < shape.size(); ++i) {
    if (!dropped[i]) out.push_back(shape[i]);
  }
  return out;
}

// sum, maximum, minimum.
template <Prim P>
std::vector<Type> reduction(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_numeric(a[0], "the argument");
  return one(a[0].dtype, drop(a[0].shape, named_dims(a[0], attrs_of<P>(attrs).dims)));
}

std::vector<Type> argmax(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_numeric(a[0], "the argument");
  int64_t dim = attrs_of<Prim::argmax>(attrs).dim;
  require_dim(dim, a[0].rank(), "dim");
  if (a[0].shape[dim - 1] == 0) {
    user_error("dim={} of {} is empty, so it has no maximum", dim, type_str(a[0]));
  }
  std::vector<bool> dropped(a[0].rank(), false);
  dropped[dim - 1] = true;
  return one(DType::i64, drop(a[0].shape, dropped));
}

// softmax, log_softmax.
template <Prim P>
std::vector<Type> normalize(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_float(a[0], "the argument");
  named_dims(a[0], attrs_of<P>(attrs).dims);
  return {a[0]};
}

}  // namespace

void register_reduce_infer(InferTable& t) {
  t.set(Prim::sum, reduction<Prim::sum>);
  t.set(Prim::maximum, reduction<Prim::maximum>);
  t.set(Prim::minimum, reduction<Prim::minimum>);
  t.set(Prim::argmax, argmax);
  t.set(Prim::softmax, normalize<Prim::softmax>);
  t.set(Prim::log_softmax, normalize<Prim::log_softmax>);
}

}  // namespace ytape
