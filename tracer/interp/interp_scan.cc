// Loops traced as scans (docs/regions.md, "Loops in programs"). A `for` over a range whose
// body carries values from one iteration to the next, and `stack(f, range)`, are traced
// once, on a trace nested in the current one, and recorded as one scan op. The body is
// traced speculatively: whatever a scan cannot hold (a write into an object made before
// the loop, a print, a random draw, a branch on a traced value, a carried value whose type
// changes) stops the attempt and leaves the interpreter as it was; the loop then runs
// unrolled as before (or, under `--loops scan`, is an error naming why). A field of a
// mutable struct that the body assigns (a recurrent layer's state) is carried, found by a
// first attempt that stops where the body assigns it.
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "tape/error.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/scan_trace.h"

namespace ytape::tracer {

namespace {

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
      return;  // `x[i] = v`, `x.f = v`: writes, which the attempt meets when they run
  }
}

bool control_number(const Value& v) {
  return v.kind == VKind::integer || v.kind == VKind::boolean;
}

}  // namespace

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

Type value_type(const Value& v) {
  return v.is_tensor() ? v.tensor().type : Type{dtype_of_value(v), {}};
}

bool flatten_carried(const Value& v, std::vector<Value>& leaves, std::string& form) {
  if (v.is_tensor() || v.is_number()) {
    leaves.push_back(v);
    form += v.is_number() ? "n" : "a";
    form += type_str(value_type(v));
    return true;
  }
  if ((v.kind != VKind::tuple && v.kind != VKind::named_tuple) || v.tup().vector) return false;
  form += "(";
  for (size_t i = 0; i < v.tup().items.size(); ++i) {
    if (!v.tup().names.empty()) form += v.tup().names[i] + "=";
    if (!flatten_carried(v.tup().items[i], leaves, form)) return false;
    form += ",";
  }
  form += ")";
  return true;
}

Value with_leaves(const Value& like, const std::vector<Value>& leaves, size_t& k) {
  if (like.kind != VKind::tuple && like.kind != VKind::named_tuple) return leaves.at(k++);
  std::vector<Value> items;
  for (const Value& item : like.tup().items) items.push_back(with_leaves(item, leaves, k));
  return Value::like(like.tup(), std::move(items));
}

void Interpreter::not_a_scan(std::string reason) const {
  throw NotAScan{std::move(reason)};
}

void Interpreter::check_scan_write(const Env* scope) const {
  if (scope != scan_scope_ && scope->serial < scan_->first_serial) {
    not_a_scan(
        "it assigns a variable outside the loop that it does not carry (a closure "
        "made outside the loop, or a global)");
  }
}

void Interpreter::check_scan_write(const Object& object) const {
  if (object.serial < scan_->first_serial)
    not_a_scan("it writes into an array or a mutable struct made before the loop");
}

