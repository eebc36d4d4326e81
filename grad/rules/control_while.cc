// VJP rules of cond, while_loop (docs/regions.md, "Gradients") and custom_rule
// (docs/rules.md).
//
// cond: a cond on the same selector whose branches are the VJPs of the forward's branches,
// each computing its branch again from the operands: only the operands are kept.
//
// while_loop: reverse mode must know every trip's carries, so the gradient runs the loop
// in its bounded form: a scan of max_trips steps carrying the loop's carries and whether
// it is still running (its `running` carry), each step the body and the condition, the
// steps after the loop stops not run. The scan's own rule then stores one step per trip
// taken (in a stack of max_trips) and runs the VJP backward over those trips alone; a loop
// whose condition still holds after max_trips trips fails at a guard, never cut short.
#include <fmt/format.h>

#include "grad/backprop.h"
#include "grad/rules.h"
#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape::grad {

namespace {

// A tape taking `types` (named p1, p2, ...) that `make` fills and whose yields it returns.
template <typename Make>
Tape region(const std::vector<Type>& types, Make make) {
  Builder b;
  std::vector<Var> params;
  for (size_t i = 0; i < types.size(); ++i)
    params.push_back(b.input(fmt::format("p{}", i + 1), types[i]));
  for (Var v : make(b, std::span<const Var>(params))) b.output(v, "");
  return b.finish();
}

// The VJP of `branch` as a region: parameters the branch's, then a cotangent per float
// result; yields a cotangent per float parameter (zeros where none flows).
Tape branch_vjp(const Tape& branch) {
  std::vector<Type> params = branch.input_types(), types = params;
  std::vector<size_t> fy;
  for (size_t j = 0; j < branch.outputs.size(); ++j) {
    const Type& y = branch.type(branch.outputs[j].var);
    if (is_float(y.dtype)) {
      fy.push_back(j);
      types.push_back(y);
    }
  }
  return region(types, [&](Builder& b, std::span<const Var> p) {
    Backprop bp(b, branch);
    for (size_t i = 0; i < params.size(); ++i) bp.bind_input(branch.ops[i].outs[0], p[i], true);
    bp.forward();
    for (size_t n = 0; n < fy.size(); ++n) bp.seed(branch.outputs[fy[n]].var, p[params.size() + n]);
    bp.backward();
    std::vector<Var> dx;
    for (size_t i = 0; i < params.size(); ++i) {
      if (!is_float(params[i].dtype)) continue;
      Cotangent c = bp.cotangent(branch.ops[i].outs[0]);
      dx.push_back(c ? *c : zeros(b, params[i]));
    }
    return dx;
  });
}

std::vector<Cotangent> cond_vjp(Builder& b, const RuleArgs& r) {
  VarList operands;
  for (size_t i = 1; i < r.args.size(); ++i) operands.push_back(r.args[i]);
  for (size_t j = 0; j < r.outs.size(); ++j) {
    const Type y = b.type(r.outs[j]);  // a copy: zeros() grows the builder
    if (is_float(y.dtype)) operands.push_back(r.cots[j] ? *r.cots[j] : zeros(b, y));
  }
  std::vector<Tape> branches;
  for (const Tape& branch : r.op.regions) branches.push_back(branch_vjp(branch));
  std::vector<Var> back = b.cond(r.args[0], operands, std::move(branches));
  std::vector<Cotangent> dx(r.args.size());
  size_t next = 0;
  for (size_t i = 1; i < r.args.size(); ++i) {
    if (is_float(b.type(r.args[i]).dtype)) dx[i] = back[next++];
  }
  return dx;
}

// The while_loop `op` as a scan of max_trips steps (see the top of this file): operands
// (consts, carries, running), body (consts, carries, running) -> (carries', running'), a
// step run only while `running` holds.
Op bounded_scan(const Op& op) {
  const auto a = attrs_of<Prim::while_loop>(op.attrs);
  const Tape &test = op.regions[0], &body = op.regions[1];
  std::vector<Type> params = body.input_types();
  const size_t consts = static_cast<size_t>(a.consts), carries = params.size() - consts;
  params.push_back(Type{DType::boolean, {}});
  Tape step = region(params, [&](Builder& b, std::span<const Var> p) {
    std::span<const Var> state = p.first(p.size() - 1);
    std::vector<Var> next = inline_region(b, body, state);
    std::vector<Var> args(state.begin(), state.begin() + static_cast<std::ptrdiff_t>(consts));
    args.insert(args.end(), next.begin(), next.end());
    next.push_back(inline_region(b, test, args)[0]);
    return next;
  });
  step.name = "body";
  Op scan;
  scan.prim = Prim::scan;
  const auto running = static_cast<int64_t>(carries + 1);
  scan.attrs =
      AttrsOf<Prim::scan>{
          .consts = a.consts, .carries = running, .length = a.max_trips, .running = running}
          .to_attrs();
  scan.regions.push_back(std::move(step));
  scan.loc = op.loc;
  return scan;
}

std::vector<Cotangent> while_vjp(Builder& b, const RuleArgs& r) {
  Op scan = bounded_scan(r.op);
  // The scan's operands end with whether the loop runs, which has no cotangent and which
  // the scan's rule does not read: any var stands for it.
  std::vector<Var> args(r.args.begin(), r.args.end());
  args.push_back(r.outs.back());
  std::vector<bool> need = r.need;
  need.push_back(false);
  std::vector<Cotangent> dx =
      rules().rule(Prim::scan)(b, RuleArgs{scan, args, r.outs, r.cots, need, r.remat});
  dx.resize(r.args.size());
  return dx;
}

// custom_rule: its pullback, written inline, on the operands, the results and the
// cotangents of the float results (zeros where none flows). The forward keeps the op, so
// a second gradient differentiates the pullback's ops as any others.
std::vector<Cotangent> custom_rule_vjp(Builder& b, const RuleArgs& r) {
  std::vector<Var> given(r.args.begin(), r.args.end());
  given.insert(given.end(), r.outs.begin(), r.outs.end());
  for (size_t j = 0; j < r.outs.size(); ++j) {
    const Type y = b.type(r.outs[j]);  // a copy: zeros() grows the builder
    if (is_float(y.dtype)) given.push_back(r.cots[j] ? *r.cots[j] : zeros(b, y));
  }
  std::vector<Var> back = inline_region(b, r.op.regions.at(1), given);
  std::vector<Cotangent> dx(r.args.size());
  size_t next = 0;
  for (size_t i = 0; i < r.args.size(); ++i) {
    if (is_float(b.type(r.args[i]).dtype)) dx[i] = back[next++];
  }
  return dx;
}

}  // namespace

