// The rules of `distribute` for batch normalization: split along the batch, its
// statistics are sums over every rank's images, so the op is written out in elementwise
// ops and sums whose per-rank parts an allreduce adds (docs/primitives.md has the formulas).
// The results are those of the kernel to rounding: the statistics are summed in another
// order.
#include <optional>

#include "opt/distribute_impl.h"
#include "tape/op_attrs.h"

namespace ytape::dist {

namespace {

// The shapes and constants of a batch norm over x.
struct Stats {
  int channel = 0;        // 1-based: the second to last dim
  Shape channel_shape;    // 1, ..., C: a per-channel vector that broadcasts against x
  std::vector<int64_t> others;  // the dims summed over
  Var count;              // M, elements per channel over every rank, a scalar of x's dtype
};

// Null when x is not split along its batch dim (the last); the rule then declines.
std::optional<Stats> stats_of(Distributor& d, Var x) {
  const Type& t = d.old().type(x);
  const Place p = d.place(x);
  if (p.kind != Place::split || p.dim != t.rank() || t.rank() < 2) return std::nullopt;
  Stats s;
  s.channel = t.rank() - 1;
  s.channel_shape.assign(static_cast<size_t>(s.channel), 1);
  s.channel_shape.back() = t.shape[static_cast<size_t>(s.channel - 1)];
  for (int k = 1; k <= t.rank(); ++k) {
    if (k != s.channel) s.others.push_back(k);
  }
  s.count = d.b().constant(t.dtype, static_cast<double>(t.size() / s.channel_shape.back()));
  return s;
}

Var per_channel(Distributor& d, const Stats& s, Var v) {
  return d.b().reshape(v, {.shape = s.channel_shape});
}

// (y, mean, invstd): y split as x is, the statistics whole.
bool batchnorm_with_stats(Distributor& d, const Op& op) {
  const Var x_old = op.args[0];
  std::optional<Stats> s = stats_of(d, x_old);
  if (!s) return false;
  Builder& b = d.b();
  const Var x = d.split(x_old, d.place(x_old).dim);
  const Var scale = d.replicated(op.args[1]), bias = d.replicated(op.args[2]);
  const double eps = attrs_of<Prim::batchnorm_with_stats>(op.attrs).eps;
  const Var mean = b.div(d.sum_over_ranks({b.sum(x, {.dims = s->others})})[0], s->count);
  const Var centered = b.sub(x, per_channel(d, *s, mean));
  const Var squares = b.sum(b.mul(centered, centered), {.dims = s->others});
  const Var var = b.div(d.sum_over_ranks({squares})[0], s->count);
  const DType dtype = d.old().type(x_old).dtype;
  const Var invstd =
      b.div(b.constant(dtype, 1.0), b.sqrt(b.add(var, b.constant(dtype, eps))));
  const Var y = b.add(b.mul(b.mul(centered, per_channel(d, *s, invstd)), per_channel(d, *s, scale)),
                      per_channel(d, *s, bias));
  d.set(op.outs[0], y, Place::along(d.place(x_old).dim));
  d.set(op.outs[1], mean, Place::rep());
  d.set(op.outs[2], invstd, Place::rep());
  return true;
}

// batchnorm_backward(dy, x, scale, mean, invstd) -> (dx, dscale, dbias).
bool batchnorm_backward(Distributor& d, const Op& op) {
  const Var x_old = op.args[1];
  std::optional<Stats> s = stats_of(d, x_old);
  if (!s) return false;
  Builder& b = d.b();
  const int dim = d.place(x_old).dim;
  const Var dy = d.split(op.args[0], dim), x = d.split(x_old, dim);
  const Var scale = per_channel(d, *s, d.replicated(op.args[2]));
  const Var mean = per_channel(d, *s, d.replicated(op.args[3]));
  const Var invstd = per_channel(d, *s, d.replicated(op.args[4]));
  const Var xhat = b.mul(b.sub(x, mean), invstd);
  std::vector<Var> sums = d.sum_over_ranks(
      {b.sum(dy, {.dims = s->others}), b.sum(b.mul(dy, xhat), {.dims = s->others})});
  const Var dbias = sums[0], dscale = sums[1];
  const Var mean_dy = per_channel(d, *s, b.div(dbias, s->count));
  const Var mean_dyx = per_channel(d, *s, b.div(dscale, s->count));
  const Var dx = b.mul(b.mul(scale, invstd), b.sub(b.sub(dy, mean_dy), b.mul(xhat, mean_dyx)));
  d.set(op.outs[0], dx, Place::along(dim));
  d.set(op.outs[1], dscale, Place::rep());
  d.set(op.outs[2], dbias, Place::rep());
  return true;
}

}  // namespace

void register_norm_rules(std::array<Rule, kNumPrims>& rules) {
  rules[static_cast<int>(Prim::batchnorm_with_stats)] = batchnorm_with_stats;
  rules[static_cast<int>(Prim::batchnorm_backward)] = batchnorm_backward;
}

}  // namespace ytape::dist
