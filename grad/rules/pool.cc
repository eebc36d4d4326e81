// VJP rules of pooling. max_pool2d is emitted as max_pool2d_with_indices so that its
// rule can route each cotangent to the element that won its window.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// dx = g added at the winners' indices
Dx max_pool_vjp(Builder& b, const RuleArgs& r) {
  if (!r.cots[0]) return {std::nullopt};  // the indices have no cotangent
  return {b.max_pool2d_backward(*r.cots[0], r.outs[1], {.shape = b.type(r.args[0]).shape})};
}

// d(dy) = g read at the indices: gather over each flattened (W, H) plane
Dx max_pool_backward_vjp(Builder& b, const RuleArgs& r) {
  // Copies: the builder grows below, which moves its types.
  const Shape in = b.type(r.outs[0]).shape;   // (W, H, C, N)
  const Shape out = b.type(r.args[0]).shape;  // (W', H', C, N)
  Var g = b.reshape(*r.cots[0], {.shape = {in[0] * in[1], in[2], in[3]}});
  Var idx = b.reshape(r.args[1], {.shape = {out[0] * out[1], out[2], out[3]}});
  Var picked = b.gather(g, idx, {.dim = 1});
  return {b.reshape(picked, {.shape = out}), std::nullopt};
}

// dx = avg_pool2d_backward(g; shape of x, window, stride, pad)
Dx avg_pool_vjp(Builder& b, const RuleArgs& r) {
  const auto a = attrs_of<Prim::avg_pool2d>(r.op.attrs);
  return {b.avg_pool2d_backward(
      *r.cots[0],
      {.shape = b.type(r.args[0]).shape, .window = a.window, .stride = a.stride, .pad = a.pad})};
}

// d(dy) = avg_pool2d(g; window, stride, pad): the backward op is its transpose
Dx avg_pool_backward_vjp(Builder& b, const RuleArgs& r) {
  const auto a = attrs_of<Prim::avg_pool2d_backward>(r.op.attrs);
  return {b.avg_pool2d(*r.cots[0], {.window = a.window, .stride = a.stride, .pad = a.pad})};
}

}  // namespace

void register_pool_rules(RuleTable& t) {
  t.set(Prim::max_pool2d_with_indices, max_pool_vjp);
  t.set(Prim::max_pool2d_backward, max_pool_backward_vjp);
  t.set(Prim::avg_pool2d, avg_pool_vjp);
  t.set(Prim::avg_pool2d_backward, avg_pool_backward_vjp);
}

}  // namespace ytape::grad