VarList while_keeping_steps(Builder& b, const Op& op, const VarList& args, bool remat) {
  const auto a = attrs_of<Prim::while_loop>(op.attrs);
  if (a.max_trips == 0) {
    user_error(
        "while_loop has max_trips=0: it runs forward only, and reverse mode, which stores "
        "one step per trip, needs a bound (`@max_trips N` before the loop in the program, or "
        "ytape trace --max-trips N)");
  }
  Op scan = bounded_scan(op);
  VarList scan_args = args;
  scan_args.push_back(inline_region(b, op.regions[0], args)[0]);
  VarList outs =
      remat ? scan_keeping_carries(b, scan, scan_args) : scan_keeping_residuals(b, scan, scan_args);
  size_t carries = args.size() - static_cast<size_t>(a.consts);
  b.guard(b.eq(outs[carries], b.constant(DType::boolean, 0.0)),
          {.message = fmt::format("the loop's condition still holds after max_trips={} trips; "
                                  "it is never cut short: raise its bound (`@max_trips N` "
                                  "before the loop, or ytape trace --max-trips N)",
                                  a.max_trips)});
  return outs;
}

void register_branch_rules(RuleTable& t) {
  t.set(Prim::cond, cond_vjp);
  t.set(Prim::while_loop, while_vjp);
  t.set(Prim::custom_rule, custom_rule_vjp);
}

}  // namespace ytape::grad
