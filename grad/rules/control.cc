// VJP rules of the control family (docs/regions.md).
//
// scan: the forward keeps the carries each step was given (scan_keeping_carries); the
// backward is a scan the other way whose body is the forward body's VJP at that step: it
// recomputes the step from its carries and slices, and takes the cotangents of the next
// carries and of y_t to those of the carries, the consts (summed over the steps, as carries
// of the backward scan) and x_t. Only the carries are stored per step; the body's
// intermediate values are computed again, so memory grows as steps × carries. A scan that
// may skip steps (`running`, `mask`) also yields whether each step ran, and its backward
// runs only those steps (its mask).
#include <fmt/format.h>

#include "grad/backprop.h"
#include "grad/rules.h"

namespace ytape::grad {

namespace {

// The positions in `types` that are floats: only they have cotangents.
std::vector<size_t> floats(std::span<const Type> types) {
  std::vector<size_t> out;
  for (size_t i = 0; i < types.size(); ++i) {
    if (is_float(types[i].dtype)) out.push_back(i);
  }
  return out;
}

// The backward body: parameters (consts, dh, dc, h_t, x_t, dy_t), yields (dh', dc', dx_t),
// for the float carries (fk), consts (fc), xs (fx) and ys (fy).
struct ScanParts {
  size_t consts, carries, xs, ys;
  std::vector<size_t> fc, fk, fx, fy;
};

// The backward body, and the vars of its recomputed step's yields.
struct Backward {
  Tape tape;
  std::vector<Var> primal;
};

Backward backward_body(const Tape& body, const ScanParts& l) {
  std::vector<Type> params = body.input_types(), yields = body.output_types();
  Builder b;
  auto input = [&](std::string name, const Type& t) { return b.input(std::move(name), t); };
  std::vector<Var> consts, dh, dc, h, x, dy;
  for (size_t i = 0; i < l.consts; ++i)
    consts.push_back(input(fmt::format("c{}", i + 1), params[i]));
  for (size_t k : l.fk) dh.push_back(input(fmt::format("dh{}", k + 1), params[l.consts + k]));
  for (size_t i : l.fc) dc.push_back(input(fmt::format("dc{}", i + 1), params[i]));
  for (size_t k = 0; k < l.carries; ++k)
    h.push_back(input(fmt::format("h{}", k + 1), params[l.consts + k]));
  for (size_t j = 0; j < l.xs; ++j) {
    x.push_back(input(fmt::format("x{}", j + 1), params[l.consts + l.carries + j]));
  }
  for (size_t j : l.fy) dy.push_back(input(fmt::format("dy{}", j + 1), yields[l.carries + j]));
  // The step again, then its VJP.
  Backprop bp(b, body);
  for (size_t i = 0; i < params.size(); ++i) {
    Var now = i < l.consts               ? consts[i]
              : i < l.consts + l.carries ? h[i - l.consts]
                                         : x[i - l.consts - l.carries];
    bp.bind_input(body.ops[i].outs[0], now, true);
  }
  bp.forward();
  for (size_t n = 0; n < l.fk.size(); ++n) bp.seed(body.outputs[l.fk[n]].var, dh[n]);
  for (size_t n = 0; n < l.fy.size(); ++n) bp.seed(body.outputs[l.carries + l.fy[n]].var, dy[n]);
  bp.backward();
  auto cot = [&](size_t param) {
    Cotangent c = bp.cotangent(body.ops[param].outs[0]);
    return c ? *c : zeros(b, params[param]);
  };
  for (size_t k : l.fk) b.output(cot(l.consts + k), "");
  for (size_t n = 0; n < l.fc.size(); ++n) b.output(b.add(dc[n], cot(l.fc[n])), "");
  for (size_t j : l.fx) b.output(cot(l.consts + l.carries + j), "");
  std::vector<Var> primal;
  for (const Output& o : body.outputs) primal.push_back(bp[o.var]);
  Tape t = b.finish();
  t.name = "body";
  return {std::move(t), std::move(primal)};
}

// The gradient of a scan split at its residuals: `forward` is the body yielding, after its
// own yields, the values of each step that its VJP reads (stacked by the forward scan);
// `backward` is the VJP alone, on (consts, dh, dc, residuals, dy). A residual that is an
// x_t is not yielded: the backward scan reads that xs operand. Values that depend on the
// consts alone (constants, a transposed weight) are computed in the backward body again
// rather than stored per step.
struct Split {
  Tape forward, backward;
  std::vector<int64_t> from_xs;  // per residual: the xs operand it is, or -1: yielded
};

// The parameters of a backward body (backward_body's order): consts, dh, dc (cotangents),
// h, x (the step), dy (cotangents).
struct BackwardParams {
  size_t h0, x0, dy0, all;
  BackwardParams(const Tape& t, const ScanParts& l)
      : h0(l.consts + l.fk.size() + l.fc.size()),
        x0(h0 + l.carries),
        dy0(x0 + l.xs),
        all(t.num_inputs()) {}
};

// Per var of the backward body `t`: whether it depends on the consts alone, on the step,
// or on a cotangent.
enum Dependence : uint8_t { kInvariant, kStep, kCot };
std::vector<uint8_t> dependences(const Tape& t, const ScanParts& l, const BackwardParams& p) {
  std::vector<uint8_t> dep(t.types.size(), kInvariant);
  for (size_t i = 0; i < p.all; ++i) {
    bool cot = (i >= l.consts && i < p.h0) || i >= p.dy0;
    dep[t.ops[i].outs[0].id] = cot ? kCot : i >= p.h0 ? kStep : kInvariant;
  }
  for (size_t i = p.all; i < t.ops.size(); ++i) {
    uint8_t d = kInvariant;
    for (Var a : t.ops[i].args) d = std::max(d, dep[a.id]);
    for (Var o : t.ops[i].outs) dep[o.id] = d;
  }
  return dep;
}

// The ops from `first` on that `roots` need, walking back through the args of each op
// kept, except through the ops `stop` refuses (whose outputs are then needed as they are).
template <typename Stop>
std::vector<bool> needed(const Tape& t, size_t first, std::span<const Var> roots, Stop stop,
                         std::vector<bool>& live) {
  live.assign(t.types.size(), false);
  for (Var v : roots) live[v.id] = true;
  std::vector<bool> keep(t.ops.size(), false);
  for (size_t i = t.ops.size(); i-- > first;) {
    const Op& op = t.ops[i];
    bool used = false;
    for (Var o : op.outs) used = used || live[o.id];
    if (!used || stop(op)) continue;
    keep[i] = true;
    for (Var a : op.args) live[a.id] = true;
  }
  return keep;
}

// Per var: whether the backward may compute it from residuals it needs anyway: an
// addition, subtraction, product or negation of values that depend on the consts alone,
// of residuals (`back` before this choice) that stay, or of such values.
std::vector<bool> recomputable(const Tape& t, size_t first, const std::vector<uint8_t>& dep,
                               const std::vector<bool>& back) {
  std::vector<bool> again(t.types.size(), false);
  for (size_t i = first; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    bool cheap = op.kind == OpKind::call && (op.prim == Prim::add || op.prim == Prim::sub ||
                                             op.prim == Prim::mul || op.prim == Prim::neg);
    if (!cheap || dep[op.outs[0].id] != kStep) continue;
    bool from_kept = true;
    for (Var a : op.args) {
      from_kept = from_kept && (dep[a.id] == kInvariant || again[a.id] || back[a.id]);
    }
    again[op.outs[0].id] = from_kept;
  }
  return again;
}

Split split_at_residuals(const Tape& body, const ScanParts& l) {
  Backward bw = backward_body(body, l);
  const Tape& t = bw.tape;
  const BackwardParams p(t, l);
  std::vector<uint8_t> dep = dependences(t, l, p);
  // The backward body: what its yields need, down to the step's values (the residuals).
  std::vector<Var> yields;
  for (const Output& o : t.outputs) yields.push_back(o.var);
  std::vector<bool> back;
  auto stored = [&](const Op& op) { return dep[op.outs[0].id] == kStep; };
  needed(t, p.all, yields, stored, back);
  // A residual that additions and products compute from others (1 - s of a sigmoid s) is
  // computed again in the backward body: it costs a pass over values read there anyway,
  // and a stored value less per step.
  std::vector<bool> again = recomputable(t, p.all, dep, back);
  std::vector<bool> in_back = needed(
      t, p.all, yields, [&](const Op& op) { return stored(op) && !again[op.outs[0].id]; }, back);
  std::vector<Var> residuals;
  for (size_t i = p.h0; i < p.dy0; ++i) {
    if (back[t.ops[i].outs[0].id]) residuals.push_back(t.ops[i].outs[0]);
  }
  for (size_t i = p.all; i < t.ops.size(); ++i) {
    for (Var o : t.ops[i].outs) {  // a cond in the body gives several
      if (back[o.id] && dep[o.id] == kStep && !in_back[i]) residuals.push_back(o);
    }
  }
  // The forward body: the step's yields and the residuals.
  std::vector<Var> roots = bw.primal;
  roots.insert(roots.end(), residuals.begin(), residuals.end());
  std::vector<bool> fwd;
  std::vector<bool> in_fwd = needed(
      t, p.all, roots, [](const Op&) { return false; }, fwd);
  Split out;
  Builder f;
  VarMap fmap(t);
  std::vector<Type> types = body.input_types();
  for (size_t i = 0; i < types.size(); ++i) {
    size_t from = i < l.consts ? i : p.h0 + (i - l.consts);
    fmap.set(t.ops[from].outs[0], f.input(body.ops[i].name, types[i]));
  }
  Builder g;
  VarMap gmap(t);
  auto param = [&](size_t i) {
    gmap.set(t.ops[i].outs[0], g.input(t.ops[i].name, t.type(t.ops[i].outs[0])));
  };
  for (size_t i = 0; i < p.h0; ++i) param(i);
  for (size_t r = 0; r < residuals.size(); ++r)
    gmap.set(residuals[r], g.input(fmt::format("r{}", r + 1), t.type(residuals[r])));
  for (size_t i = p.dy0; i < p.all; ++i) param(i);
  for (size_t i = p.all; i < t.ops.size(); ++i) {
    if (in_fwd[i]) copy_op(f, t, t.ops[i], fmap);
    if (in_back[i]) copy_op(g, t, t.ops[i], gmap);
  }
  for (Var v : bw.primal) f.output(fmap[v], "");
  for (Var v : residuals) {
    int64_t x = -1;
    for (size_t j = 0; j < l.xs; ++j) {
      if (t.ops[p.x0 + j].outs[0] == v) x = static_cast<int64_t>(j);
    }
    out.from_xs.push_back(x);
    if (x < 0) f.output(fmap[v], "");
  }
  for (Var y : yields) g.output(gmap[y], "");
  out.forward = f.finish();
  out.backward = g.finish();
  out.forward.name = out.backward.name = "body";
  return out;
}

// `r` again with an unread bool[] parameter after its own (`param`), or yielding true
// after its own yields: a masked backward body, or a forward one saying it ran.
Tape with_flag(const Tape& r, bool param) {
  Builder b;
  std::vector<Var> p;
  for (size_t i = 0; i < r.num_inputs(); ++i)
    p.push_back(b.input(r.ops[i].name, r.type(r.ops[i].outs[0])));
  if (param) b.input("ran", Type{DType::boolean, {}});
  std::vector<Var> yields = inline_region(b, r, p);
  for (size_t k = 0; k < yields.size(); ++k) b.output(yields[k], r.outputs[k].name);
  if (!param) b.output(b.constant(DType::boolean, 1.0), "");
  Tape t = b.finish();
  t.name = r.name;
  return t;
}

ScanParts parts_of(const Op& op) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  const Tape& body = op.regions[0];
  std::vector<Type> params = body.input_types(), yields = body.output_types();
  ScanParts l{static_cast<size_t>(a.consts), static_cast<size_t>(a.carries), 0, 0, {}, {}, {}, {}};
  l.xs = params.size() - l.consts - l.carries;
  l.ys = yields.size() - l.carries;
  l.fc = floats(std::span(params).first(l.consts));
  l.fk = floats(std::span(params).subspan(l.consts, l.carries));
  l.fx = floats(std::span(params).subspan(l.consts + l.carries));
  l.fy = floats(std::span(yields).subspan(l.carries));
  return l;
}

std::vector<Cotangent> scan_vjp(Builder& b, const RuleArgs& r) {
  const auto a = attrs_of<Prim::scan>(r.op.attrs);
  const Tape& body = r.op.regions[0];
  std::vector<Type> params = body.input_types();
  ScanParts l = parts_of(r.op);
  // Operands of the backward scan: consts; dh, dc; then the stacked values of each step
  // (the carries it was given and its xs under remat, else its residuals), then dy.
  VarList consts, carries, xs;
  for (size_t i = 0; i < l.consts; ++i) consts.push_back(r.args[i]);
  for (size_t k : l.fk) carries.push_back(r.cots[k] ? *r.cots[k] : zeros(b, params[l.consts + k]));
  for (size_t i : l.fc) carries.push_back(zeros(b, params[i]));
  Tape backward;
  const size_t kept = l.carries + l.ys;  // the forward's outputs before what it keeps
  if (r.remat) {
    for (size_t k = 0; k < l.carries; ++k) xs.push_back(r.outs[kept + k]);
    for (size_t j = 0; j < l.xs; ++j) xs.push_back(r.args[l.consts + l.carries + j]);
    backward = backward_body(body, l).tape;
  } else {
    Split split = split_at_residuals(body, l);
    size_t yielded = 0;
    for (int64_t x : split.from_xs) {
      xs.push_back(x >= 0 ? r.args[l.consts + l.carries + static_cast<size_t>(x)]
                          : r.outs[kept + yielded++]);
    }
    backward = std::move(split.backward);
  }
  for (size_t j : l.fy) {
    const Cotangent& dy = r.cots[l.carries + j];
    xs.push_back(dy ? *dy : zeros(b, b.type(r.outs[l.carries + j])));
  }
  AttrsOf<Prim::scan> back_attrs{.consts = static_cast<int64_t>(consts.size()),
                                 .carries = static_cast<int64_t>(carries.size()),
                                 .length = a.length,
                                 .reverse = !a.reverse};
  if (skips_steps(a)) {
    xs.push_back(r.outs.back());  // whether each step ran
    back_attrs.mask = static_cast<int64_t>(xs.size());
    backward = with_flag(backward, true);
  }
  VarList args = consts;
  for (Var v : carries) args.push_back(v);
  for (Var v : xs) args.push_back(v);
  std::vector<Tape> regions;
  regions.push_back(std::move(backward));
  std::vector<Var> back =
      b.record(Prim::scan, args, back_attrs.to_attrs(), std::move(regions)).outs.vector();
  std::vector<Cotangent> dx(r.args.size());
  size_t next = 0;
  for (size_t k : l.fk) dx[l.consts + k] = back[next++];
  for (size_t i : l.fc) dx[i] = back[next++];
  for (size_t j : l.fx) dx[l.consts + l.carries + j] = back[next++];
  return dx;
}

}  // namespace

VarList scan_keeping_carries(Builder& b, const Op& op, const VarList& args) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  Tape body = op.regions[0];
  for (int64_t k = 0; k < a.carries; ++k)
    body.outputs.push_back({body.ops[a.consts + k].outs[0], ""});
  std::vector<Tape> regions;
  regions.push_back(skips_steps(a) ? with_flag(body, false) : std::move(body));
  return b.record(Prim::scan, args, op.attrs, std::move(regions)).outs;
}

VarList scan_keeping_residuals(Builder& b, const Op& op, const VarList& args) {
  std::vector<Tape> regions;
  Tape body = split_at_residuals(op.regions[0], parts_of(op)).forward;
  regions.push_back(skips_steps(attrs_of<Prim::scan>(op.attrs)) ? with_flag(body, false)
                                                                : std::move(body));
  return b.record(Prim::scan, args, op.attrs, std::move(regions)).outs;
}

void register_control_rules(RuleTable& t) {
  t.set(Prim::scan, scan_vjp);
  register_branch_rules(t);
}

}  // namespace ytape::grad
