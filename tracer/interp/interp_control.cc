// Control flow, assignment and destructuring.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Pops the back of a stack when a scope ends, by an error too: `@test_throws` goes on
// running after one.
template <class Stack>
struct PopOnExit {
  Stack& stack;
  ~PopOnExit() { stack.pop_back(); }
};
template <class Stack>
PopOnExit(Stack&) -> PopOnExit<Stack>;

}  // namespace

Value Interpreter::eval_if(const Expr& e, const EnvPtr& env, bool value_used) {
  Value cond = eval(*e.args[0], env);
  if (signal_ != Signal::none) return Value();
  if (cond.is_tensor() && cond.tensor().element && e.args.size() == 3 &&
      e.args[1]->kind != Kind::block) {
    // `c ? a : b` on an element of a broadcast function: each element takes its own side,
    // both computed and chosen with ifelse (an `if` statement still must not branch).
    Value a = eval(*e.args[1], env);
    if (signal_ != Signal::none) return Value();
    Value b = eval(*e.args[2], env);
    if (signal_ != Signal::none) return Value();
    Args args;
    args.pos = {cond, a, b};
    return call(*global("ifelse"), std::move(args), e.pos);
  }
  if (std::optional<Value> both = trace_cond(e, cond, env, value_used)) return *both;
  if (truth(cond, e.args[0]->pos)) return eval_block_or(*e.args[1], env, value_used);
  if (e.args.size() > 2) return eval_block_or(*e.args[2], env, value_used);
  return Value();
}

Value Interpreter::eval_block_or(const Expr& e, const EnvPtr& env, bool value_used) {
  return e.kind == Kind::block ? eval_block(e, env, value_used) : eval(e, env);
}

Value Interpreter::element_logic(bool is_or, const Value& a, const Value& b, Pos pos) {
  Args args;
  args.pos = {a, b};
  return with_element(call(*global(is_or ? "|" : "&"), std::move(args), pos), true);
}

Value Interpreter::eval_comparison(const Expr& e, const EnvPtr& env) {
  bool dotted = false;
  for (size_t i = 1; i < e.args.size(); i += 2) dotted = dotted || e.args[i]->name[0] == '.';
  if (dotted) return eval_dotted_comparison(e, env);
  Value lhs = eval(*e.args[0], env);
  Value result = Value::boolean(true);
  for (size_t i = 1; i + 1 < e.args.size(); i += 2) {
    Value rhs = eval(*e.args[i + 1], env);
    Args args;
    args.pos = {lhs, rhs};
    Value r = call(eval(*e.args[i], env), std::move(args), e.args[i]->pos);
    if (is_element(r) || is_element(result)) {
      // On elements of a broadcast function (0 < v < 2): each link, combined with &.
      result = i == 1 ? r : element_logic(false, result, r, e.args[i]->pos);
    } else {
      result = r;
      if (!truth(result, e.args[i]->pos)) return Value::boolean(false);
    }
    lhs = std::move(rhs);
  }
  return result;
}

// A chain with a dotted operator, as Julia lowers it: every comparison (each operand
// evaluated once, none skipped), combined elementwise with `&`.
Value Interpreter::eval_dotted_comparison(const Expr& e, const EnvPtr& env) {
  Value lhs = eval(*e.args[0], env);
  Value result;
  for (size_t i = 1; i + 1 < e.args.size(); i += 2) {
    Value rhs = eval(*e.args[i + 1], env);
    const Expr& op = *e.args[i];
    Pos pos = op.pos;
    Args args;
    args.pos = {lhs, rhs};
    Value r = op.name[0] == '.' ? broadcast(*global(op.name.substr(1)), std::move(args), pos)
                                : call(eval(op, env), std::move(args), pos);
    if (i == 1) {
      result = std::move(r);
    } else {
      Args both;
      both.pos = {std::move(result), std::move(r)};
      result = broadcast(*global("&"), std::move(both), pos);
    }
    lhs = std::move(rhs);
  }
  return result;
}

