// A program's own derivatives (docs/rules.md): a call of a function that has a rule
// (ChainRulesCore's rrule, Zygote's @adjoint, ChainRulesCore's @scalar_rule) on traced
// values is one custom_rule op. Its body is the function's code traced once, and its
// pullback the rule's traced once, each on a trace of its own as a branch of an `if` is
// (Interpreter::speculate); `ytape grad` uses the pullback. A rule that cannot be a
// region (it prints, its code fails) is not used, with a note, and the call is traced as
// it would be without it.
#include <fmt/format.h>

#include <algorithm>
#include <cstring>
#include <set>

#include "grad/rules.h"
#include "tape/error.h"
#include "tape/op_attrs.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/scan_trace.h"

namespace ytape::tracer {

namespace {

bool traced(const Value& v) {
  return v.is_tensor() && v.tensor().traced;
}

// Whether `v` holds a traced value inside a tuple, vector or struct (a rule's arguments
// are arrays and numbers).
bool traced_inside(const Value& v, size_t depth = 0) {
  if (depth > kMaxValueNesting) return false;
  if (v.kind == VKind::tuple || v.kind == VKind::named_tuple) {
    return std::any_of(v.tup().items.begin(), v.tup().items.end(),
                       [&](const Value& x) { return traced(x) || traced_inside(x, depth + 1); });
  }
  if (v.kind == VKind::object) {
    const auto& fields = v.object().fields;
    return std::any_of(fields.begin(), fields.end(),
                       [&](const Value& x) { return traced(x) || traced_inside(x, depth + 1); });
  }
  return false;
}

Value zeros_like(const Type& type, bool number) {
  Tensor t = Tensor::uninitialized(type);
  std::memset(t.raw(), 0, static_cast<size_t>(t.bytes()));
  return Value::concrete(std::move(t), number);
}

// `t` (a tangent on `b`) as a cotangent of an operand of type `to`: converted to its dtype
// and summed over the dims it was broadcast along.
Var fit(Builder& b, Var t, const Type& to, const std::string& rule, size_t arg) {
  if (b.type(t).dtype != to.dtype) t = b.convert(t, {.dtype = to.dtype});
  const Type from = b.type(t);
  if (from.shape == to.shape) return t;
  std::vector<int64_t> dims;
  for (int d = 1; d <= from.rank(); ++d) {
    int64_t n = from.shape[d - 1], m = d <= to.rank() ? to.shape[d - 1] : 1;
    if (n == m) continue;
    if (m != 1) {
      user_error("{}: its pullback gives {} for argument {}, which is {}", rule, type_str(from),
                 arg + 1, type_str(to));
    }
    dims.push_back(d);
  }
  Var summed = dims.empty() ? t : b.sum(t, {.dims = std::move(dims)});
  return b.type(summed).shape == to.shape ? summed : b.reshape(summed, {.shape = to.shape});
}

}  // namespace

std::optional<Interpreter::FoundRule> Interpreter::find_rule(const Value& f, const Args& args,
                                                             Pos pos) {
  auto lookup = [&](const char* name, RuleKind kind, bool omega) -> std::optional<FoundRule> {
    const Value* rule = global(name);
    if (rule == nullptr || rule->kind != VKind::function || rule->fn().methods.empty())
      return std::nullopt;
    Args with;
    with.pos.push_back(f);
    if (omega) with.pos.emplace_back();
    with.pos.insert(with.pos.end(), args.pos.begin(), args.pos.end());
    with.kw = args.kw;
    const Method* m = select(rule->fn().methods, with, nullptr, pos, name);
    if (m == nullptr) return std::nullopt;
    // FILE:LINE of its definition (where() gives FILE:LINE:COL).
    std::string where = sources_.where(m->pos);
    where.erase(where.rfind(':'));
    return FoundRule{kind, m, std::move(where)};
  };
  if (auto r = lookup("rrule", RuleKind::rrule, false)) return r;
  if (auto r = lookup("#adjoint", RuleKind::adjoint, false)) return r;
  if (args.kw.empty()) return lookup("#scalar_rule", RuleKind::scalar, true);
  return std::nullopt;
}

const Method* Interpreter::find_frule(const Value& f, const Args& args, Pos pos) {
  const Value* frule = global("frule");
  if (frule == nullptr || frule->kind != VKind::function || frule->fn().methods.empty())
    return nullptr;
  Args with;
  // The tangents' tuple (f's, then one per argument), and f and its arguments.
  with.pos.push_back(Value::tuple(std::vector<Value>(args.pos.size() + 1)));
  with.pos.push_back(f);
  with.pos.insert(with.pos.end(), args.pos.begin(), args.pos.end());
  with.kw = args.kw;
  return select(frule->fn().methods, with, nullptr, pos, "frule");
}

std::optional<Value> Interpreter::apply_rule(const Value& f, Args& args, Pos pos) {
  if (f.kind != VKind::function ||
      std::find(rrules_running_.begin(), rrules_running_.end(), &f.fn()) != rrules_running_.end())
    return std::nullopt;
  for (const char* name : {"rrule", "#adjoint", "#scalar_rule"}) {
    const Value* r = global(name);
    if (r != nullptr && r->kind == VKind::function && &r->fn() == &f.fn()) return std::nullopt;
  }
  bool any = std::any_of(args.pos.begin(), args.pos.end(), traced);
  for (const auto& [name, v] : args.kw) any = any || traced(v);
  if (!any) return trace_level() > 0 ? rrule_value(f, args, pos) : std::nullopt;
  // A rule's body is never differentiated (its pullback is), so rules inside it need not
  // be recorded.
  if (rule_bodies_ > 0) return std::nullopt;
  std::optional<FoundRule> rule = find_rule(f, args, pos);
  if (!rule) return std::nullopt;
  const std::string& where = rule->where;
  // A broadcast's rule is named as the call: `xlogy.`.
  std::string name = f.fn().name;
  if (name == "broadcasted" && !args.pos.empty() && args.pos[0].kind == VKind::function)
    name = args.pos[0].fn().name + ".";
  std::string label =
      fmt::format("the rule for {}{} ({})", name, name.ends_with('.') ? "(...)" : "", where);
  auto not_used = [&](const std::string& why) -> std::optional<Value> {
    note_once(
        "rule " + where, pos,
        fmt::format("{} is not used: {}; {}'s derivative is that of its code", label, why, name));
    return std::nullopt;
  };
  for (size_t i = 0; i < args.pos.size(); ++i) {
    if (traced_inside(args.pos[i]))
      return not_used(
          fmt::format("argument {} holds traced arrays inside a tuple or struct "
                      "(a rule here takes arrays and numbers)",
                      i + 1));
  }
  for (const auto& [name, v] : args.kw) {
    if (traced(v) || traced_inside(v))
      return not_used(fmt::format("keyword argument {} is traced", name));
  }
  std::string why;
  std::optional<Value> v = record_rule(f, args, pos, *rule, name, label, why);
  if (!v) return not_used(why);
  return v;
}

// A call of f being recorded as a custom_rule op: what its two traces share.
struct Interpreter::RuleCall {
  const Value& f;
  Args& args;
  Pos pos;
  const FoundRule& rule;
  const std::string& label;
  std::vector<std::optional<Var>> arg_vars;  // the traced arguments, on the calling trace
  Value result;                              // f's value, on the body's trace
  std::vector<Value> leaves;                 // its arrays and numbers
  std::vector<std::optional<Var>> tangents;  // per argument, on the pullback's trace
  std::vector<std::pair<Var, std::string>> cotangents;  // the pullback's dy parameters
  const Method* frule = nullptr;                        // a forward rule, if f has one
  std::vector<std::optional<Var>> dx;  // per argument, its tangent on the frule's trace
  std::vector<std::pair<Var, std::string>> dx_params;  // those parameters, each once
};

namespace {

// While a rule's region is traced: f's own calls run its code, and (for its body, never
// differentiated) no rule records an op.
class InRule {
 public:
  InRule(std::vector<const FunctionObj*>& running, const FunctionObj* f, int* bodies)
      : running_(running), bodies_(bodies) {
    running_.push_back(f);
    if (bodies_ != nullptr) ++*bodies_;
  }
  ~InRule() {
    running_.pop_back();
    if (bodies_ != nullptr) --*bodies_;
  }
  InRule(const InRule&) = delete;
  InRule& operator=(const InRule&) = delete;

