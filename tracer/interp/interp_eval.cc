// The evaluator: the dispatch on expression kinds, variables and their scopes, literals.
#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Whether `e` is a condition that may be computed whatever the other side of `&&` gives:
// comparisons, calls, names, literals, fields, indexing and their combinations; not a
// `return`, an assignment or a block, which only run where the other side lets them.
bool plain_condition(const Expr& e) {
  switch (e.kind) {
    case Kind::comparison:
    case Kind::call:
    case Kind::broadcast:
    case Kind::id:
    case Kind::bool_lit:
    case Kind::int_lit:
    case Kind::float_lit:
    case Kind::and_:
    case Kind::or_:
    case Kind::field:
    case Kind::index:
      break;
    default:
      return false;
  }
  for (const ExprPtr& a : e.args) {
    if (a != nullptr && !plain_condition(*a)) return false;
  }
  return true;
}

}  // namespace

bool Interpreter::both_sides(const Value& lhs, const Expr& rhs) const {
  return tracing() && limits_.loops != LoopMode::unroll && lhs.is_tensor() && lhs.tensor().traced &&
         lhs.tensor().type == Type{DType::boolean, {}} && plain_condition(rhs);
}

Value Interpreter::eval_block(const Expr& e, const EnvPtr& env, bool value_used) {
  Value last;
  for (size_t i = 0; i < e.args.size(); ++i) {
    const Expr& s = *e.args[i];
    // An `if` whose value nobody uses may give values of different types on its two
    // sides (`if c; y = f(x); end`), which a traced cond then drops.
    bool used = value_used && i + 1 == e.args.size();
    last = s.kind == Kind::if_ && !used ? eval_if(s, env, false) : eval(s, env);
    if (signal_ != Signal::none) break;
  }
  return last;
}

namespace {

// Inline, since every variable lookup asks it of every scope it passes, and nearly all
// scopes declare nothing global.
inline bool declares_global(const Env& scope, const std::string& name) {
  if (scope.globals.empty()) [[likely]]
    return false;
  return std::find(scope.globals.begin(), scope.globals.end(), name) != scope.globals.end();
}

// Whether `v` holds a traced tensor, which must not outlive its trace in a global.
bool holds_traced(const Value& v) {
  switch (v.kind) {
    case VKind::tensor:
      return v.tensor().traced;
    case VKind::tuple:
    case VKind::named_tuple:
      return std::any_of(v.tup().items.begin(), v.tup().items.end(), holds_traced);
    case VKind::object:
      return std::any_of(v.object().fields.begin(), v.object().fields.end(), holds_traced);
    default:
      return false;
  }
}

}  // namespace

Value Interpreter::eval_id(const Expr& e, const EnvPtr& env) {
  for (Env* scope = env.get(); scope != nullptr; scope = scope->parent.get()) {
    if (declares_global(*scope, e.name)) scope = globals_.get();
    if (scope == globals_.get()) {
      if (const Value* g = global_at(e.name, e.pos)) return *g;
      break;
    }
    auto it = scope->vars.find(e.name);
    if (it != scope->vars.end()) return it->second;
  }
  fail(e.pos, fmt::format("undefined variable '{}'{}", e.name, undefined_hint(e.name, env.get())));
}

Env* Interpreter::set_var(const std::string& name, Value v, const EnvPtr& env, Pos pos) {
  // Julia's rule: an assignment updates the variable of the nearest enclosing local scope
  // that has it; globals are updated from top-level code, or from a scope that declares
  // the name `global` (a function nested in that scope makes a local of its own).
  bool crossed_function = false;
  for (Env* scope = env.get(); scope != nullptr; scope = scope->parent.get()) {
    if (scope->global && crossed_function) break;
    if (declares_global(*scope, name)) {
      if (crossed_function) break;
      if (tracing() && holds_traced(v)) {
        fail(pos, fmt::format("cannot assign a traced value to the global '{}': traced values "
                              "exist only while the entry runs; return it instead",
                              name));
      }
      if (scan_scope_ != nullptr) check_scan_write(globals_.get());
      globals_->vars[name] = converted_to(*globals_, name, std::move(v), pos);
      return globals_.get();
    }
    auto it = scope->vars.find(name);
    if (it != scope->vars.end()) {
      if (scan_scope_ != nullptr) [[unlikely]]
        check_scan_write(scope);
      it->second = converted_to(*scope, name, std::move(v), pos);
      return scope;
    }
    if (scope->function_scope) crossed_function = true;
  }
  env->vars[name] = std::move(v);
  return env.get();
}

// `global x` or `global x = v` in a local scope: from here on, `x` in this scope (and the
// scopes inside it) is the global.
void Interpreter::declare_global(const Expr& decl, const EnvPtr& env) {
  bool assigns = decl.kind == Kind::assign || decl.kind == Kind::op_assign;
  const Expr* target = assigns ? decl.args[0].get() : &decl;
  if (target->kind == Kind::decl) target = target->args[0].get();
  if (target->kind != Kind::id)
    fail(decl.pos, "'global' declares names: write 'global x' or 'global x = v'");
  if (!env->global && !declares_global(*env, target->name)) env->globals.push_back(target->name);
  if (assigns) eval(decl, env);
}

Value Interpreter::eval_literal(const Expr& e, const EnvPtr& env) {
  switch (e.kind) {
    case Kind::int_lit:
      return Value::integer(e.int_value);
    case Kind::float_lit:
      return e.float32 ? Value::floating(e.float_value, DType::f32)
                       : Value::floating(e.float_value, DType::f64, true);
    case Kind::bool_lit:
      return Value::boolean(e.int_value != 0);
    case Kind::string_lit:
      return Value::string(e.name);
    case Kind::symbol:
      return Value::symbol(e.name);
    case Kind::interp: {
      std::string text;
      for (const ExprPtr& piece : e.args) {
        Value v = eval(*piece, env);
        text += printed(v);
      }
      return Value::string(std::move(text));
    }
    default:
      return Value();
  }
}

