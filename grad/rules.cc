#include "grad/rules.h"

#include <fmt/format.h>

#include <string>

#include "grad/backprop.h"

namespace ytape::grad {

const RuleTable& rules() {
  static const RuleTable table = [] {
    RuleTable t;
#define FAMILY(f) register_##f##_rules(t);
#include "tape/families.def"
#undef FAMILY
    return t;
  }();
  return table;
}

Var scalar(Builder& b, Var like, double value) {
  return b.constant(b.type(like).dtype, value);
}

Var zeros(Builder& b, const Type& type) {
  return b.fill({.value = 0, .dtype = type.dtype, .shape = type.shape});
}

Var keep_dims(Builder& b, Var x, const Shape& shape, std::span<const int64_t> dims) {
  Shape kept = shape;
  for (int64_t d : dims) kept[d - 1] = 1;
  return b.type(x).shape == kept ? x : b.reshape(x, {.shape = std::move(kept)});
}

std::vector<Cotangent> vjp_by_expansion(Builder& b, const RuleArgs& r, Expansion expand) {
  // The expansion is built as a small tape of its own, then differentiated onto `b` by
  // the same driver, so its rules need no second implementation.
  Builder mini;
  std::vector<Var> args;
  for (size_t i = 0; i < r.args.size(); ++i) {
    args.push_back(mini.input(fmt::format("x{}", i + 1), b.type(r.args[i])));
  }
  std::vector<Var> outs = expand(mini, r.op, args);
  for (size_t k = 0; k < outs.size(); ++k) mini.output(outs[k], fmt::format("y{}", k + 1));
  Tape t = mini.finish();

  Backprop bp(b, t);
  bp.set_fixed_loc(b.loc());
  for (size_t i = 0; i < r.args.size(); ++i) bp.bind_input(t.ops[i].outs[0], r.args[i], r.need[i]);
  bp.forward();
  for (size_t k = 0; k < t.outputs.size() && k < r.cots.size(); ++k) {
    if (r.cots[k]) bp.seed(t.outputs[k].var, *r.cots[k]);
  }
  bp.backward();
  std::vector<Cotangent> dx;
  for (size_t i = 0; i < r.args.size(); ++i) dx.push_back(bp.cotangent(t.ops[i].outs[0]));
  return dx;
}

}  // namespace ytape::grad
