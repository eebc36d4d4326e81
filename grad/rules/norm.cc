// VJP rules of batch normalization (training mode). batchnorm is emitted as
// batchnorm_with_stats so that its rule reuses the saved mean and inverse deviation.
// Statistics are over every dim but the channel dim (the second to last); M is the
// number of elements per channel and keep(v) reshapes a (C,) vector to broadcast.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

struct Channels {
  std::vector<int64_t> dims;  // the reduced dims
  Shape kept;                 // x's shape with 1 in every reduced dim
  double count = 1;           // M
};

Channels channels(const Shape& x) {
  Channels c;
  int channel = static_cast<int>(x.size()) - 1;
  c.kept.assign(x.size(), 1);
  for (int d = 1; d <= static_cast<int>(x.size()); ++d) {
    if (d == channel) {
      c.kept[d - 1] = x[d - 1];
    } else {
      c.dims.push_back(d);
      c.count *= static_cast<double>(x[d - 1]);
    }
  }
  return c;
}

// The forward formulas in primitives, for the cotangents of the saved statistics:
// mean = Σx/M, invstd = 1/sqrt(Σ(x-mean)²/M + eps), y = (x-mean)·invstd·scale + bias.
std::vector<Var> expand_forward(Builder& b, const Op& op, std::span<const Var> a) {
  Var x = a[0], scale = a[1], bias = a[2];
  Channels c = channels(b.type(x).shape);
  // One builder call per statement where two would be arguments of one call: C++ leaves
  // their order open, and the tape's op order must not depend on the compiler.
  auto keep = [&](Var v) { return b.reshape(v, {.shape = c.kept}); };
  Var count = scalar(b, x, c.count);
  Var mean = b.div(b.sum(x, {.dims = c.dims}), count);
  Var centered = b.sub(x, keep(mean));
  Var var = b.div(b.sum(b.mul(centered, centered), {.dims = c.dims}), count);
  Var eps = scalar(b, x, attrs_of<Prim::batchnorm_with_stats>(op.attrs).eps);
  Var std = b.sqrt(b.add(var, eps));
  Var invstd = b.div(scalar(b, x, 1), std);
  Var xhat = b.mul(centered, keep(invstd));
  Var scaled = b.mul(xhat, keep(scale));
  Var y = b.add(scaled, keep(bias));
  return {y, mean, invstd};
}

// batchnorm_backward in primitives (see docs/primitives.md), for second derivatives.
std::vector<Var> expand_backward(Builder& b, const Op&, std::span<const Var> a) {
  Var dy = a[0], x = a[1], scale = a[2], mean = a[3], invstd = a[4];
  Channels c = channels(b.type(x).shape);
  auto keep = [&](Var v) { return b.reshape(v, {.shape = c.kept}); };
  Var dbias = b.sum(dy, {.dims = c.dims});
  Var centered = b.sub(x, keep(mean));
  Var xhat = b.mul(centered, keep(invstd));
  Var dscale = b.sum(b.mul(dy, xhat), {.dims = c.dims});
  Var m = scalar(b, x, c.count);
  Var centered_dy = b.sub(dy, keep(b.div(dbias, m)));
  Var inner = b.sub(centered_dy, b.mul(xhat, keep(b.div(dscale, m))));
  Var dx = b.mul(keep(b.mul(scale, invstd)), inner);
  return {dx, dscale, dbias};
}

// (dx, dscale, dbias) = batchnorm_backward(g, x, scale, mean, invstd) when only y has a
// cotangent; otherwise through the expansion.
Dx batchnorm_vjp(Builder& b, const RuleArgs& r) {
  if (r.cots[1] || r.cots[2]) return vjp_by_expansion(b, r, expand_forward);
  std::vector<Var> d =
      b.call(Prim::batchnorm_backward, {*r.cots[0], r.args[0], r.args[1], r.outs[1], r.outs[2]});
  return {d[0], d[1], d[2]};
}

Dx batchnorm_backward_vjp(Builder& b, const RuleArgs& r) {
  return vjp_by_expansion(b, r, expand_backward);
}

}  // namespace

void register_norm_rules(RuleTable& t) {
  t.set(Prim::batchnorm_with_stats, batchnorm_vjp);
  t.set(Prim::batchnorm_backward, batchnorm_backward_vjp);
}

}  // namespace ytape::grad
