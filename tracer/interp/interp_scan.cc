// Loops traced as scans (docs/regions.md, "Loops in programs"). A `for` over a range whose
// body carries values from one iteration to the next is traced once, on a trace nested in
// the current one, and recorded as one scan op. The body is traced speculatively: whatever
// a scan cannot hold (a write into an object, a print, a random draw, a branch on a traced
// value, a carried value whose type changes) stops the attempt, leaves the interpreter as
// it was, and the loop is unrolled as before (or, under `--loops scan`, is an error naming
// why).
#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// What stops an attempt. Not a UserError: nothing between the body and its loop, where
// errors are located and rethrown, turns it into a program error.
struct NotAScan {
  std::string reason;
};

// The names `target` (of an assignment) binds.
void bound_names(const Expr& target, std::vector<std::string>& out) {
  switch (target.kind) {
    case Kind::id:
      out.push_back(target.name);
      return;
    case Kind::decl:
      bound_names(*target.args[0], out);
      return;
    case Kind::tuple:
      for (const ExprPtr& item : target.args) bound_names(*item, out);
      return;
    case Kind::named_tuple:
      for (const ExprPtr& item : target.args) {
        if (!item->args.empty()) bound_names(*item->args[0], out);
      }
      return;
    default:
      return;  // `x[i] = v`, `x.f = v`: writes, which stop an attempt when they run
  }
}

// The names the statements of `e` assign, in order of appearance, functions and
// comprehensions (scopes of their own) left out.
void assigned_names(const Expr& e, std::vector<std::string>& out) {
  switch (e.kind) {
    case Kind::function:
    case Kind::lambda:
    case Kind::struct_:
    case Kind::comprehension:
    case Kind::generator:
      return;
    case Kind::assign:
    case Kind::op_assign:
      bound_names(*e.args[0], out);
      assigned_names(*e.args[1], out);
      return;
    default:
      for (const ExprPtr& a : e.args) {
        if (a != nullptr) assigned_names(*a, out);
      }
  }
}

// A value a scan can carry: a tensor or a number.
bool carriable(const Value& v) {
  return v.is_tensor() || v.is_number();
}

Type type_of(const Value& v) {
  return v.is_tensor() ? v.tensor().type : Type{dtype_of_value(v), {}};
}

}  // namespace

// One loop being traced as a scan.
struct Interpreter::ScanTrace {
  uint32_t level = 0;        // the body's trace level
  uint64_t first_scope = 0;  // the serial of the first Env made in the body
  Var index;                 // the loop variable, a parameter of the body
  RangeObj range;
  // `x[..., t]` of arrays from outside: per slice, the array, the shape it is indexed as
  // and the body's parameter for slice t.
  struct Slice {
    Value array;
    Shape view;
    Var param;
  };
  std::vector<Slice> slices;
};

void Interpreter::not_a_scan(std::string reason) const {
  throw NotAScan{std::move(reason)};
}

void Interpreter::check_scan_write(const Env* scope) const {
  if (scope != scan_scope_ && scope->serial < scan_->first_scope) {
    not_a_scan(
        "it assigns a variable outside the loop that it does not carry (a closure "
        "made outside the loop, or a global)");
  }
}

std::optional<Value> Interpreter::scan_slice(const Value& x, const Shape& view,
                                             const Value& index) {
  if (scan_ == nullptr || trace_level() != scan_->level || view.empty()) return std::nullopt;
  if (!index.is_tensor() || !index.tensor().traced || index.tensor().var != scan_->index ||
      index.tensor().level != trace_level())
    return std::nullopt;
  const TensorObj& t = x.tensor();
  if (t.traced && t.level >= trace_level()) return std::nullopt;  // made inside the body
  int64_t size = view.back();
  int64_t n = scan_->range.length();
  for (int64_t k : {scan_->range.at(0), scan_->range.at(n - 1)}) {
    if (k < 1 || k > size) {
      user_error("index {} is out of bounds for dimension {} of size {}", k, view.size(), size);
    }
  }
  for (const ScanTrace::Slice& s : scan_->slices) {
    if (s.array.obj == x.obj && s.view == view)
      return Value::traced(s.param, builder_->type(s.param));
  }
  Type type{t.type.dtype, Shape(view.begin(), view.end() - 1)};
  Var param = builder_->capture(fmt::format("x.{}", scan_->slices.size() + 1), type);
  scan_->slices.push_back({x, view, param});
  return Value::traced(param, std::move(type));
}

