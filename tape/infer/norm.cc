// Inference rules of the norm family: batch normalization in training mode, with the
// channel dim second to last (C in WHCN, the first dim of (C, N)), and its gradient.
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// The per-channel type (C,) for x, which must be a float of rank >= 2.
Type channel_type(const Type& x) {
  require_float(x, "x");
  if (x.rank() < 2) {
    user_error("x must have rank >= 2 (channels second to last), got {}", type_str(x));
  }
  return Type{x.dtype, {x.shape[x.rank() - 2]}};
}

void require_per_channel(const Type& t, const Type& channels, const Type& x, const char* what) {
  if (t != channels) {
    user_error("{} must be {} (one per channel of x {}), got {}", what, type_str(channels),
               type_str(x), type_str(t));
  }
}

void require_eps(double eps) {
  if (!(eps >= 0)) user_error("eps={} must be non-negative", float_str(eps));
}

// batchnorm(x, scale, bias) and batchnorm_with_stats, which adds mean and invstd.
template <Prim P>
std::vector<Type> batchnorm(Prim, std::span<const Type> a, const Attrs& attrs) {
  Type c = channel_type(a[0]);
  require_per_channel(a[1], c, a[0], "scale");
  require_per_channel(a[2], c, a[0], "bias");
  require_eps(attrs_of<P>(attrs).eps);
  if (P == Prim::batchnorm) return {a[0]};
  return {a[0], c, c};
}

// batchnorm_backward(dy, x, scale, mean, invstd) -> (dx, dscale, dbias).
std::vector<Type> batchnorm_backward(Prim, std::span<const Type> a, const Attrs&) {
  const Type& x = a[1];
  Type c = channel_type(x);
  if (a[0] != x) user_error("dy must be {} like x, got {}", type_str(x), type_str(a[0]));
  require_per_channel(a[2], c, x, "scale");
  require_per_channel(a[3], c, x, "mean");
  require_per_channel(a[4], c, x, "invstd");
  return {x, c, c};
}

}  // namespace

void register_norm_infer(InferTable& t) {
  t.set(Prim::batchnorm, batchnorm<Prim::batchnorm>);
  t.set(Prim::batchnorm_with_stats, batchnorm<Prim::batchnorm_with_stats>);
  t.set(Prim::batchnorm_backward, batchnorm_backward);
}

}  // namespace ytape
