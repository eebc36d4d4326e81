// Branches and while loops on traced values, traced as region ops (docs/regions.md, "Loops
// in programs"). An `if` on a traced Bool traces both branches, each once, on traces nested
// in the current one, and records a cond op when they give values of the same types; a
// `while` whose condition is traced traces its condition and its body once each and
// records a while_loop op. Each region is traced speculatively, as a scan's body is:
// whatever a region cannot hold stops the attempt, and the `if` is guarded or the loop
// unrolled as before.
#include <fmt/format.h>

#include <algorithm>
#include <array>

#include "tape/error.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/scan_trace.h"

namespace ytape::tracer {

namespace {

// A value a branch gives (the if's value, or a variable's after it), flattened into its
// arrays and numbers.
struct Given {
  bool ok = false;  // a value a region can yield: arrays, numbers, tuples of them, nothing
  std::string form;
  Value like;
  std::vector<Value> leaves;
  size_t first = 0;  // its first var among the region's yields
};

Given given(const Value& v) {
  Given g;
  g.like = v;
  if (v.kind == VKind::nothing) {
    g.ok = true;
    g.form = "nothing";
    return g;
  }
  g.ok = flatten_carried(v, g.leaves, g.form);
  return g;
}

// What a cond yields, as indices into each side's gives (the if's value, then each of
// `names`): each value both sides give with the same types, the if's where it is used. A
// variable only one side makes is not defined after the if; nullopt where the sides
// disagree on a value that is (the if's, used, or a variable from before it, `outer`).
std::optional<std::vector<size_t>> kept_values(
    const std::array<std::vector<Given>, 2>& gives, const std::vector<std::string>& names,
    const std::vector<std::pair<std::string, Value>>& outer, bool value_used) {
  std::vector<size_t> kept;
  for (size_t j = 0; j < gives[0].size(); ++j) {
    const Given &a = gives[0][j], &b = gives[1][j];
    bool same = a.ok && b.ok && a.form == b.form;
    bool before = j > 0 && std::any_of(outer.begin(), outer.end(),
                                       [&](const auto& c) { return c.first == names[j - 1]; });
    if (j == 0 && !value_used) continue;
    if (same) {
      kept.push_back(j);
    } else if (j == 0 || before) {
      return std::nullopt;
    }
  }
  return kept;
}

bool traced_flag(const Value& v) {
  return v.is_tensor() && v.tensor().traced && !v.tensor().element &&
         v.tensor().type == Type{DType::boolean, {}};
}

}  // namespace

std::optional<Interpreter::Speculation> Interpreter::speculate(
    const EnvPtr& scope, const std::function<std::vector<Var>()>& trace, std::string& why,
    bool* settles) {
  size_t depth = levels_.size();
  auto stream = this->stream();
  // The attempt around this one (a scan's, a branch's) is current again however this ends,
  // an internal error included.
  struct Outer {
    Interpreter& in;
    ScanTrace* scan;
    const Env* scope;
    ~Outer() {
      in.scan_ = scan;
      in.scan_scope_ = scope;
    }
  } outer{*this, scan_, scan_scope_};
  std::vector<ScanCarry> none;
  ScanTrace st;
  st.carries = &none;
  st.index = Var{~0u};  // no loop variable: no slices
  try {
    begin_nested_trace();
    st.level = trace_level();
    scan_ = &st;
    scan_scope_ = scope.get();
    st.first_serial = next_serial() + 1;
    std::vector<Var> yields = trace();
    if (signal_ != Signal::none) not_a_scan("it leaves early (break, continue, return)");
    if (this->stream() != stream) not_a_scan("it draws random numbers while tracing");
    for (const Op& op : builder_->tape().ops) {
      if (op.kind == OpKind::call && prim_info(op.prim).effectful())
        not_a_scan(
            fmt::format("it records {}, which a region cannot hold yet", prim_name(op.prim)));
    }
    return Speculation{end_nested_trace(), std::move(yields)};
  } catch (const NotAScan& a) {
    why = a.reason;
    if (settles != nullptr) *settles = a.settles;
  } catch (const UserError& u) {
    why = u.what();
  }
  abandon_scan(depth, stream);  // `outer` then makes the attempt around this one current
  return std::nullopt;
}

VarList Interpreter::region_consts(std::span<Speculation> regions,
                                   std::vector<std::vector<std::pair<Var, std::string>>>& params) {
  VarList consts;
  for (const Speculation& r : regions) {
    for (const auto& [inner, outer] : r.nested.captures) {
      if (std::find(consts.begin(), consts.end(), outer) == consts.end()) consts.push_back(outer);
    }
  }
  params.assign(regions.size(), {});
  std::set<std::string> used;
  std::vector<std::string> names;
  for (size_t i = 0; i < consts.size(); ++i) {
    std::string name = input_name(builder_->tape(), consts[i]);
    names.push_back(unique_name(name.empty() ? fmt::format("c.{}", i + 1) : name, used));
  }
  for (size_t k = 0; k < regions.size(); ++k) {
    NestedTape& n = regions[k].nested;
    for (size_t i = 0; i < consts.size(); ++i) {
      auto it = std::find_if(n.captures.begin(), n.captures.end(),
                             [&](const auto& c) { return c.second == consts[i]; });
      // A region that reads none of it still takes it, as every region of the op does.
      Var inner = it != n.captures.end() ? it->first
                                         : n.builder->capture(names[i], builder_->type(consts[i]));
      params[k].emplace_back(inner, names[i]);
    }
  }
  return consts;
}

// ---- if -----------------------------------------------------------------------------------

std::optional<Value> Interpreter::trace_cond(const Expr& e, const Value& flag, const EnvPtr& env,
                                             bool value_used) {
  if (!tracing() || limits_.loops == LoopMode::unroll || !traced_flag(flag)) return std::nullopt;
  std::vector<std::string> names;
  for (size_t k = 1; k < e.args.size(); ++k) assigned_names(*e.args[k], names);
  std::vector<std::string> unique;
  for (const std::string& name : names) {
    if (std::find(unique.begin(), unique.end(), name) == unique.end()) unique.push_back(name);
  }
  names = std::move(unique);
  std::vector<std::pair<std::string, Value>> outer = visible_locals(names, env, globals_.get());
  // Per branch: the if's value, then each name's value after it.
  std::array<std::vector<Given>, 2> gives;
  std::vector<Speculation> branches;
  for (size_t k = 0; k < 2; ++k) {
    auto scope = std::make_shared<Env>();
    scope->parent = env;
    for (const auto& [name, v] : outer) scope->vars[name] = v;
    std::string why;
    std::optional<Speculation> s = speculate(
        scope,
        [&] {
          Value v = k + 1 < e.args.size() ? eval(*e.args[k + 1], scope) : Value();
          gives[k].push_back(given(v));
          for (const std::string& name : names) {
            auto it = scope->vars.find(name);
            gives[k].push_back(it == scope->vars.end() ? Given{} : given(it->second));
          }
          std::vector<Var> yields;
          for (Given& g : gives[k]) {
            g.first = yields.size();
            for (const Value& leaf : g.leaves) yields.push_back(tape_var(leaf));
          }
          return yields;
        },
        why);
    if (!s) return std::nullopt;
    branches.push_back(std::move(*s));
  }
  std::optional<std::vector<size_t>> kept = kept_values(gives, names, outer, value_used);
  if (!kept) return std::nullopt;
  std::vector<std::vector<std::pair<Var, std::string>>> params;
  VarList consts = region_consts(branches, params);
  std::vector<Tape> tapes;
  for (size_t k = 0; k < 2; ++k) {
    std::vector<Var> yields;
    for (size_t j : *kept) {
      const Given& g = gives[k][j];
      for (size_t i = 0; i < g.leaves.size(); ++i)
        yields.push_back(branches[k].yields[g.first + i]);
    }
    tapes.push_back(region_tape(branches[k].nested.builder->tape(), params[k], yields));
  }
  here_ = e.pos;
  builder_->set_loc(loc_of(op_pos()));
  check_op_limit();
  std::vector<Var> outs = builder_->cond(var_of(flag), consts, std::move(tapes));
  Value result;
  size_t at = 0;
  for (size_t j : *kept) {
    const Given& g = gives[0][j];
    std::vector<Value> leaves;
    for (const Value& leaf : g.leaves) {
      Var v = outs[at++];
      leaves.push_back(Value::traced(v, builder_->type(v), leaf.is_number()));
    }
    size_t k = 0;
    Value v = g.form == "nothing" ? Value() : with_leaves(g.like, leaves, k);
    if (j == 0) {
      result = std::move(v);
    } else {
      set_var(names[j - 1], std::move(v), env, e.pos);
    }
  }
  return result;
}

// ---- while --------------------------------------------------------------------------------

bool Interpreter::trace_while(const Expr& e, const EnvPtr& env, bool& again) {
  again = false;
  if (!tracing() || limits_.loops == LoopMode::unroll) return false;
  std::vector<std::string> names;
  assigned_names(*e.args[1], names);
  std::vector<ScanCarry> carries;
  for (auto& [name, v] : visible_locals(names, env, globals_.get())) {
    ScanCarry c{name, nullptr, 0, v};
    if (!flatten_carried(c.init, c.leaves, c.form)) return false;
    carries.push_back(std::move(c));
  }
  std::vector<Speculation> regions;
  std::array<std::vector<std::pair<Var, std::string>>, 2> own;
  for (size_t k = 0; k < 2; ++k) {
    auto scope = std::make_shared<Env>();
    scope->parent = env;
    std::string why;
    std::optional<Speculation> s = speculate(
        scope,
        [&] {
          std::set<std::string> used;
          FieldsBack fields;
          for (ScanCarry& c : carries) {
            bind_carry(c, *scope, false, used, fields);
            for (size_t i = 0; i < c.params.size(); ++i)
              own[k].emplace_back(c.params[i], c.param_names[i]);
          }
          std::vector<Var> yields;
          if (k == 0) {
            Value test = eval(*e.args[0], scope);
            if (test.kind != VKind::boolean &&
                !(test.is_tensor() && test.tensor().type == Type{DType::boolean, {}}))
              not_a_scan(fmt::format("its condition gives {}", a_type_name(test)));
            yields.push_back(tape_var(test));
          } else {
            eval_block(*e.args[1], scope, false);
            if (signal_ == Signal::continue_) signal_ = Signal::none;
            settle_carries(carries, *scope, false, yields);
          }
          return yields;
        },
        why, &again);
    if (!s) return false;
    regions.push_back(std::move(*s));
  }
  std::vector<std::vector<std::pair<Var, std::string>>> params;
  VarList consts = region_consts(regions, params);
  std::vector<Tape> tapes;
  for (size_t k = 0; k < 2; ++k) {
    params[k].insert(params[k].end(), own[k].begin(), own[k].end());
    tapes.push_back(region_tape(regions[k].nested.builder->tape(), params[k], regions[k].yields));
  }
  VarList carried;
  for (const ScanCarry& c : carries) {
    for (const Value& leaf : c.leaves) carried.push_back(tape_var(leaf));
  }
  here_ = e.pos;
  builder_->set_loc(loc_of(op_pos()));
  check_op_limit();
  int64_t max_trips = e.int_value > 0 ? e.int_value : limits_.max_trips;
  std::vector<Var> outs =
      builder_->while_loop(consts, carried, std::move(tapes[0]), std::move(tapes[1]), max_trips);
  set_carries(carries, outs, env, e.pos);
  return true;
}

}  // namespace ytape::tracer
