// VJP rules of linear algebra. C = op(A) op(B), op the optional transpose; G: C's cotangent.
#include "grad/rules.h"
#include "tape/expand.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

Var matmul(Builder& b, Var x, Var y, bool tx, bool ty) {
  return b.matmul(x, y, {.transpose_a = tx, .transpose_b = ty});
}

// dA = G op(B)ᵀ, or op(B) Gᵀ when A is transposed;
// dB = op(A)ᵀ G, or Gᵀ op(A) when B is transposed.
Dx matmul_vjp(Builder& b, const RuleArgs& r) {
  const auto attrs = attrs_of<Prim::matmul>(r.op.attrs);
  bool ta = attrs.transpose_a, tb = attrs.transpose_b;
  Var a = r.args[0], bm = r.args[1], g = *r.cots[0];
  Dx dx(2);
  if (r.need[0]) dx[0] = ta ? matmul(b, bm, g, tb, true) : matmul(b, g, bm, false, !tb);
  if (r.need[1]) dx[1] = tb ? matmul(b, g, a, true, ta) : matmul(b, a, g, !ta, false);
  return dx;
}

// (dq, dk, dv) = attention_backward(q, k, v, mask, out, lse, ū) when only the output has a
// cotangent; through the expansion when lse has one too (a tape that reads it).
Dx attention_vjp(Builder& b, const RuleArgs& r) {
  if (r.cots[1]) return vjp_by_expansion(b, r, expand_attention);
  std::vector<Var> d = b.attention_backward(r.args[0], r.args[1], r.args[2], r.args[3], r.outs[0],
                                            r.outs[1], *r.cots[0]);
  return {d[0], d[1], d[2], std::nullopt};
}

Dx attention_backward_vjp(Builder& b, const RuleArgs& r) {
  return vjp_by_expansion(b, r, expand_attention_backward);
}

}  // namespace

void register_linalg_rules(RuleTable& t) {
  t.set(Prim::matmul, matmul_vjp);
  t.set(Prim::attention, attention_vjp);
  t.set(Prim::attention_backward, attention_backward_vjp);
}

}  // namespace ytape::grad