namespace {

std::string no_field(std::string_view owner, std::string_view name,
                     const std::vector<std::string>& fields) {
  return fmt::format("{} has no field '{}'; its fields are {}", owner, name,
                     fields.empty() ? "none" : fmt::format("{}", fmt::join(fields, ", ")));
}

}  // namespace

std::vector<Value> Interpreter::iterate_protocol(const Value& v, Pos pos) {
  // Julia's: iterate(x) gives (item, state) or nothing, then iterate(x, state) the next.
  const Value* it = global("iterate");
  Args args;
  args.pos = {v};
  if (it == nullptr || it->kind != VKind::function || find_method(it->fn(), args) == nullptr) {
    fail(pos, fmt::format("cannot iterate over {}; define iterate(x::{}) and "
                          "iterate(x::{}, state), as in Julia",
                          a_type_name(v), type_name_of(v), type_name_of(v)));
  }
  std::vector<Value> out;
  for (Value next = call(*it, std::move(args), pos); next.kind != VKind::nothing;) {
    if (next.kind != VKind::tuple || next.tup().items.size() != 2) {
      fail(pos,
           fmt::format("iterate must return (item, state) or nothing, got {}", a_type_name(next)));
    }
    out.push_back(next.tup().items[0]);
    Args more;
    more.pos = {v, next.tup().items[1]};
    next = call(*it, std::move(more), pos);
  }
  return out;
}

std::vector<Value> Interpreter::iterate(const Value& v, Pos pos) {
  switch (v.kind) {
    case VKind::tuple:
    case VKind::named_tuple:
      return v.tup().items;
    case VKind::range:
      return range_items(v.rng(), pos);
    case VKind::integer:
    case VKind::float_:
    case VKind::boolean:
      return {v};
    case VKind::string: {
      std::vector<Value> out;
      for (char c : v.text()) out.push_back(Value::string(std::string(1, c)));
      return out;
    }
    case VKind::tensor: {
      // The elements, in memory (column-major) order, as Julia iterates any array; a
      // matrix's columns are eachcol(x).
      const TensorObj& t = v.tensor();
      if (t.type.rank() == 0) return {v};
      const Value* index = global("getindex");
      std::vector<Value> out;
      int64_t n = t.type.size();
      out.reserve(static_cast<size_t>(n));
      for (int64_t i = 1; i <= n; ++i) {
        Args args;
        args.pos = {v, Value::integer(i)};
        out.push_back(call(*index, std::move(args), pos));
      }
      return out;
    }
    case VKind::object:
      return iterate_protocol(v, pos);
    default:
      fail(pos, fmt::format("cannot iterate over {}", a_type_name(v)));
  }
}

int64_t Interpreter::range_length(const RangeObj& r, Pos pos) {
  try {
    return r.length();
  } catch (const UserError& e) {
    fail(pos, e.what());
  }
}

std::vector<Value> Interpreter::range_items(const RangeObj& r, Pos pos) {
  int64_t n = range_length(r, pos);
  std::string range = r.step == 1 ? fmt::format("{}:{}", r.start, r.stop)
                                  : fmt::format("{}:{}:{}", r.start, r.step, r.stop);
  charge_steps(n, pos, fmt::format("the {} values of {}", n, range));
  std::vector<Value> out;
  out.reserve(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) out.push_back(Value::integer(r.at(i)));
  return out;
}

void Interpreter::charge_steps(int64_t n, Pos pos, std::string_view what) {
  if (n <= 0) return;
  int64_t limit = limits_.max_steps > 0 ? limits_.max_steps : kMaxElements;
  if (n > limit - std::min(steps_, limit)) {
    fail(pos, fmt::format("{} would take the program past its limit of {} steps; raise the "
                          "limit with --max-steps if it is meant to run this long",
                          what, limit));
  }
  steps_ += n;
}

