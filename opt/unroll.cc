#include "opt/unroll.h"

#include "tape/builder.h"

namespace ytape {

namespace {

// Slice t (0-based) of `stacked` on its last dim, without that dim.
Var step_of(Builder& b, Var stacked, int64_t t) {
  const Shape s = b.type(stacked).shape;  // a copy: the builder grows below
  std::vector<int64_t> start(s.size(), 1), stop(s), step(s.size(), 1);
  start.back() = stop.back() = t + 1;
  Var one = b.slice(stacked, {.start = start, .stop = stop, .step = step});
  return b.reshape(one, {.shape = Shape(s.begin(), s.end() - 1)});
}

// The scan `op` of `src`, its args read through `map`, written out on `b`.
void unroll_scan(Builder& b, const Tape& src, const Op& op, VarMap& map) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  const Tape& body = op.regions[0];
  const auto consts = static_cast<size_t>(a.consts), carries = static_cast<size_t>(a.carries);
  const size_t xs = op.args.size() - consts - carries, ys = body.outputs.size() - carries;
  std::vector<Var> carry;
  for (size_t k = 0; k < carries; ++k) carry.push_back(map[op.args[consts + k]]);
  std::vector<std::vector<Var>> steps(ys, std::vector<Var>(static_cast<size_t>(a.length)));
  for (int64_t n = 0; n < a.length; ++n) {
    const int64_t t = a.reverse ? a.length - 1 - n : n;
    VarMap inner(body);
    for (size_t i = 0; i < consts; ++i) inner.set(body.ops[i].outs[0], map[op.args[i]]);
    for (size_t k = 0; k < carries; ++k) inner.set(body.ops[consts + k].outs[0], carry[k]);
    for (size_t j = 0; j < xs; ++j) {
      inner.set(body.ops[consts + carries + j].outs[0],
                step_of(b, map[op.args[consts + carries + j]], t));
    }
    for (size_t i = body.num_inputs(); i < body.ops.size(); ++i)
      copy_op(b, body, body.ops[i], inner);
    for (size_t k = 0; k < carries; ++k) carry[k] = inner[body.outputs[k].var];
    for (size_t j = 0; j < ys; ++j) {
      Var y = inner[body.outputs[carries + j].var];
      Shape s = b.type(y).shape;
      s.push_back(1);
      steps[j][static_cast<size_t>(t)] = b.reshape(y, {.shape = s});
    }
  }
  b.set_loc(op.loc);
  for (size_t k = 0; k < carries; ++k) map.set(op.outs[k], carry[k]);
  for (size_t j = 0; j < ys; ++j) {
    const Type& type = src.type(op.outs[carries + j]);
    Var stacked = a.length == 0 ? b.constant(type.dtype, 0.0, type.shape)
                                : b.concat(steps[j], {.dim = static_cast<int64_t>(type.rank())});
    map.set(op.outs[carries + j], stacked);
  }
}

// The region of cond `op` that a constant selector `value` names, or null where it names
// none (a run-time error the cond keeps).
const Tape* chosen_branch(const Op& op, const Op& value, DType dtype) {
  double s = literal_at(value, dtype, 0);
  if (dtype == DType::boolean) return &op.regions[s != 0 ? 0 : 1];
  if (s < 1 || s > static_cast<double>(op.regions.size())) return nullptr;
  return &op.regions[static_cast<size_t>(s) - 1];
}

// Whether `op` is a scan that runs every step: one that may skip some (`running`, `mask`)
// stays a scan.
bool every_step(const Op& op) {
  return op.kind == OpKind::call && op.prim == Prim::scan &&
         !skips_steps(attrs_of<Prim::scan>(op.attrs));
}

}  // namespace

PassResult inline_regions(const Tape& t) {
  std::vector<const Op*> constant(t.types.size(), nullptr);
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::constant) constant[op.outs[0].id] = &op;
  }
  auto inlined = [&](const Op& op) -> const Tape* {
    if (op.kind != OpKind::call) return nullptr;
    if (every_step(op) && attrs_of<Prim::scan>(op.attrs).length <= 1) return &op.regions[0];
    if (op.prim != Prim::cond || constant[op.args[0].id] == nullptr) return nullptr;
    return chosen_branch(op, *constant[op.args[0].id], t.type(op.args[0]).dtype);
  };
  size_t changed = 0;
  for (const Op& op : t.ops) changed += inlined(op) != nullptr;
  if (changed == 0) return {};
  Builder b = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) {
    const Tape* r = inlined(op);
    if (r == nullptr) {
      copy_op(b, t, op, map);
    } else if (op.prim == Prim::scan) {
      unroll_scan(b, t, op, map);
    } else {
      b.set_loc(op.loc);
      VarList operands = map.map(op.args);
      std::vector<Var> yields = inline_region(b, *r, std::span(operands).subspan(1));
      for (size_t k = 0; k < op.outs.size(); ++k) map.set(op.outs[k], yields[k]);
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

bool has_regions(const Tape& t) {
  for (const Op& op : t.ops) {
    if (!op.regions.empty()) return true;
  }
  return false;
}

Tape unroll_regions(const Tape& t) {
  Builder b = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) {
    if (every_step(op)) {
      unroll_scan(b, t, op, map);
    } else {
      copy_op(b, t, op, map);
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape
