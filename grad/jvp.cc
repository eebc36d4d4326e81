// Forward mode by transposing each op's VJP rule (grad/jvp.h). For an op y = f(x), the
// rule gives x̄ = Jᵀ ū as ops on a symbolic ū; that map is linear in ū, and its own
// reverse mode, seeded with ẋ at x̄, gives ẏ = J ẋ as the cotangent of ū. The ops that
// compute x̄ from ū are dead afterwards (nothing reads them): DCE removes them.
#include "grad/jvp.h"

#include <fmt/format.h>

#include <optional>
#include <unordered_set>

#include "grad/backprop.h"
#include "grad/grad.h"
#include "grad/rules.h"
#include "opt/dce.h"
#include "tape/error.h"

namespace ytape::grad {

Tangents::Tangents(Builder& b, const Tape& src)
    : t_(src), b_(b), map_(src), tan_(src.types.size()) {}

void Tangents::bind_input(Var v, Var now, std::optional<Var> tangent) {
  map_.set(v, now);
  if (tangent && is_float(t_.type(v).dtype)) tan_[v.id] = tangent;
}

void Tangents::forward() {
  for (const Op& op : t_.ops) {
    b_.set_loc(op.loc);
    if (op.kind == OpKind::input) {  // bound by the caller (a nested trace's captures too)
      if (!map_.has(op.outs[0])) internal_error("input '{}' was not bound", op.name);
    } else if (op.kind == OpKind::constant) {
      map_.set(op.outs[0], b_.constant(t_.type(op.outs[0]), op.value));
    } else if (active(op)) {
      bool region = op.prim == Prim::scan || op.prim == Prim::cond || op.prim == Prim::while_loop;
      if (region) {
        differentiate_region(op);
      } else if (op.prim == Prim::custom_rule && op.regions.size() == 3) {
        differentiate_pushforward(op);
      } else {
        differentiate(op);
      }
    } else {
      const Op& copy = b_.record(op.prim, map_.map(op.args), op.attrs, op.regions);
      for (size_t k = 0; k < op.outs.size(); ++k) map_.set(op.outs[k], copy.outs[k]);
    }
  }
}

bool Tangents::active(const Op& op) const {
  if (op.kind != OpKind::call) return false;
  bool active = false;
  for (Var a : op.args) active = active || tan_[a.id];
  if (active) refuse_comm(t_, op);
  return active && prim_info(op.prim).differentiable();
}

// The op as reverse mode emits it forward (its variant, where it has one), so that its
// rule finds what it reads; returns those outputs.
VarList Tangents::emit(const Op& op) {
  VarList args = map_.map(op.args);
  std::optional<Prim> variant = variant_of(op.prim);
  return b_.record(variant ? *variant : op.prim, args, op.attrs, op.regions).outs;
}

void Tangents::differentiate(const Op& op) {
  VarList y = emit(op);
  for (size_t k = 0; k < op.outs.size(); ++k) map_.set(op.outs[k], y[k]);
  // The rule on parameters standing for the arguments, the outputs and ū.
  Builder lb = Builder::like(t_);
  lb.set_loc(op.loc);
  std::vector<Var> lx, ly;
  std::vector<Cotangent> u(y.size());
  for (size_t i = 0; i < op.args.size(); ++i)
    lx.push_back(lb.input(fmt::format("x{}", i + 1), t_.type(op.args[i])));
  for (size_t k = 0; k < y.size(); ++k)
    ly.push_back(lb.input(fmt::format("y{}", k + 1), b_.type(y[k])));
  for (size_t k = 0; k < op.outs.size(); ++k) {
    if (is_float(b_.type(y[k]).dtype)) u[k] = lb.input(fmt::format("u{}", k + 1), b_.type(y[k]));
  }
  std::vector<bool> need;
  for (Var a : op.args) need.push_back(tan_[a.id].has_value());
  std::vector<Cotangent> dx =
      rules().rule(variant_of(op.prim).value_or(op.prim))(lb, RuleArgs{op, lx, ly, u, need, false});
  std::vector<size_t> seeded;  // the arguments whose x̄ is an output of the rule's tape
  for (size_t i = 0; i < op.args.size() && i < dx.size(); ++i) {
    if (!need[i] || !dx[i]) continue;
    lb.output(unbroadcast(lb, *dx[i], t_.type(op.args[i]), op), "");
    seeded.push_back(i);
  }
  Tape rule = lb.finish();
  // Its reverse mode in ū, the arguments' tangents as seeds.
  Backprop bp(b_, rule);
  size_t p = 0;
  for (size_t i = 0; i < op.args.size(); ++i)
    bp.bind_input(rule.ops[p++].outs[0], map_[op.args[i]], false);
  for (Var v : y) bp.bind_input(rule.ops[p++].outs[0], v, false);
  std::vector<Var> params_u(y.size());
  for (size_t k = 0; k < op.outs.size(); ++k) {
    if (!u[k]) continue;
    params_u[k] = rule.ops[p++].outs[0];
    bp.bind_input(params_u[k], zeros(b_, b_.type(y[k])), true);
  }
  bp.forward();
  for (size_t j = 0; j < seeded.size(); ++j)
    bp.seed(rule.outputs[j].var, *tan_[op.args[seeded[j]].id]);
  bp.backward();
  for (size_t k = 0; k < op.outs.size(); ++k) {
    if (!u[k]) continue;
    if (Cotangent c = bp.cotangent(params_u[k])) tan_[op.outs[k].id] = *c;
  }
}

void Tangents::differentiate_pushforward(const Op& op) {
  const VarList args = map_.map(op.args);
  const VarList outs = b_.record(op.prim, args, op.attrs, op.regions).outs;
  std::vector<Var> given(args.begin(), args.end());
  for (size_t i = 0; i < op.args.size(); ++i) {
    const Type type = t_.type(op.args[i]);
    if (is_float(type.dtype))
      given.push_back(tan_[op.args[i].id] ? *tan_[op.args[i].id] : zeros(b_, type));
  }
  std::vector<Var> dy = inline_region(b_, op.regions[2], given);
  size_t next = 0;
  for (size_t k = 0; k < op.outs.size(); ++k) {
    map_.set(op.outs[k], outs[k]);
    if (is_float(t_.type(op.outs[k]).dtype)) tan_[op.outs[k].id] = dy[next++];
  }
}

Tape jvp(const Tape& t, const JvpOptions& options) {
  if (t.outputs.empty()) user_error("tape '{}' has no output to differentiate", t.name);
  std::vector<bool> chosen = chosen_inputs(t, options.wrt);
  const size_t n = t.num_inputs();
  std::unordered_set<std::string> taken;
  for (size_t i = 0; i < n; ++i) taken.insert(t.ops[i].name);
  Builder b = Builder::like(t);
  Tangents f(b, t);
  std::vector<Var> inputs;
  for (size_t i = 0; i < n; ++i) {
    b.set_loc(t.ops[i].loc);
    inputs.push_back(b.input(t.ops[i].name, t.type(t.ops[i].outs[0])));
  }
  for (size_t i = 0; i < n; ++i) {
    const Type& type = t.type(t.ops[i].outs[0]);
    std::optional<Var> tangent;
    if (chosen[i] && is_float(type.dtype))
      tangent = b.input(fresh_name("tangent.", t.ops[i].name, taken), type);
    f.bind_input(t.ops[i].outs[0], inputs[i], tangent);
  }
  f.forward();
  for (const Output& o : t.outputs) b.output(f[o.var], o.name);
  taken.clear();
  for (const Output& o : t.outputs) taken.insert(o.name);
  for (const Output& o : t.outputs) {
    const Type& type = t.type(o.var);
    if (!is_float(type.dtype)) continue;
    std::optional<Var> d = f.tangent(o.var);
    b.output(d ? *d : zeros(b, type), fresh_name("tangent.", o.name, taken));
  }
  Tape out = b.finish();
  PassResult pruned = eliminate_dead_code(out);
  return pruned.tape ? std::move(*pruned.tape) : std::move(out);
}

}  // namespace ytape::grad