namespace {

// The body's tape with its parameters first, in the scan's order, and yielding `yields`.
// `nested` declared them as captures, among its ops.
Tape body_tape(const Tape& nested, const std::vector<std::pair<Var, std::string>>& params,
               const std::vector<Var>& yields) {
  Builder b;
  b.reserve(nested.ops.size(), nested.types.size());
  VarMap map(nested);
  for (const auto& [v, name] : params) map.set(v, b.input(name, nested.types[v.id]));
  for (const Op& op : nested.ops) {
    if (op.kind != OpKind::input) copy_op(b, nested, op, map);
  }
  for (Var y : yields) b.output(map[y], "");
  Tape body = b.finish();
  body.files.clear();  // its locations name the files of the tape around it
  return body;
}

// The name of input `v` of `t`, or "" where v is no input.
std::string input_name(const Tape& t, Var v) {
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::input) break;
    if (op.outs[0] == v) return op.name;
  }
  return "";
}

bool reads(const Tape& t, Var v, const std::vector<Var>& yields) {
  for (const Op& op : t.ops) {
    if (std::find(op.args.begin(), op.args.end(), v) != op.args.end()) return true;
  }
  return std::find(yields.begin(), yields.end(), v) != yields.end();
}

}  // namespace

// The carried variables of loop `e` and their values: those its body assigns that exist
// around it as local variables (a global is assigned only where declared so, which stops an
// attempt when it runs).
std::vector<std::pair<std::string, Value>> Interpreter::loop_carries(const Expr& e,
                                                                     const EnvPtr& env) {
  std::vector<std::string> names;
  assigned_names(*e.args[1], names);
  std::vector<std::pair<std::string, Value>> out;
  const std::string& index = e.args[0]->args[0]->args[0]->name;
  for (const std::string& name : names) {
    bool seen = std::any_of(out.begin(), out.end(), [&](const auto& c) { return c.first == name; });
    if (name == index || seen) continue;
    for (Env* scope = env.get(); scope != nullptr && scope != globals_.get();
         scope = scope->parent.get()) {
      auto it = scope->vars.find(name);
      if (it != scope->vars.end()) {
        out.emplace_back(name, it->second);
        break;
      }
    }
  }
  return out;
}

bool Interpreter::trace_scan(const Expr& e, const Value& over, const EnvPtr& env) {
  if (!tracing() || scan_ != nullptr || limits_.loops == LoopMode::unroll) return false;
  const Expr& clause = *e.args[0];
  if (over.kind != VKind::range || clause.args.size() != 1 ||
      clause.args[0]->args[0]->kind != Kind::id)
    return false;
  bool forced = limits_.loops == LoopMode::scan;
  int64_t n = range_length(over.rng(), e.pos);
  if (n == 0 || (!forced && n < kAutoScanTrips)) return false;
  std::vector<std::string> names;
  std::vector<Value> init;
  for (auto& [name, v] : loop_carries(e, env)) {
    // Unrolled, a counter or a flag stays a concrete number that later code may use as
    // a size or a condition; `auto` keeps such loops unrolled.
    bool control = v.kind == VKind::integer || v.kind == VKind::boolean;
    if (!carriable(v) || (control && !forced)) {
      if (forced && !carriable(v)) {
        fail(e.pos, fmt::format("this loop cannot be a scan (--loops scan): it carries '{}', {}, "
                                "from one iteration to the next; a scan carries arrays and "
                                "numbers (trace with --loops auto to unroll it)",
                                name, a_type_name(v)));
      }
      return false;
    }
    names.push_back(name);
    init.push_back(std::move(v));
  }
  std::string reason;
  // A number carry whose dtype the body changes, or an untyped float literal (which takes
  // the dtype of the arrays it meets, as in `s = 0.0; s += sum(x)`), takes the dtype it
  // has after one iteration from the start: one attempt more.
  for (int attempt = 0; attempt < 2; ++attempt) {
    std::optional<std::vector<Value>> retyped;
    if (try_scan(e, over.rng(), names, init, env, attempt == 0, reason, retyped)) return true;
    if (!retyped) break;
    init = std::move(*retyped);
  }
  if (forced && !reason.empty()) {
    fail(e.pos, fmt::format("this loop cannot be a scan (--loops scan): {}; trace with "
                            "--loops auto to unroll it",
                            reason));
  }
  return false;
}

