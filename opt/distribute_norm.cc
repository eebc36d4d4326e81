// The rules of `distribute` for batch normalization. Split along the batch, its statistics
// are over every rank's images. Each rank runs the fused kernels of one process on its
// block, with its own statistics, and one allreduce turns their per-channel results into
// those of the global batch; a per-channel affine map then corrects the kernel's output:
// one pass over the activations more than one process makes, and one allreduce of 3
// vectors of C values. The results are those of one process to rounding.
#include <optional>

#include "opt/distribute_impl.h"
#include "tape/op_attrs.h"

namespace ytape::dist {

namespace {

// The shapes and counts of a batch norm over x.
struct Stats {
  Shape channel_shape;  // 1, ..., C, 1: a per-channel vector that broadcasts against x
  Var count, local;     // M and M / ranks: elements per channel, a scalar of x's dtype
  Var ranks;            // N, a scalar of x's dtype
};

// Null when x is not split along its batch dim (the last); the rule then declines.
std::optional<Stats> stats_of(Distributor& d, Var x) {
  const Type& t = d.old().type(x);
  const Place p = d.place(x);
  if (p.kind != Place::split || p.dim != t.rank() || t.rank() < 2) return std::nullopt;
  Stats s;
  s.channel_shape.assign(static_cast<size_t>(t.rank()), 1);
  const int64_t channels = t.shape[static_cast<size_t>(t.rank() - 2)];
  s.channel_shape[static_cast<size_t>(t.rank() - 2)] = channels;
  const double m = static_cast<double>(t.size() / channels);
  s.count = d.b().constant(t.dtype, m);
  s.local = d.b().constant(t.dtype, m / d.ranks());
  s.ranks = d.b().constant(t.dtype, d.ranks());
  return s;
}

Var per_channel(Distributor& d, const Stats& s, Var v) {
  return d.b().reshape(v, {.shape = s.channel_shape});
}

// (y, mean, invstd). With the rank's statistics m_r and v_r + eps = 1 / invstd_r^2, the
// global ones are mean = avg m_r and var + eps = avg (v_r + eps) + avg m_r^2 - mean^2
// (equal blocks); then y = y_r * k + c per channel, k = invstd / invstd_r and
// c = bias (1 - k) + (m_r - mean) invstd scale, since y_r = (x - m_r) invstd_r scale + bias.
bool batchnorm_with_stats(Distributor& d, const Op& op) {
  const Var x_old = op.args[0];
  std::optional<Stats> s = stats_of(d, x_old);
  if (!s) return false;
  Builder& b = d.b();
  const int dim = d.place(x_old).dim;
  const DType dtype = d.old().type(x_old).dtype;
  const Var scale = d.replicated(op.args[1]), bias = d.replicated(op.args[2]);
  std::vector<Var> local =
      b.call(Prim::batchnorm_with_stats, {d.split(x_old, dim), scale, bias}, op.attrs);
  const Var y_r = local[0], m_r = local[1], invstd_r = local[2];
  const Var one = b.constant(dtype, 1.0);
  const Var w_r = b.div(one, b.mul(invstd_r, invstd_r));
  std::vector<Var> sums = d.sum_over_ranks({m_r, w_r, b.mul(m_r, m_r)});
  const Var mean = b.div(sums[0], s->ranks);
  const Var spread =
      b.max(b.sub(b.div(sums[2], s->ranks), b.mul(mean, mean)), b.constant(dtype, 0.0));
  const Var invstd = b.div(one, b.sqrt(b.add(b.div(sums[1], s->ranks), spread)));
  const Var k = b.div(invstd, invstd_r);
  const Var c = b.add(b.mul(bias, b.sub(one, k)), b.mul(b.mul(b.sub(m_r, mean), invstd), scale));
  const Var y = b.add(b.mul(y_r, per_channel(d, *s, k)), per_channel(d, *s, c));
  d.set(op.outs[0], y, Place::along(dim));
  d.set(op.outs[1], mean, Place::rep());
  d.set(op.outs[2], invstd, Place::rep());
  return true;
}

// batchnorm_backward(dy, x, scale, mean, invstd) -> (dx, dscale, dbias), the statistics
// global. The rank's kernel gives the parts of dscale and dbias, and a dx_r whose means
// are over its block (M / N): dx = dx_r + x v + u per channel corrects them, with
// v = scale invstd^2 (dscale_r / (M/N) - dscale / M) and
// u = scale invstd (dbias_r / (M/N) - dbias / M) - v mean.
bool batchnorm_backward(Distributor& d, const Op& op) {
  const Var x_old = op.args[1];
  std::optional<Stats> s = stats_of(d, x_old);
  if (!s) return false;
  Builder& b = d.b();
  const int dim = d.place(x_old).dim;
  const Var x = d.split(x_old, dim);
  const Var scale = d.replicated(op.args[2]), mean = d.replicated(op.args[3]);
  const Var invstd = d.replicated(op.args[4]);
  std::vector<Var> local =
      b.call(Prim::batchnorm_backward, {d.split(op.args[0], dim), x, scale, mean, invstd});
  const Var dx_r = local[0], dscale_r = local[1], dbias_r = local[2];
  std::vector<Var> sums = d.sum_over_ranks({dscale_r, dbias_r});
  const Var dscale = sums[0], dbias = sums[1];
  const Var gain = b.mul(scale, invstd);
  const Var v =
      b.mul(b.mul(gain, invstd), b.sub(b.div(dscale_r, s->local), b.div(dscale, s->count)));
  const Var u =
      b.sub(b.mul(gain, b.sub(b.div(dbias_r, s->local), b.div(dbias, s->count))), b.mul(v, mean));
  const Var dx = b.add(dx_r, b.add(b.mul(x, per_channel(d, *s, v)), per_channel(d, *s, u)));
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