Value Interpreter::eval(const Expr& e, const EnvPtr& env) {
  if (++steps_ > limits_.max_steps && limits_.max_steps > 0) [[unlikely]] {
    step_limit_reached(e.pos);
  }
  switch (e.kind) {
    case Kind::int_lit:
    case Kind::float_lit:
    case Kind::bool_lit:
    case Kind::string_lit:
    case Kind::symbol:
    case Kind::nothing:
    case Kind::interp:
      return eval_literal(e, env);
    case Kind::id:
      return eval_id(e, env);
    case Kind::end:
      if (ends_.empty()) fail(e.pos, "'end' as an index outside of indexing");
      if (ends_.back() == kUnknownEnd) {
        fail(e.pos,
             "'end' of this value is not known: define lastindex(x) (or length(x)) for "
             "its type");
      }
      return Value::integer(ends_.back());
    case Kind::colon:
      return Value::symbol(":");
    case Kind::call:
      return eval_call(e, env);
    case Kind::eval_:
      return eval_macro(e, env);
    case Kind::interpolate:
      fail(e.pos, "'$' interpolates only inside @eval");
    case Kind::broadcast:
      return eval_broadcast(e, env);
    case Kind::field:
      return eval_field(e, env);
    case Kind::index:
      return eval_index(e, env);
    case Kind::tuple:
    case Kind::named_tuple:
    case Kind::vect:
    case Kind::matrix:
    case Kind::range:
    case Kind::comprehension:
    case Kind::generator:
    case Kind::typed_array:
      return eval_collection(e, env);
    case Kind::and_:
    case Kind::or_: {
      Value lhs = eval(*e.args[0], env);
      if (signal_ != Signal::none) return Value();
      if (lhs.is_tensor() && lhs.tensor().element) {
        // Inside a function broadcast over elements (all(v -> a || b, x)), each element
        // takes its own side: both are computed, and combined elementwise.
        Value rhs = eval(*e.args[1], env);
        if (signal_ != Signal::none) return Value();
        return element_logic(e.kind == Kind::or_, lhs, rhs, e.pos);
      }
      if (both_sides(lhs, *e.args[1])) {
        // A traced Bool and a plain condition: both computed and combined, so that an if or
        // a while on `a && b` is one region op rather than a guard on `a`.
        Value rhs = eval(*e.args[1], env);
        if (signal_ != Signal::none) return Value();
        Args args;
        args.pos = {lhs, rhs};
        return call(*global(e.kind == Kind::or_ ? "|" : "&"), std::move(args), e.pos);
      }
      bool l = truth(lhs, e.args[0]->pos);
      if (l == (e.kind == Kind::or_)) return Value::boolean(l);
      return eval(*e.args[1], env);
    }
    case Kind::comparison:
      return eval_comparison(e, env);
    case Kind::if_:
      return eval_if(e, env);
    case Kind::for_:
      return eval_for(e, env);
    case Kind::while_:
      return eval_while(e, env);
    case Kind::let:
      return eval_let(e, env);
    case Kind::block:
      return eval_block(e, env);
    case Kind::assign:
      return eval_assign(e, env);
    case Kind::op_assign:
      return eval_op_assign(e, env);
    case Kind::dot_assign:
      return eval_dot_assign(e, env);
    case Kind::break_:
      signal_ = Signal::break_;
      return Value();
    case Kind::continue_:
      signal_ = Signal::continue_;
      return Value();
    case Kind::return_: {
      Value v = e.args.empty() ? Value() : eval(*e.args[0], env);
      if (signal_ != Signal::none) return Value();
      return_value_ = std::move(v);
      signal_ = Signal::return_;
      return Value();
    }
    case Kind::function:
    case Kind::lambda:
      return eval_function(e, env);
    case Kind::struct_:
    case Kind::abstract_type:
      return eval_struct(e, env);
    case Kind::const_:
      return eval(*e.args[0], env);
    case Kind::curly:  // `Vector{Float32}`, `Dict{Symbol, Int}` as values
      return Value::type(eval_type(e, env, nullptr));
    case Kind::global:
      for (const ExprPtr& a : e.args) declare_global(*a, env);
      return Value();
    case Kind::local: {
      // `local x = v` makes a new variable here even when an outer scope has an `x`.
      for (const ExprPtr& a : e.args) {
        const Expr* target = a->kind == Kind::assign ? a->args[0].get() : a.get();
        if (target->kind == Kind::decl) target = target->args[0].get();
        Value v = a->kind == Kind::assign ? eval(*a->args[1], env) : Value();
        if (signal_ != Signal::none) return Value();
        if (target->kind != Kind::id) continue;
        const Expr& written = a->kind == Kind::assign ? *a->args[0] : *a;
        if (written.kind == Kind::decl) {
          TypeRef t = eval_type(*written.args[1], env, nullptr);
          if (a->kind == Kind::assign) v = convert_to(t, std::move(v), written.pos);
          env->types[target->name] = std::move(t);
        }
        env->vars[target->name] = std::move(v);
      }
      return Value();
    }
    case Kind::decl:
      return type_assert(e, env);
    case Kind::using_:
    case Kind::import_:
      note_imports(e);
      return Value();
    default:
      fail(e.pos, fmt::format("'{}' is not supported here", kind_name(e.kind)));
  }
}

}  // namespace ytape::tracer