namespace {

bool weak_float(const Value& v) {
  return v.kind == VKind::float_ && v.weak;
}

}  // namespace

bool Interpreter::try_scan(const Expr& e, const RangeObj& range,
                           const std::vector<std::string>& names, const std::vector<Value>& init,
                           const EnvPtr& env, bool may_retype, std::string& reason,
                           std::optional<std::vector<Value>>& retyped) {
  size_t depth = levels_.size();
  auto stream = this->stream();
  ScanTrace st;
  st.range = range;
  auto scope = std::make_shared<Env>();
  scope->parent = env;
  std::vector<Var> params;
  try {
    begin_nested_trace();
    st.level = trace_level();
    for (size_t i = 0; i < names.size(); ++i) {
      Type type = type_of(init[i]);
      params.push_back(builder_->capture(names[i], type));
      level_->stands_for.emplace(names[i], init[i]);
      // An untyped literal is itself in a first attempt, which finds the dtype it takes.
      scope->vars[names[i]] = may_retype && weak_float(init[i])
                                  ? init[i]
                                  : Value::traced(params.back(), type, init[i].is_number());
    }
    const std::string& index = e.args[0]->args[0]->args[0]->name;
    st.index = builder_->capture(index, Type{DType::i64, {}});
    level_->stands_for.emplace(index, Value::integer(range.at(0)));
    scope->vars[index] = Value::traced(st.index, Type{DType::i64, {}}, true);
    scan_ = &st;
    scan_scope_ = scope.get();
    st.first_scope = next_env_serial() + 1;
    eval_block(*e.args[1], scope);
    if (signal_ != Signal::none)
      not_a_scan("it leaves an iteration early (break, continue, return)");
    if (this->stream() != stream) not_a_scan("it draws random numbers while tracing");
    std::vector<Var> yields;
    std::vector<std::pair<size_t, DType>> changed =
        settle_carries(names, init, *scope, may_retype, yields);
    for (const Op& op : builder_->tape().ops) {
      if (op.kind == OpKind::call && prim_info(op.prim).effectful()) {
        not_a_scan(
            fmt::format("its body records {}, which a scan cannot hold yet", prim_name(op.prim)));
      }
    }
    if (!changed.empty()) {
      abandon_scan(depth, stream);  // the conversions belong to the loop's level
      retyped = init;
      for (auto [i, dtype] : changed) (*retyped)[i] = as_tensor(init[i], dtype);
      return false;
    }
    bool traced = !level_->captures.empty() || !st.slices.empty();
    for (const Value& v : init) traced = traced || (v.is_tensor() && v.tensor().traced);
    if (!traced) not_a_scan("");  // concrete work, which runs as it is unrolled
    NestedTape nested = end_nested_trace();
    scan_ = nullptr;
    scan_scope_ = nullptr;
    record_scan(e, st, nested, params, yields, names, init, env);
    return true;
  } catch (const NotAScan& a) {
    reason = a.reason;
  } catch (const UserError& u) {
    reason = u.what();
  }
  abandon_scan(depth, stream);
  return false;
}