void Interpreter::bind_local(const Expr& target, const Value& v, const EnvPtr& scope) {
  // Loop variables are new in each iteration, never the variables of enclosing scopes.
  if (target.kind == Kind::id) {
    scope->vars[target.name] = v;
    return;
  }
  if (target.kind != Kind::tuple)
    fail(target.pos, "a loop variable must be a name or a tuple of names");
  std::vector<Value> items = iterate(v, target.pos);
  if (items.size() < target.args.size()) {
    fail(target.pos, fmt::format("cannot destructure {} values into {} names", items.size(),
                                 target.args.size()));
  }
  for (size_t i = 0; i < target.args.size(); ++i) bind_local(*target.args[i], items[i], scope);
}

void Interpreter::run_loop(const Expr& iteration, size_t k, const Expr& body, const EnvPtr& env,
                           const Value* first) {
  const Expr& in = *iteration.args[k];
  Value over = first != nullptr ? *first : eval(*in.args[1], env);
  // Ranges are counted rather than expanded: a long unrolled loop keeps no list of its
  // indices.
  bool range = over.kind == VKind::range;
  std::vector<Value> items;
  if (!range) items = iterate(over, in.args[1]->pos);
  int64_t n =
      range ? range_length(over.rng(), in.args[1]->pos) : static_cast<int64_t>(items.size());
  EnvPtr scope;
  for (int64_t i = 0; i < n; ++i) {
    // Each iteration has fresh variables. Its scope is recycled when nothing (a closure)
    // kept the previous one, which spares allocations per iteration; a scope holding just
    // the loop variable keeps it, to be overwritten.
    if (scope != nullptr && scope.use_count() == 1) {
      bool just_index = scope->vars.size() == 1 && in.args[0]->kind == Kind::id &&
                        scope->vars.begin()->first == in.args[0]->name;
      if (!just_index) scope->vars.clear();
      scope->globals.clear();
    } else {
      scope = std::make_shared<Env>();
      scope->parent = env;
    }
    bind_local(*in.args[0], range ? Value::integer(over.rng().at(i)) : items[i], scope);
    if (k + 1 < iteration.args.size()) {
      run_loop(iteration, k + 1, body, scope);
    } else {
      ++loops_.back().iterations;
      eval_block(body, scope, false);
    }
    if (signal_ == Signal::continue_) signal_ = Signal::none;
    if (signal_ != Signal::none) return;
  }
}

Value Interpreter::eval_for(const Expr& e, const EnvPtr& env) {
  loops_.push_back({e.pos});
  PopOnExit running{loops_};
  Value over = eval(*e.args[0]->args[0]->args[1], env);
  if (!trace_scan(e, over, env)) run_loop(*e.args[0], 0, *e.args[1], env, &over);
  if (signal_ == Signal::break_) signal_ = Signal::none;
  return Value();
}

Value Interpreter::eval_while(const Expr& e, const EnvPtr& env) {
  loops_.push_back({e.pos});
  PopOnExit running{loops_};
  bool may_region = true;
  for (size_t slot = loops_.size() - 1;; ++loops_[slot].iterations) {
    Value cond = eval(*e.args[0], env);
    if (signal_ != Signal::none) break;
    // A condition on traced values: the rest of the loop is one while_loop op where it can
    // be; where a carried value's type changed, this trip runs and the next tries again.
    if (may_region && cond.is_tensor() && cond.tensor().traced) {
      if (trace_while(e, env, may_region)) break;
    }
    if (!truth(cond, e.args[0]->pos)) break;
    auto scope = std::make_shared<Env>();
    scope->parent = env;
    eval_block(*e.args[1], scope, false);
    if (signal_ == Signal::continue_) signal_ = Signal::none;
    if (signal_ != Signal::none) break;
  }
  if (signal_ == Signal::break_) signal_ = Signal::none;
  return Value();
}

