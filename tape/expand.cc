#include "tape/expand.h"

#include <limits>

namespace ytape {

namespace {

// kᵀq per slice, -inf where the mask is false: (tk, tq, slices...).
Var masked_scores(Builder& b, Var q, Var k, Var mask) {
  Var s = b.matmul(k, q, {.transpose_a = true});
  Var minus_inf = b.constant(b.type(q).dtype, -std::numeric_limits<double>::infinity());
  return b.select(mask, s, minus_inf);
}

// `x` of (tq, slices...), one per query, reshaped to (1, tq, slices...) so that it
// broadcasts against the scores.
Var per_query(Builder& b, Var x) {
  Shape shape = b.type(x).shape;
  shape.insert(shape.begin(), 1);
  return b.reshape(x, {.shape = shape});
}

}  // namespace

std::vector<Var> expand_attention(Builder& b, const Op&, std::span<const Var> a) {
  Var s = masked_scores(b, a[0], a[1], a[3]);
  Var out = b.matmul(a[2], b.softmax(s, {.dims = {1}}));
  // One builder call per statement where two would be arguments of one call: C++ leaves
  // their order open, and the tape's op order must not depend on the compiler.
  Var m = b.maximum(s, {.dims = {1}});
  Var e = b.exp(b.sub(s, per_query(b, m)));
  Var lse = b.add(m, b.log(b.sum(e, {.dims = {1}})));
  return {out, lse};
}

std::vector<Var> expand_attention_backward(Builder& b, const Op&, std::span<const Var> a) {
  Var q = a[0], k = a[1], v = a[2], out = a[4], lse = a[5], dout = a[6];
  Var s = masked_scores(b, q, k, a[3]);
  Var p = b.exp(b.sub(s, per_query(b, lse)));
  Var d = b.sum(b.mul(dout, out), {.dims = {1}});
  Var dp = b.matmul(v, dout, {.transpose_a = true});
  Var ds = b.mul(p, b.sub(dp, per_query(b, d)));
  Var dq = b.matmul(k, ds);
  Var dk = b.matmul(q, ds, {.transpose_b = true});
  Var dv = b.matmul(dout, p, {.transpose_b = true});
  return {dq, dk, dv};
}

}  // namespace ytape
