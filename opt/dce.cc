#include "opt/dce.h"

#include <unordered_map>
#include <vector>

#include "tape/builder.h"

namespace ytape {

namespace {

// The plain primitive computing the first output of `op` when its other outputs are
// unused, or `op.prim` itself.
Prim narrowed(const Op& op, const std::vector<bool>& used) {
  if (op.kind != OpKind::call) return op.prim;
  bool extras_used = false;
  for (size_t k = 1; k < op.outs.size(); ++k) extras_used = extras_used || used[op.outs[k].id];
  if (extras_used) return op.prim;
  return plain_form(op.prim).value_or(op.prim);
}

bool always_kept(const Op& op) {
  return op.kind == OpKind::input || (op.kind == OpKind::call && prim_info(op.prim).effectful());
}

// `op` as `cut` leaves it, its args and kept outputs read and set through `map`.
void copy_cut(Builder& b, const Op& op, RegionCut& cut, VarMap& map) {
  VarList args;
  for (size_t k = 0; k < op.args.size(); ++k) {
    if (cut.operands[k]) args.push_back(map[op.args[k]]);
  }
  b.set_loc(op.loc);
  const Op& now = b.record(op.prim, std::move(args), cut.attrs, std::move(cut.regions));
  size_t next = 0;
  for (size_t k = 0; k < op.outs.size(); ++k) {
    if (cut.outputs[k]) map.set(op.outs[k], now.outs[next++]);
  }
}

}  // namespace

PassResult eliminate_dead_code(const Tape& t) {
  std::vector<bool> used(t.types.size(), false);
  for (const Output& o : t.outputs) used[o.var.id] = true;
  std::vector<bool> kept(t.ops.size(), false);
  std::unordered_map<size_t, RegionCut> cuts;  // by op index
  size_t changed = 0;
  for (size_t i = t.ops.size(); i-- > 0;) {
    const Op& op = t.ops[i];
    bool keep = always_kept(op);
    for (Var o : op.outs) keep = keep || used[o.id];
    if (!keep) {
      ++changed;
      continue;
    }
    kept[i] = true;
    if (std::optional<RegionCut> cut = cut_region_op(op, used)) {
      for (size_t k = 0; k < op.args.size(); ++k)
        used[op.args[k].id] = used[op.args[k].id] || cut->operands[k];
      cuts.emplace(i, std::move(*cut));
      ++changed;
      continue;
    }
    for (Var a : op.args) used[a.id] = true;
    if (narrowed(op, used) != op.prim) ++changed;
  }
  if (changed == 0) return {};

  Builder b = Builder::like(t);
  b.reserve(t.ops.size() - changed, t.types.size());
  VarMap map(t);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    if (!kept[i]) continue;
    const Op& op = t.ops[i];
    auto cut = cuts.find(i);
    if (cut != cuts.end()) {
      copy_cut(b, op, cut->second, map);
      continue;
    }
    Prim p = narrowed(op, used);
    if (p == op.prim) {
      copy_op(b, t, op, map);
      continue;
    }
    b.set_loc(op.loc);
    map.set(op.outs[0], b.call1(p, map.map(op.args), op.attrs));
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

}  // namespace ytape
