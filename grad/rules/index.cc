// VJP rules of the indexing primitives. The index argument is an integer: it has none.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// dx = scatter_add(g, idx; dim, size = size(x, dim))
Dx gather_vjp(Builder& b, const RuleArgs& r) {
  int64_t dim = r.op.attrs.get_int("dim");
  int64_t size = b.type(r.args[0]).shape[dim - 1];
  return {b.call1(Prim::scatter_add, {*r.cots[0], r.args[1]}, {{"dim", dim}, {"size", size}}),
          std::nullopt};
}

// dy = gather(g, idx; dim)
Dx scatter_add_vjp(Builder& b, const RuleArgs& r) {
  return {b.call1(Prim::gather, {*r.cots[0], r.args[1]}, {{"dim", r.op.attrs.get_int("dim")}}),
          std::nullopt};
}

}  // namespace

void register_index_rules(RuleTable& t) {
  t.set(Prim::gather, gather_vjp);
  t.set(Prim::scatter_add, scatter_add_vjp);
}

}  // namespace ytape::grad
