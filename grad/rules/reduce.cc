// VJP rules of the reductions. x: the argument; z: the output; g: its cotangent;
// keep(v): v reshaped with the reduced dims kept as size 1, so that it broadcasts.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

std::vector<int64_t> dims_of(const RuleArgs& r) {
  return reduce_dims(r.op.prim, r.op.attrs);
}

Var keep(Builder& b, const RuleArgs& r, Var v) {
  return keep_dims(b, v, b.type(r.args[0]).shape, dims_of(r));
}

// dx = broadcast(keep(g))
Dx sum_vjp(Builder& b, const RuleArgs& r) {
  return {b.broadcast_to(keep(b, r, *r.cots[0]), {.shape = b.type(r.args[0]).shape})};
}

// dx = g / n where x equals the extremum (n: how many elements tie for it), else 0
Dx extremum_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0];
  Var hit = b.eq(x, keep(b, r, r.outs[0]));
  Var count = b.sum(b.convert(hit, {.dtype = b.type(x).dtype}), {.dims = dims_of(r)});
  Var share = keep(b, r, b.div(*r.cots[0], count));
  return {b.select(hit, share, scalar(b, x, 0))};
}

// dx = z * (g - keep(sum(g * z)))
Dx softmax_vjp(Builder& b, const RuleArgs& r) {
  Var z = r.outs[0], g = *r.cots[0];
  Var dot = b.sum(b.mul(g, z), {.dims = dims_of(r)});
  return {b.mul(z, b.sub(g, keep(b, r, dot)))};
}

// dx = g - exp(z) * keep(sum(g))
Dx log_softmax_vjp(Builder& b, const RuleArgs& r) {
  Var z = r.outs[0], g = *r.cots[0];
  Var total = keep(b, r, b.sum(g, {.dims = dims_of(r)}));
  return {b.sub(g, b.mul(b.exp(z), total))};
}

}  // namespace

void register_reduce_rules(RuleTable& t) {
  t.set(Prim::sum, sum_vjp);
  t.set(Prim::maximum, extremum_vjp);
  t.set(Prim::minimum, extremum_vjp);
  t.set(Prim::softmax, softmax_vjp);
  t.set(Prim::log_softmax, log_softmax_vjp);
}

}  // namespace ytape::grad