Value Interpreter::eval_let(const Expr& e, const EnvPtr& env) {
  auto scope = std::make_shared<Env>();
  scope->parent = env;
  for (const ExprPtr& binding : e.args[0]->args) {
    if (binding->kind == Kind::assign) {
      // `let x = x`: the value is read in the scope outside the new binding.
      Value v = eval(*binding->args[1], scope);
      const Expr& target = *binding->args[0];
      scope->vars[target.kind == Kind::decl ? target.args[0]->name : target.name] = v;
    } else {
      scope->vars[binding->name] = Value();
    }
  }
  return eval_block(*e.args[1], scope);
}

void Interpreter::assign(const Expr& target, const Value& v, const EnvPtr& env) {
  switch (target.kind) {
    case Kind::id:
      set_var(target.name, v, env, target.pos);
      return;
    case Kind::decl: {
      const Expr& name = *target.args[0];
      if (name.kind != Kind::id) fail(target.pos, "a type declaration names a variable: x::T = v");
      TypeRef t = eval_type(*target.args[1], env, nullptr);
      Env* scope = set_var(name.name, convert_to(t, v, target.pos), env, name.pos);
      scope->types[name.name] = std::move(t);
      return;
    }
    case Kind::tuple: {
      std::vector<Value> items = iterate(v, target.pos);
      if (items.size() < target.args.size()) {
        fail(target.pos, fmt::format("cannot destructure {} values into {} names", items.size(),
                                     target.args.size()));
      }
      for (size_t i = 0; i < target.args.size(); ++i) assign(*target.args[i], items[i], env);
      return;
    }
    case Kind::named_tuple: {
      // `(; a, b) = x`: the fields a and b of x (a struct or a named tuple).
      for (const ExprPtr& item : target.args) {
        Value field = field_of(v, item->name, item->pos);
        assign(*item->args[0], field, env);
      }
      return;
    }
    case Kind::field: {
      Value object = eval(*target.args[0], env);
      here_ = target.pos;
      try {
        set_field(object, target.name, v);
      } catch (const ProgramError&) {
        throw;
      } catch (const UserError& err) {
        fail(target.pos, err.what());
      }
      return;
    }
    case Kind::index: {
      // `x[i...] = v` is setindex!(x, v, i...), as in Julia.
      Args args = index_args(target, eval(*target.args[0], env), env);
      args.pos.insert(args.pos.begin() + 1, v);
      call(*global("setindex!"), std::move(args), target.pos);
      return;
    }
    default:
      fail(target.pos, "cannot assign to this expression");
  }
}

void Interpreter::set_field(const Value& object, const std::string& name, Value v) {
  if (object.kind != VKind::object) user_error("{} has no fields to assign", a_type_name(object));
  const TypeObj& t = *object.object().type;
  auto at = std::find(t.fields.begin(), t.fields.end(), name);
  if (at == t.fields.end()) throw UserError(no_field(t.name, name, t.fields));
  if (!t.is_mutable) {
    user_error(
        "setfield!: immutable struct of type {} cannot be changed; declare it "
        "'mutable struct {}' to assign its fields",
        t.name, t.name);
  }
  size_t i = static_cast<size_t>(at - t.fields.begin());
  // As Julia, a typed field converts what is assigned to it (a number to Float32).
  if (const TypeRef& ft = t.field_types[i]; ft != nullptr && !isa(v, *ft)) {
    if (!v.is_number()) {
      user_error("cannot assign {} to field {}::{} of {}", a_type_name(v), name, ft->name, t.name);
    }
    Args conv;
    conv.pos = {Value::type(ft), v};
    v = call(*global("convert"), std::move(conv), here_);
  }
  // A field a loop traced as a scan carries takes the body's value, which the attempt
  // puts back itself.
  bool carried = scan_ != nullptr && scan_field_write(object.obj, i, name);
  if (!carried) log_write(object.obj);
  if (is_container(v)) cycles_.note(object.obj);
  const_cast<StructObj&>(object.object()).fields[i] = std::move(v);
}