bool Interpreter::scan_field_write(const std::shared_ptr<const Object>& object, size_t field,
                                   const std::string& name) {
  if (object->serial >= scan_->first_serial) return false;  // the body's own
  for (const ScanCarry& c : *scan_->carries) {
    if (c.object == object && c.field == field) return true;
  }
  throw NotAScan{fmt::format("it assigns field {} of an instance made before the loop", name),
                 object, field};
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

// ---- which loops, and their carries -----------------------------------------------------

std::vector<std::pair<std::string, Value>> visible_locals(const std::vector<std::string>& names,
                                                          const EnvPtr& env, const Env* globals) {
  std::vector<std::pair<std::string, Value>> out;
  for (const std::string& name : names) {
    if (std::any_of(out.begin(), out.end(), [&](const auto& c) { return c.first == name; }))
      continue;  // assigned twice
    for (const Env* scope = env.get(); scope != nullptr && scope != globals;
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

std::vector<std::pair<std::string, Value>> Interpreter::loop_carries(const Expr& e,
                                                                     const EnvPtr& env) {
  std::vector<std::string> names;
  assigned_names(*e.args[1], names);
  const std::string& index = e.args[0]->args[0]->args[0]->name;
  names.erase(std::remove(names.begin(), names.end(), index), names.end());
  return visible_locals(names, env, globals_.get());
}

bool Interpreter::may_scan(const Value& over, Pos pos) {
  if (!tracing() || scan_ != nullptr || limits_.loops == LoopMode::unroll) return false;
  if (over.kind != VKind::range) return false;
  int64_t n = range_length(over.rng(), pos);
  return n > 0 && (limits_.loops == LoopMode::scan || n >= kAutoScanTrips);
}

bool Interpreter::trace_scan(const Expr& e, const Value& over, const EnvPtr& env) {
  const Expr& clause = *e.args[0];
  if (clause.args.size() != 1 || clause.args[0]->args[0]->kind != Kind::id ||
      !may_scan(over, e.pos))
    return false;
  std::vector<ScanCarry> carries;
  for (auto& [name, v] : loop_carries(e, env)) carries.push_back({name, nullptr, 0, v});
  const Expr& body = *e.args[1];
  ScanLoop loop{e.pos, clause.args[0]->args[0]->name, over.rng(), env,
                [this, &body](const EnvPtr& scope) {
                  eval_block(body, scope, false);
                  return std::optional<Value>();
                }};
  bool settles = false;
  if (run_scan(loop, std::move(carries), &settles)) return true;
  // A carry whose type the first iteration changes (a recurrent layer's one-column state0
  // meeting a batch) may keep the new one: that iteration runs as it is, the others as a
  // scan, or unrolled where they cannot be one.
  const RangeObj& r = over.rng();
  if (!settles || r.length() < 2) return false;
  Value first = Value::range(r.at(0), r.step, r.at(0));
  run_loop(clause, 0, body, env, &first);
  if (signal_ != Signal::none) return true;  // it left the loop
  Value rest = Value::range(r.at(1), r.step, r.stop);
  peeled_ = true;
  bool scanned = false;
  try {
    scanned = trace_scan(e, rest, env);
  } catch (...) {
    peeled_ = false;
    throw;
  }
  peeled_ = false;
  if (!scanned) run_loop(clause, 0, body, env, &rest);
  return true;
}

std::optional<Value> Interpreter::trace_stack(const Value& f, const Value& over, Pos pos) {
  if (!may_scan(over, pos)) return std::nullopt;
  ScanLoop loop{pos, "t", over.rng(), globals_, [this, &f, pos](const EnvPtr& scope) {
                  Args args;
                  args.pos.push_back(scope->vars.at("t"));
                  return std::optional<Value>(call(f, std::move(args), pos));
                }};
  std::optional<std::vector<Value>> ys = run_scan(loop, {});
  if (!ys) return std::nullopt;
  return ys->at(0);
}

std::optional<std::vector<Value>> Interpreter::run_scan(const ScanLoop& loop,
                                                        std::vector<ScanCarry> carries,
                                                        bool* settles) {
  bool forced = limits_.loops == LoopMode::scan && loop.required;
  for (ScanCarry& c : carries) {
    if (!prepare_carry(c, forced, loop.pos)) return std::nullopt;
  }
  std::string reason;
  bool retyped = false;
  // Each field the body is found to assign is one attempt more, and so is a number
  // whose dtype one iteration settles (an untyped float literal meeting Float32 arrays).
  for (int attempt = 0; attempt < 16; ++attempt) {
    ScanAttempt a = attempt_scan(loop, carries, !retyped);
    if (a.ys) return a.ys;
    reason = a.reason;
    if (a.object != nullptr) {
      const StructObj& s = static_cast<const StructObj&>(*a.object);
      ScanCarry c{s.type->fields[a.field], a.object, a.field, s.fields[a.field]};
      if (!prepare_carry(c, forced, loop.pos)) return std::nullopt;
      carries.push_back(std::move(c));
    } else if (!a.retyped.empty() && !retyped) {
      retyped = true;
      for (auto [i, dtype] : a.retyped) {
        carries[i].init = as_tensor(carries[i].init, dtype);
        prepare_carry(carries[i], forced, loop.pos);
      }
    } else {
      if (a.settles && settles != nullptr && !peeled_) {
        *settles = true;  // the caller runs one iteration and tries again
        return std::nullopt;
      }
      break;
    }
  }
  if (forced && !reason.empty()) {
    fail(loop.pos, fmt::format("this loop cannot be a scan (--loops scan): {}; trace with "
                               "--loops auto to unroll it",
                               reason));
  }
  return std::nullopt;
}

bool Interpreter::prepare_carry(ScanCarry& c, bool forced, Pos pos) {
  c.leaves.clear();
  c.form.clear();
  bool ok = flatten_carried(c.init, c.leaves, c.form);
  if (ok && !forced) {
    // Unrolled, a counter or a flag stays a concrete number that later code may use as
    // a size or a condition; `auto` keeps such loops unrolled.
    ok = std::none_of(c.leaves.begin(), c.leaves.end(), control_number);
  } else if (!ok && forced) {
    fail(pos, fmt::format("this loop cannot be a scan (--loops scan): it carries '{}', {}, "
                          "from one iteration to the next; a scan carries arrays, numbers "
                          "and tuples of them (trace with --loops auto to unroll it)",
                          c.name, a_type_name(c.init)));
  }
  return ok;
}

}  // namespace ytape::tracer
