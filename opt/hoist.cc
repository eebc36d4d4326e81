#include "opt/hoist.h"

#include "tape/builder.h"
#include "tape/op_attrs.h"

namespace ytape {

namespace {

// Per op of region `r`, whose first `consts` parameters are the same on every trip: whether
// it computes the same on every trip too (its args all such values or constants) and may
// move out (no effect, no random draw, no region of its own).
std::vector<bool> invariant_ops(const Tape& r, size_t consts) {
  std::vector<bool> same(r.types.size(), false), out(r.ops.size(), false);
  for (size_t i = 0; i < consts; ++i) same[r.ops[i].outs[0].id] = true;
  for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) {
    const Op& op = r.ops[i];
    if (op.kind == OpKind::constant) {
      same[op.outs[0].id] = true;
      continue;
    }
    const PrimInfo& info = prim_info(op.prim);
    bool movable = !info.effectful() && !info.random() && !info.holds_regions();
    for (Var a : op.args) movable = movable && same[a.id];
    out[i] = movable;
    for (Var o : op.outs) same[o.id] = movable;
  }
  return out;
}

// The invariant ops' results that the rest of `r` reads (other ops, its yields): what the
// loop is given in their place, as new consts.
std::vector<Var> frontier(const Tape& r, const std::vector<bool>& moved) {
  std::vector<bool> made_outside(r.types.size(), false), wanted(r.types.size(), false);
  for (size_t i = 0; i < r.ops.size(); ++i) {
    for (Var o : r.ops[i].outs) made_outside[o.id] = moved[i];
  }
  std::vector<Var> out;
  auto want = [&](Var v) {
    if (made_outside[v.id] && !wanted[v.id]) out.push_back(v);
    wanted[v.id] = true;
  };
  for (size_t i = 0; i < r.ops.size(); ++i) {
    if (moved[i]) continue;
    for (Var a : r.ops[i].args) want(a);
  }
  for (const Output& o : r.outputs) want(o.var);
  return out;
}

// A value computed before a loop in place of an invariant op of its region `region`.
struct Hoisted {
  size_t region;
  Var var;  // of that region
  Type type;
};

// Region `r` with the ops `moved` taken out: its first `consts` parameters, then one per
// of `added` (each region of the op takes every new const, whichever region it came from),
// then the rest.
Tape without(const Tape& r, size_t consts, const std::vector<bool>& moved,
             const std::vector<Hoisted>& added, size_t self) {
  Builder b;
  VarMap map(r);
  auto param = [&](size_t i) {
    const Op& in = r.ops[i];
    map.set(in.outs[0], b.input(in.name, r.type(in.outs[0])));
  };
  for (size_t i = 0; i < consts; ++i) param(i);
  for (size_t k = 0; k < added.size(); ++k) {
    Var p = b.input("hoisted." + std::to_string(k + 1), added[k].type);
    if (added[k].region == self) map.set(added[k].var, p);
  }
  for (size_t i = consts; i < r.num_inputs(); ++i) param(i);
  for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) {
    if (!moved[i]) copy_op(b, r, r.ops[i], map);
  }
  for (const Output& o : r.outputs) b.output(map[o.var], "");
  Tape out = b.finish();
  out.name = r.name;
  return out;
}

bool is_loop(const Op& op) {
  return op.kind == OpKind::call && (op.prim == Prim::scan || op.prim == Prim::while_loop);
}

size_t consts_of(const Op& op) {
  return static_cast<size_t>(op.prim == Prim::scan ? attrs_of<Prim::scan>(op.attrs).consts
                                                   : attrs_of<Prim::while_loop>(op.attrs).consts);
}

// Writes loop `op` (a scan or a while_loop of `t`, args read through `map`) on `b` with its
// regions' invariant ops computed before it, their results new consts.
void hoist_op(Builder& b, const Op& op, VarMap& map) {
  const bool scan = op.prim == Prim::scan;
  const size_t consts = consts_of(op);
  b.set_loc(op.loc);
  std::vector<Hoisted> added;  // each new const
  VarList hoisted;             // their values outside
  std::vector<std::vector<bool>> moved;
  for (size_t k = 0; k < op.regions.size(); ++k) {
    const Tape& r = op.regions[k];
    moved.push_back(invariant_ops(r, consts));
    VarMap inner(r);
    for (size_t i = 0; i < consts; ++i) inner.set(r.ops[i].outs[0], map[op.args[i]]);
    // The moved ops, and the constants they read, in order.
    std::vector<bool> read(r.types.size(), false);
    for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) {
      if (!moved[k][i]) continue;
      for (Var a : r.ops[i].args) read[a.id] = true;
    }
    for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) {
      const Op& o = r.ops[i];
      bool constant = o.kind == OpKind::constant && read[o.outs[0].id];
      if (moved[k][i] || constant) copy_op(b, r, o, inner);
    }
    for (Var v : frontier(r, moved[k])) {
      added.push_back({k, v, r.type(v)});
      hoisted.push_back(inner[v]);
    }
  }
  VarList args;
  for (size_t i = 0; i < consts; ++i) args.push_back(map[op.args[i]]);
  for (Var v : hoisted) args.push_back(v);
  for (size_t i = consts; i < op.args.size(); ++i) args.push_back(map[op.args[i]]);
  std::vector<Tape> regions;
  for (size_t k = 0; k < op.regions.size(); ++k)
    regions.push_back(without(op.regions[k], consts, moved[k], added, k));
  Attrs attrs;
  const auto more = static_cast<int64_t>(hoisted.size());
  if (scan) {
    auto a = attrs_of<Prim::scan>(op.attrs);
    a.consts += more;
    attrs = a.to_attrs();
  } else {
    auto a = attrs_of<Prim::while_loop>(op.attrs);
    a.consts += more;
    attrs = a.to_attrs();
  }
  const Op& now = b.record(op.prim, std::move(args), attrs, std::move(regions));
  for (size_t k = 0; k < op.outs.size(); ++k) map.set(op.outs[k], now.outs[k]);
}

}  // namespace

PassResult hoist_invariants(const Tape& t) {
  size_t changed = 0;
  for (const Op& op : t.ops) {
    if (!is_loop(op)) continue;
    for (const Tape& r : op.regions)
      changed += !frontier(r, invariant_ops(r, consts_of(op))).empty();
  }
  if (changed == 0) return {};
  Builder b = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) {
    if (is_loop(op)) {
      hoist_op(b, op, map);
    } else {
      copy_op(b, t, op, map);
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

}  // namespace ytape