void Interpreter::replace_array(const Value& x, const Value& v) {
  log_write(x.obj);
  auto& t = const_cast<TensorObj&>(x.tensor());
  const TensorObj& n = v.tensor();
  t.type = n.type;
  t.data = n.data;
  t.traced = n.traced;
  t.var = n.var;
  t.level = n.level;
  t.slice_of = n.slice_of;  // written into, it is no longer the slice it was
}

void Interpreter::replace_items(const Value& vector, std::vector<Value> items) {
  log_write(vector.obj);
  if (std::any_of(items.begin(), items.end(), is_container)) cycles_.note(vector.obj);
  const_cast<TupleObj&>(vector.tup()).items = std::move(items);
}

void Interpreter::log_write(const std::shared_ptr<const Object>& object) {
  if (scan_ != nullptr) check_scan_write(*object);
  if (!tracing() || !logged_.insert(object.get()).second) return;
  Undo u{object, {}, {}};
  if (auto* s = dynamic_cast<const StructObj*>(object.get())) {
    u.fields = s->fields;
  } else if (auto* t = dynamic_cast<const TupleObj*>(object.get())) {
    u.fields = t->items;
  } else {
    u.array = static_cast<const TensorObj&>(*object);
  }
  undo_.push_back(std::move(u));
}

Value Interpreter::eval_assign(const Expr& e, const EnvPtr& env) {
  if (e.args[0]->kind == Kind::curly) return define_alias(*e.args[0], *e.args[1], env);
  Value v = eval(*e.args[1], env);
  if (signal_ != Signal::none) return Value();
  assign(*e.args[0], v, env);
  return v;
}

Value Interpreter::eval_op_assign(const Expr& e, const EnvPtr& env) {
  const Expr& target = *e.args[0];
  // The target's parts are evaluated once: `x[f()] += 1` calls f once, as in Julia.
  bool indexed = target.kind == Kind::index;
  Args where;  // `x[i...]`: x and the indices
  Value current;
  if (indexed) {
    where = index_args(target, eval(*target.args[0], env), env);
    current = call(*global("getindex"), where, target.pos);
  } else {
    current = eval(target, env);
  }
  Value rhs = eval(*e.args[1], env);
  bool dotted = e.name.size() > 1 && e.name[0] == '.';
  std::string op = dotted ? e.name.substr(1) : e.name;
  const Value* f = global(op);
  if (f == nullptr) fail(e.pos, fmt::format("unknown operator '{}'", op));
  Args args;
  args.pos = {current, rhs};
  if (dotted) ++elementwise_;
  Value out;
  try {
    out = call(*f, std::move(args), e.pos);
  } catch (...) {
    if (dotted) --elementwise_;
    throw;
  }
  if (dotted) --elementwise_;
  if (indexed && dotted) {
    // `x[i] .+= v` writes into x, broadcasting.
    std::vector<Value> idx(where.pos.begin() + 1, where.pos.end());
    write_located(where.pos[0], out, &idx, target.pos);
  } else if (indexed) {
    where.pos.insert(where.pos.begin() + 1, out);
    call(*global("setindex!"), std::move(where), target.pos);
  } else if (dotted && current.is_tensor() && !current.tensor().number && !is_element(current)) {
    write_located(current, out, nullptr, target.pos);  // `x .+= y` is `x .= x .+ y`
  } else {
    assign(target, out, env);
  }
  return out;
}

Value Interpreter::eval_dot_assign(const Expr& e, const EnvPtr& env) {
  const Expr& target = *e.args[0];
  Value array;
  std::vector<Value> idx;
  if (target.kind == Kind::index) {
    Args where = index_args(target, eval(*target.args[0], env), env);
    array = where.pos[0];
    idx.assign(where.pos.begin() + 1, where.pos.end());
  } else {
    array = eval(target, env);
  }
  Value v = eval(*e.args[1], env);
  if (signal_ != Signal::none) return Value();
  bool array_like = array.is_tensor() && !array.tensor().number;  // write_array says why not
  if (target.kind != Kind::index && !array_like) {
    fail(target.pos, fmt::format("'.=' writes into an array, and this is {}; use '=' to assign "
                                 "the variable",
                                 a_type_name(array)));
  }
  write_located(array, v, target.kind == Kind::index ? &idx : nullptr, target.pos);
  return array;
}

