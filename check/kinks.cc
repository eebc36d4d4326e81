#include "check/kinks.h"

#include <string>

#include "grad/rules.h"
#include "tape/builder.h"
#include "tape/error.h"

namespace ytape::check {

namespace {

// The decision of `op` (copied into `b` with outputs `outs`), or none for a smooth op. A
// KINK op (ops.def) needs a formula here; a JUMP op's result names its piece, except rem's.
std::optional<Var> decision(Builder& b, const Op& op, const VarMap& map,
                            const std::vector<Var>& outs) {
  auto arg = [&](size_t i) { return map[op.args[i]]; };
  switch (op.prim) {
    case Prim::relu:
    case Prim::abs:
      return b.sign(arg(0));
    case Prim::max:
    case Prim::min:
      return b.ge(arg(0), arg(1));
    case Prim::rem:  // the quotient, as rem's gradient reads it
      return b.round(b.div(b.sub(arg(0), outs[0]), arg(1)));
    case Prim::maximum:
    case Prim::minimum: {
      Var x = arg(0);
      return b.eq(x, grad::keep_dims(b, outs[0], b.type(x).shape, reduce_dims(op.prim, op.attrs)));
    }
    case Prim::max_pool2d:
      return b.call(Prim::max_pool2d_with_indices, {arg(0)}, op.attrs)[1];
    case Prim::max_pool2d_with_indices:
      return outs[1];
    case Prim::convert:  // jumps only into integers and bools, which its row cannot say
      if (is_float(b.type(outs[0]).dtype)) return std::nullopt;
      return outs[0];
    default:
      break;
  }
  const PrimInfo& info = prim_info(op.prim);
  if (info.kink()) internal_error("{} has a kink but no decision", info.name);
  if (info.jump()) return outs[0];
  return std::nullopt;
}

}  // namespace

Tape with_decisions(const Tape& t) {
  Builder b = Builder::like(t);
  VarMap map(t);
  std::vector<Var> decisions;
  for (const Op& op : t.ops) {
    copy_op(b, t, op, map);
    if (op.kind != OpKind::call) continue;
    std::vector<Var> outs;
    for (Var v : op.outs) outs.push_back(map[v]);
    if (std::optional<Var> d = decision(b, op, map, outs)) decisions.push_back(*d);
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  for (size_t i = 0; i < decisions.size(); ++i) {
    b.output(decisions[i], "decision." + std::to_string(i + 1));
  }
  return b.finish();
}

}  // namespace ytape::check
