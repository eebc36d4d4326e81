// VJP rules of the indexing primitives. The index argument is an integer: it has none.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// dx = scatter_add(g, idx; dim, size = size(x, dim))
Dx gather_vjp(Builder& b, const RuleArgs& r) {
  int64_t dim = attrs_of<Prim::gather>(r.op.attrs).dim;
  int64_t size = b.type(r.args[0]).shape[dim - 1];
  return {b.scatter_add(*r.cots[0], r.args[1], {.dim = dim, .size = size}), std::nullopt};
}

// dy = gather(g, idx; dim)
Dx scatter_add_vjp(Builder& b, const RuleArgs& r) {
  int64_t dim = attrs_of<Prim::scatter_add>(r.op.attrs).dim;
  return {b.gather(*r.cots[0], r.args[1], {.dim = dim}), std::nullopt};
}

}  // namespace

void register_index_rules(RuleTable& t) {
  t.set(Prim::gather, gather_vjp);
  t.set(Prim::scatter_add, scatter_add_vjp);
}

}  // namespace ytape::grad