void Interpreter::write_located(const Value& x, const Value& v, const std::vector<Value>* idx,
                                Pos pos) {
  here_ = pos;
  try {
    write_array_(*this, x, v, idx, true);
  } catch (const ProgramError&) {
    throw;
  } catch (const UserError& err) {
    fail(pos, err.what());
  }
}

namespace {

// The modules whose names qualify the functions they hold here: `Base.sum`,
// `Flux.Losses.mse`, `Statistics.mean`. All name the one set of globals (the prelude's
// functions and the program's), at any depth.
bool is_module(std::string_view name) {
  static constexpr std::string_view kModules[] = {
      "Base",          "Core",      "Random",           "NNlib",         "Flux",       "Statistics",
      "LinearAlgebra", "Losses",    "Functors",         "Math",          "Optimisers", "Zygote",
      "Broadcast",     "Iterators", "MLUtils",          "Layers",        "Optimise",   "Data",
      "CUDA",          "Train",     "SpecialFunctions", "ChainRulesCore"};
  return std::find(std::begin(kModules), std::end(kModules), name) != std::end(kModules);
}

bool is_module_path(const Expr& e) {
  if (e.kind == Kind::id) return is_module(e.name);
  return e.kind == Kind::field && is_module(e.name) && is_module_path(*e.args[0]);
}

// `Flux.Losses` as written.
std::string path_text(const Expr& e) {
  return e.kind == Kind::id ? e.name : path_text(*e.args[0]) + "." + e.name;
}

}  // namespace

Value Interpreter::eval_field(const Expr& e, const EnvPtr& env) {
  const Expr& object = *e.args[0];
  // `Prim.conv2d` is the primitive, `Composite.conv3d` the op composed of primitives;
  // `Base.f` and `Flux.Losses.mse` read the global f.
  bool prim = object.kind == Kind::id && (object.name == "Prim" || object.name == "Composite");
  if (prim || is_module_path(object)) {
    // A module's name is the module's function, also where the program shadows it.
    auto shadowed = prim ? shadowed_.end() : shadowed_.find(e.name);
    const Value* g = shadowed != shadowed_.end()
                         ? &shadowed->second
                         : global(prim ? object.name + "." + e.name : e.name);
    if (g == nullptr)
      fail(e.pos, fmt::format("undefined variable '{}.{}'{}", path_text(object), e.name,
                              undefined_hint(e.name, nullptr)));
    return *g;
  }
  return field_of(eval(object, env), e.name, e.pos);
}

Value Interpreter::field_of(const Value& v, const std::string& name, Pos pos) {
  if (v.kind == VKind::object) {
    const StructObj& s = v.object();
    for (size_t i = 0; i < s.type->fields.size(); ++i) {
      if (s.type->fields[i] == name) return s.fields[i];
    }
    // A name that is no field: the program's (or the prelude's) getproperty(x, :name)
    // method for x's type, as Julia's `x.name` calls (Flux's BatchNorm `m.β`).
    const Value* getproperty = global("getproperty");
    Args args{{v, Value::symbol(name)}, {}};
    if (getproperty != nullptr && getproperty->kind == VKind::function &&
        find_method(getproperty->fn(), args) != nullptr) {
      return call(*getproperty, std::move(args), pos);
    }
    fail(pos, no_field(s.type->name, name, s.type->fields));
  }
  if (v.kind == VKind::named_tuple) {
    const TupleObj& t = v.tup();
    for (size_t i = 0; i < t.names.size(); ++i) {
      if (t.names[i] == name) return t.items[i];
    }
    fail(pos, no_field("the named tuple", name, t.names));
  }
  fail(pos, fmt::format("{} has no field '{}'", a_type_name(v), name));
}

}  // namespace ytape::tracer