std::vector<std::pair<size_t, DType>> Interpreter::settle_carries(
    const std::vector<std::string>& names, const std::vector<Value>& init, const Env& scope,
    bool may_retype, std::vector<Var>& yields) {
  std::vector<std::pair<size_t, DType>> changed;
  for (size_t i = 0; i < names.size(); ++i) {
    const Value& v = scope.vars.at(names[i]);
    bool same = carriable(v) && type_of(v) == type_of(init[i]) &&
                v.is_number() == init[i].is_number() && !(may_retype && weak_float(init[i]));
    if (same) {
      yields.push_back(var_of(v));
    } else if (may_retype && init[i].is_number() && v.is_number()) {
      changed.emplace_back(i, type_of(v).dtype);
    } else {
      not_a_scan(fmt::format("'{}' is {} before an iteration and {} after it", names[i],
                             a_type_name(init[i]), a_type_name(v)));
    }
  }
  return changed;
}

void Interpreter::abandon_scan(size_t depth, std::pair<uint64_t, uint64_t> stream) {
  while (levels_.size() > depth) levels_.pop_back();
  enter_level();
  scan_ = nullptr;
  scan_scope_ = nullptr;
  signal_ = Signal::none;
  set_stream(stream);
}

void Interpreter::record_scan(const Expr& e, const ScanTrace& st, const NestedTape& nested,
                              const std::vector<Var>& carries, const std::vector<Var>& yields,
                              const std::vector<std::string>& names, const std::vector<Value>& init,
                              const EnvPtr& env) {
  const Tape& tape = nested.builder->tape();
  std::vector<std::pair<Var, std::string>> params;
  VarList consts, carried, xs;
  const std::string& index = e.args[0]->args[0]->args[0]->name;
  for (size_t i = 0; i < nested.captures.size(); ++i) {
    // A const that is an input of the tape keeps its name, unless a carry or the index
    // has it.
    Var outer = nested.captures[i].second;
    std::string name = input_name(builder_->tape(), outer);
    bool taken =
        name.empty() || name == index || std::find(names.begin(), names.end(), name) != names.end();
    params.emplace_back(nested.captures[i].first, taken ? fmt::format("c.{}", i + 1) : name);
    consts.push_back(outer);
  }
  for (size_t i = 0; i < carries.size(); ++i) {
    params.emplace_back(carries[i], names[i]);
    carried.push_back(tape_var(init[i]));
  }
  // A range that steps down is a reverse scan over the ascending positions.
  int64_t n = st.range.length();
  bool reverse = st.range.step < 0;
  int64_t first = reverse ? st.range.at(n - 1) : st.range.at(0);
  int64_t step = reverse ? -st.range.step : st.range.step;
  int64_t last = first + (n - 1) * step;
  here_ = e.pos;
  if (reads(tape, st.index, yields)) {
    params.emplace_back(st.index, index);
    Tensor positions(Type{DType::i64, {n}});
    for (int64_t k = 0; k < n; ++k) positions.data<int64_t>()[k] = first + k * step;
    xs.push_back(var_of(Value::concrete(std::move(positions))));
  }
  for (size_t k = 0; k < st.slices.size(); ++k) {
    const ScanTrace::Slice& s = st.slices[k];
    params.emplace_back(s.param, fmt::format("x.{}", k + 1));
    Value v = s.array;
    if (v.tensor().type.shape != s.view) v = prim1<Prim::reshape>({v}, {.shape = s.view});
    if (first != 1 || step != 1 || last != s.view.back()) {
      std::vector<int64_t> start(s.view.size(), 1), stop(s.view), steps(s.view.size(), 1);
      start.back() = first;
      stop.back() = last;
      steps.back() = step;
      v = prim1<Prim::slice>({v}, {.start = start, .stop = stop, .step = steps});
    }
    xs.push_back(var_of(v));
  }
  Tape body = body_tape(tape, params, yields);
  builder_->set_loc(loc_of(e.pos));
  check_op_limit();
  std::vector<Var> outs = builder_->scan(consts, carried, xs, std::move(body), n, reverse);
  for (size_t i = 0; i < names.size(); ++i) {
    set_var(names[i], Value::traced(outs[i], builder_->type(outs[i]), init[i].is_number()), env,
            e.pos);
  }
}

}  // namespace ytape::tracer