 private:
  std::vector<const FunctionObj*>& running_;
  int* bodies_;
};

}  // namespace

std::vector<Var> Interpreter::trace_rule_body(RuleCall& c) {
  for (const Value& a : c.args.pos) {
    if (traced(a)) tape_var(a);  // every region takes every traced argument
  }
  InRule in_rule(rrules_running_, &c.f.fn(), &rule_bodies_);
  Args copy = c.args;
  c.result = call_function(c.f.fn(), copy, c.pos, nullptr);
  std::string form;
  if (!flatten_carried(c.result, c.leaves, form))
    not_a_scan(
        fmt::format("{} returns {}, not arrays and numbers", c.f.fn().name, a_type_name(c.result)));
  std::vector<Var> yields;
  for (const Value& leaf : c.leaves) yields.push_back(tape_var(leaf));
  return yields;
}

void Interpreter::trace_rule_pullback(RuleCall& c) {
  for (const Value& a : c.args.pos) {
    if (traced(a)) tape_var(a);
  }
  InRule in_rule(rrules_running_, &c.f.fn(), nullptr);
  std::vector<Value> dys;
  for (size_t j = 0; j < c.leaves.size(); ++j) {
    Type t = value_type(c.leaves[j]);
    if (!is_float(t.dtype)) {
      dys.push_back(call(*global("NoTangent"), Args{}, c.pos));
      continue;
    }
    std::string name = fmt::format("dy.{}", j + 1);
    Value d = nested_input(name, zeros_like(t, c.leaves[j].is_number()));
    if (is_element(c.leaves[j])) d = with_element(std::move(d), true);
    c.cotangents.emplace_back(d.tensor().var, name);
    dys.push_back(std::move(d));
  }
  size_t k = 0;
  Value dy = with_leaves(c.result, dys, k);
  std::vector<Value> given = rule_tangents(c.f, c.args, c.pos, c.rule, c.label, dy);
  c.tangents.assign(c.args.pos.size(), std::nullopt);
  for (size_t i = 0; i < given.size() && i < c.args.pos.size(); ++i) {
    if (c.arg_vars[i] && (given[i].is_tensor() || given[i].is_number()))
      c.tangents[i] = tape_var(given[i]);
  }
}

std::vector<Var> Interpreter::trace_rule_pushforward(RuleCall& c) {
  for (const Value& a : c.args.pos) {
    if (traced(a)) tape_var(a);
  }
  InRule in_rule(rrules_running_, &c.f.fn(), nullptr);
  const Value none = call(*global("NoTangent"), Args{}, c.pos);
  std::vector<Value> dxs{none};
  c.dx.assign(c.args.pos.size(), std::nullopt);
  for (size_t i = 0; i < c.args.pos.size(); ++i) {
    const Value& a = c.args.pos[i];
    if (!c.arg_vars[i] || !is_float(value_type(a).dtype)) {
      dxs.push_back(none);
      continue;
    }
    // An argument given twice has one tangent.
    size_t same = 0;
    while (same < i && !(c.dx[same] && c.arg_vars[same] == c.arg_vars[i])) ++same;
    Value d;
    if (same < i) {
      d = dxs[same + 1];
    } else {
      std::string name = fmt::format("dx.{}", i + 1);
      d = nested_input(name, zeros_like(value_type(a), a.is_number()));
      if (is_element(a)) d = with_element(std::move(d), true);
      c.dx_params.emplace_back(d.tensor().var, name);
    }
    c.dx[i] = d.tensor().var;
    dxs.push_back(std::move(d));
  }
  Args with;
  with.pos.push_back(Value::tuple(std::move(dxs)));
  with.pos.push_back(c.f);
  with.pos.insert(with.pos.end(), c.args.pos.begin(), c.args.pos.end());
  with.kw = c.args.kw;
  Value r = invoke(*c.frule, with, c.pos, nullptr, "frule");
  if (r.kind != VKind::tuple || r.tup().items.size() != 2)
    user_error("{}: its frule returned {}, not (value, tangent)", c.label, a_type_name(r));
  // A tangent per float result (zeros where the frule gives none), of the result's type.
  std::vector<Value> given;
  std::string form;
  bool each = flatten_carried(r.tup().items[1], given, form) && given.size() == c.leaves.size();
  std::vector<Var> yields;
  for (size_t j = 0; j < c.leaves.size(); ++j) {
    Type type = value_type(c.leaves[j]);
    if (!is_float(type.dtype)) continue;
    if (!each) {
      yields.push_back(grad::zeros(*builder_, type));
      continue;
    }
    Var t = tape_var(given[j]);
    if (builder_->type(t).dtype != type.dtype) t = builder_->convert(t, {.dtype = type.dtype});
    if (builder_->type(t).shape != type.shape) t = builder_->broadcast_to(t, {.shape = type.shape});
    yields.push_back(t);
  }
  return yields;
}

Tape Interpreter::pushforward_region(RuleCall& c, Speculation& fwd, const VarList& consts,
                                     std::vector<std::pair<Var, std::string>> params) {
  // It takes the operands, then a tangent per float operand: an argument's, or one that no
  // argument gives (a value the rule read from outside its arguments).
  Builder& pb = *fwd.nested.builder;
  std::set<std::string> used;
  for (const auto& [var, param] : params) used.insert(param);
  for (Var operand : consts) {
    const Type& type = builder_->type(operand);
    if (!is_float(type.dtype)) continue;
    size_t i = 0;
    while (i < c.args.pos.size() && !(c.arg_vars[i] == operand && c.dx[i])) ++i;
    if (i == c.args.pos.size()) {
      std::string name = unique_name("dx", used);
      params.emplace_back(pb.capture(name, type), name);
      continue;
    }
    auto p = std::find_if(c.dx_params.begin(), c.dx_params.end(),
                          [&](const auto& d) { return d.first == *c.dx[i]; });
    params.emplace_back(p->first, unique_name(p->second, used));
  }
  Tape region = region_tape(pb.tape(), params, fwd.yields);
  region.name = "pushforward";
  return region;
}

Tape Interpreter::pullback_region(RuleCall& c, Speculation& back, const VarList& consts,
                                  std::vector<std::pair<Var, std::string>> params) {
  // It yields a cotangent per float operand: the sum of the tangents of the arguments it
  // is (zeros for one that is none).
  Builder& pb = *back.nested.builder;
  std::vector<Var> yields;
  for (Var operand : consts) {
    const Type& type = builder_->type(operand);
    if (!is_float(type.dtype)) continue;
    std::optional<Var> sum;
    for (size_t i = 0; i < c.args.pos.size(); ++i) {
      if (!c.arg_vars[i] || *c.arg_vars[i] != operand || !c.tangents[i]) continue;
      Var t = fit(pb, *c.tangents[i], type, c.label, i);
      sum = sum ? pb.add(*sum, t) : t;
    }
    yields.push_back(sum ? *sum : grad::zeros(pb, type));
  }
  // It takes the operands, the results and the cotangents, named uniquely beside the
  // operands (a rule inside a pullback has operands named dy.1).
  std::set<std::string> used;
  for (const auto& [var, param] : params) used.insert(param);
  for (size_t j = 0; j < c.leaves.size(); ++j) {
    std::string param = unique_name(fmt::format("y.{}", j + 1), used);
    params.emplace_back(pb.capture(param, value_type(c.leaves[j])), param);
  }
  for (auto& [var, param] : c.cotangents) params.emplace_back(var, unique_name(param, used));
  Tape region = region_tape(pb.tape(), params, yields);
  region.name = "pullback";
  return region;
}

std::optional<Value> Interpreter::record_rule(const Value& f, Args& args, Pos pos,
                                              const FoundRule& rule, const std::string& name,
                                              const std::string& label, std::string& why) {
  RuleCall c{f, args, pos, rule, label, {}, {}, {}, {}, {}, nullptr, {}, {}};
  for (const Value& a : args.pos)
    c.arg_vars.push_back(traced(a) ? std::optional(tape_var(a)) : std::nullopt);
  c.frule = find_frule(f, args, pos);
  std::optional<Speculation> body = speculate(
      std::make_shared<Env>(), [&] { return trace_rule_body(c); }, why);
  if (!body) return std::nullopt;
  std::optional<Speculation> back = speculate(
      std::make_shared<Env>(),
      [&] {
        trace_rule_pullback(c);
        return std::vector<Var>{};
      },
      why);
  if (!back) return std::nullopt;
  std::vector<Speculation> regions;
  regions.push_back(std::move(*body));
  regions.push_back(std::move(*back));
  if (c.frule != nullptr) {
    std::optional<Speculation> fwd = speculate(
        std::make_shared<Env>(), [&] { return trace_rule_pushforward(c); }, why);
    if (!fwd) return std::nullopt;
    regions.push_back(std::move(*fwd));
  }
  std::vector<std::vector<std::pair<Var, std::string>>> params;
  VarList consts = region_consts(regions, params);
  std::vector<Tape> tapes;
  tapes.push_back(region_tape(regions[0].nested.builder->tape(), params[0], regions[0].yields));
  tapes[0].name = "body";
  tapes.push_back(pullback_region(c, regions[1], consts, std::move(params[1])));
  if (c.frule != nullptr)
    tapes.push_back(pushforward_region(c, regions[2], consts, std::move(params[2])));
  here_ = pos;
  builder_->set_loc(loc_of(op_pos()));
  check_op_limit();
  AttrsOf<Prim::custom_rule> attrs{.name = name, .rule = rule.where};
  const Op& op = builder_->record(Prim::custom_rule, consts, attrs.to_attrs(), std::move(tapes));
  std::vector<Value> outs;
  for (size_t j = 0; j < c.leaves.size(); ++j) {
    Var o = op.outs[j];
    outs.push_back(with_element(Value::traced(o, builder_->type(o), c.leaves[j].is_number()),
                                is_element(c.leaves[j])));
  }
  size_t k = 0;
  return with_leaves(c.result, outs, k);
}

std::vector<Value> Interpreter::rule_tangents(const Value& f, Args& args, Pos pos,
                                              const FoundRule& rule, const std::string& label,
                                              const Value& dy) {
  const size_t n = args.pos.size();
  Args with;
  with.pos.push_back(f);
  if (rule.kind == RuleKind::scalar) {
    // Ω, f's value, as @scalar_rule's partials may read it.
    Args copy = args;
    with.pos.push_back(call_function(f.fn(), copy, pos, nullptr));
  }
  with.pos.insert(with.pos.end(), args.pos.begin(), args.pos.end());
  with.kw = args.kw;
  const char* name = rule.kind == RuleKind::rrule     ? "rrule"
                     : rule.kind == RuleKind::adjoint ? "#adjoint"
                                                      : "#scalar_rule";
  Value r = invoke(*rule.method, with, pos, nullptr, name);
  if (rule.kind == RuleKind::scalar) {
    // The partials: one per argument (a tuple of them, or one value for one argument).
    std::vector<Value> partials = r.kind == VKind::tuple ? r.tup().items : std::vector<Value>{r};
    if (partials.size() != n)
      user_error("{} gives {} partials for {} arguments", label, partials.size(), n);
    std::vector<Value> out;
    for (const Value& p : partials) {
      out.push_back(p.is_tensor() || p.is_number() ? broadcast(*global("*"), Args{{dy, p}, {}}, pos)
                                                   : Value());
    }
    return out;
  }
  if (r.kind != VKind::tuple || r.tup().items.size() != 2) {
    user_error("{} returned {}, not (value, pullback)", label, a_type_name(r));
  }
  Value t = call(r.tup().items[1], Args{{dy}, {}}, pos);
  if (t.kind == VKind::nothing) return std::vector<Value>(n);
  // rrule's pullback gives f's tangent first; Zygote's one per argument.
  const size_t skip = rule.kind == RuleKind::rrule ? 1 : 0;
  if (t.kind != VKind::tuple || t.tup().items.size() != n + skip) {
    user_error(
        "{}: its pullback returned {}; it must return a tuple of {} tangents ({}one per "
        "argument)",
        label, a_type_name(t), n + skip, skip ? "the function's, then " : "");
  }
  return std::vector<Value>(t.tup().items.begin() + static_cast<std::ptrdiff_t>(skip),
                            t.tup().items.end());
}

// Inside a gradient, a call with an applicable ChainRulesCore rrule method and no traced
// arguments takes the rrule's value (the first item it returns), as Zygote's calls do:
// Flux's istraining() is true there.
std::optional<Value> Interpreter::rrule_value(const Value& f, Args& args, Pos pos) {
  const Value* rrule = global("rrule");
  if (rrule == nullptr || rrule->kind != VKind::function) return std::nullopt;
  Args with;
  with.pos.reserve(args.pos.size() + 1);
  with.pos.push_back(f);
  with.pos.insert(with.pos.end(), args.pos.begin(), args.pos.end());
  with.kw = args.kw;
  const Method* m = select(rrule->fn().methods, with, nullptr, pos, "rrule");
  if (m == nullptr) return std::nullopt;
  rrules_running_.push_back(&f.fn());
  Value r;
  try {
    r = invoke(*m, with, pos, nullptr, "rrule");
  } catch (...) {
    rrules_running_.pop_back();
    throw;
  }
  rrules_running_.pop_back();
  if (r.kind != VKind::tuple || r.tup().items.size() != 2) {
    fail(pos, fmt::format("rrule for {} returned {}, not (value, pullback)", f.fn().name,
                          a_type_name(r)));
  }
  return r.tup().items[0];
}

}  // namespace ytape::tracer
