// Calls: argument evaluation, multiple dispatch, binding of parameters, function
// definitions, broadcasting; the message for a constructor no method takes.
#include <fmt/format.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <optional>

#include "tape/error.h"
#include "tape/infer/common.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Whether `t` is a struct of the program's, or an instantiation of one.
bool program_struct(const TypeRef& t) {
  if (t == nullptr) return false;
  const TypeObj& base = t->generic ? *t->generic : *t;
  return base.tag == TypeTag::user && base.program;
}

// Whether a parameter's type is such a struct, or a union (or tuple) with one.
bool names_program_type(const TypeRef& t) {
  return program_struct(t) ||
         (t != nullptr && std::any_of(t->params.begin(), t->params.end(), program_struct));
}

std::string strip_module(const std::string& name) {
  size_t dot = name.rfind('.');
  return dot == std::string::npos ? name : name.substr(dot + 1);
}

// The signature of a method for messages: "f(x::Float32, y)".
std::string signature(const Method& m, const std::string& name) {
  std::string out = m.receiver ? fmt::format("(::{})", m.receiver->name) : name;
  out += '(';
  for (size_t i = 0; i < m.def->params.size(); ++i) {
    const Param& p = m.def->params[i];
    if (i > 0) out += ", ";
    if (!p.unpack.empty()) {
      out += unpack_text(p.unpack, ", ");
    } else {
      out += p.name.empty() ? "_" : p.name;
    }
    if (p.type) out += "::" + type_expr_str(*p.type);  // as written: AbstractArray{Float32}
    if (p.splat) out += "...";
  }
  return out + ')';
}

bool accepts_count(const Function& def, size_t n) {
  size_t required = 0;
  bool splat = false;
  for (const Param& p : def.params) {
    if (p.splat) {
      splat = true;
    } else if (!p.default_value) {
      ++required;
    }
  }
  return n >= required && (splat || n <= def.params.size());
}

bool applicable(const Method& m, const Args& args, const Value* self) {
  if (m.receiver && (self == nullptr || !isa(*self, *m.receiver))) return false;
  if (!m.receiver && self != nullptr) return false;
  if (!accepts_count(*m.def, args.pos.size())) return false;
  for (size_t i = 0; i < args.pos.size(); ++i) {
    size_t k = std::min(i, m.def->params.size() - 1);
    if (k < m.types.size() && m.types[k] && !isa(args.pos[i], *m.types[k])) return false;
  }
  return true;
}

bool mentions(const Expr& type, const std::string& name) {
  if (type.kind == Kind::id) return type.name == name;
  return std::any_of(type.args.begin(), type.args.end(),
                     [&](const ExprPtr& a) { return mentions(*a, name); });
}

// Whether a where variable appears in two parameter types (`f(x::T, y::T) where T`), which
// makes the method more specific than the same types without it, as in Julia.
bool constrains(const Method& m) {
  for (const ExprPtr& w : m.def->where) {
    const std::string& name = (w->kind == Kind::call ? *w->args[1] : *w).name;
    int uses = 0;
    for (const Param& p : m.def->params) uses += p.type && mentions(*p.type, name) ? 1 : 0;
    if (uses > 1) return true;
  }
  return false;
}

bool types_as_specific(const Method& a, const Method& b) {
  size_t n = std::max(a.types.size(), b.types.size());
  for (size_t i = 0; i < n; ++i) {
    const TypeObj* ta = i < a.types.size() ? a.types[i].get() : nullptr;
    const TypeObj* tb = i < b.types.size() ? b.types[i].get() : nullptr;
    if (tb == nullptr) continue;
    if (ta == nullptr || !as_specific_type(*ta, *tb)) return false;
  }
  return true;
}

// a is at least as specific as b: each parameter type of a is below b's.
bool as_specific(const Method& a, const Method& b) {
  if (!types_as_specific(a, b)) return false;
  // As Julia's: f() is more specific than f(xs...), f(x) than f(x, rest...); but
  // f(x::AbstractArray, rest...) than f(x), its parameters being below.
  auto vararg = [](const Method& m) {
    return !m.def->params.empty() && m.def->params.back().splat;
  };
  if (vararg(a) && !vararg(b) && types_as_specific(b, a)) return false;
  bool diagonal = !b.def->where.empty() && (a.def->where.empty() || !constrains(a));
  return !(diagonal && constrains(b) && types_as_specific(b, a));
}

// Whether no method can take these arguments, each having a parameter of a struct type
// where no argument is an instance: a built-in's numbers and arrays then skip dispatch
// (the prelude's methods of `+` for Complex, of `*` for Tridiagonal).
bool only_for_structs(const std::vector<Method>& methods, const Args& args) {
  auto object = [](const Value& v) { return v.kind == VKind::object; };
  if (std::any_of(args.pos.begin(), args.pos.end(), object)) return false;
  return std::all_of(methods.begin(), methods.end(), [](const Method& m) {
    bool splat = !m.def->params.empty() && m.def->params.back().splat;
    return !splat && std::any_of(m.types.begin(), m.types.end(), [](const TypeRef& t) {
      return t != nullptr && t->tag == TypeTag::user;
    });
  });
}

}  // namespace

void Interpreter::eval_args(const Expr& e, size_t first, const EnvPtr& env, Args& args) {
  if (e.args.size() > first) args.pos.reserve(args.pos.size() + e.args.size() - first);
  for (size_t i = first; i < e.args.size(); ++i) {
    const Expr& a = *e.args[i];
    if (a.kind == Kind::kw) {
      args.kw.emplace_back(a.name, eval(*a.args[0], env));
    } else if (a.kind == Kind::splat) {
      for (Value& v : iterate(eval(*a.args[0], env), a.pos)) args.pos.push_back(std::move(v));
    } else if (a.kind == Kind::kw_splat) {
      Value nt = eval(*a.args[0], env);
      if (nt.kind == VKind::named_tuple) {
        for (size_t k = 0; k < nt.tup().items.size(); ++k)
          args.kw.emplace_back(nt.tup().names[k], nt.tup().items[k]);
      } else {
        // Any collection of `:name => value` pairs, as Julia's.
        for (const Value& p : iterate(nt, a.pos)) {
          bool pair = p.kind == VKind::object && p.object().type->name == "Pair" &&
                      p.object().fields[0].kind == VKind::symbol;
          if (!pair) {
            fail(a.pos, fmt::format("keywords are splatted from a named tuple or from "
                                    ":name => value pairs, got {}",
                                    a_type_name(p)));
          }
          args.kw.emplace_back(p.object().fields[0].text(), p.object().fields[1]);
        }
      }
    } else {
      args.pos.push_back(eval(a, env));
    }
    if (signal_ != Signal::none) return;
  }
}

void Interpreter::check_include(const std::string& file, Pos pos) {
  // Julia would recurse until its stack overflows; a cycle is never what was meant.
  std::error_code ec;
  std::string canonical = std::filesystem::weakly_canonical(file, ec).string();
  auto first = std::find_if(running_files_.begin(), running_files_.end(),
                            [&](const auto& f) { return f.first == canonical; });
  if (first != running_files_.end()) {
    std::string chain;
    for (auto it = first; it != running_files_.end(); ++it) chain += it->second + " -> ";
    fail(pos, fmt::format("include cycle: {}{}", chain, file));
  }
  if (static_cast<int>(running_files_.size()) >= limits_.max_includes) {
    fail(pos, fmt::format("includes nested deeper than {} files", limits_.max_includes));
  }
}

void Interpreter::include(const Value& path, Pos pos) {
  if (path.kind != VKind::string) fail(pos, "include takes a file name");
  std::string dir = sources_.file(pos.file).path;
  size_t slash = dir.rfind('/');
  dir = slash == std::string::npos ? "" : dir.substr(0, slash + 1);
  const std::string& name = path.text();
  std::string file = name.starts_with("/") ? name : dir + name;
  // The path as a String literal, escaped: a NUL or an escape sequence would cut or
  // garble the message.
  std::string call = fmt::format("include({})", show(path));
  try {
    sandbox_.check(file, call, false);
  } catch (const UserError& e) {
    fail(pos, e.what());
  }
  // Only program files: a parse error shows a line of the file, and no other file
  // (a key, a .env) in the program's folder should be shown so; nor through a link.
  if (!file.ends_with(".jl") || !resolved_path(file).ends_with(".jl")) {
    fail(pos, fmt::format("{}: only program files, named *.jl, are included", call));
  }
  check_include(file, pos);
  auto start = std::chrono::steady_clock::now();
  std::string text;
  std::string why = read_source_file(file, text);
  if (why == std::strerror(ENOENT)) why += " (the path is relative to the including file)";
  if (!why.empty()) fail(pos, fmt::format("cannot include '{}': {}", file, why));
  run_source(sources_.add(file, std::move(text)), start);
}

Value Interpreter::eval_call(const Expr& e, const EnvPtr& env) {
  const Expr& callee = *e.args[0];
  if (callee.kind == Kind::id && callee.name == "@view") {
    // `@view x[i...]`: view(x, i...), the indices read as the indexing reads them (`end`).
    return eval_index(*e.args.at(1), env, true);
  }
  if (callee.kind == Kind::id && callee.name == "include") {
    include(eval(*e.args.at(1), env), e.pos);
    return Value();
  }
  Value f = eval(callee, env);
  Args args;
  eval_args(e, 1, env, args);
  if (signal_ != Signal::none) return Value();
  return call(f, std::move(args), e.pos);
}

Value Interpreter::eval_broadcast(const Expr& e, const EnvPtr& env) {
  Value f = eval(*e.args[0], env);
  Args args;
  eval_args(e, 1, env, args);
  if (signal_ != Signal::none) return Value();
  return broadcast(f, std::move(args), e.pos);
}

Value Interpreter::broadcast(const Value& f, Args args, Pos pos) {
  // A range broadcasts as the array of its values ((1:n) .== k is a Bool vector).
  for (Value& a : args.pos) {
    if (a.kind == VKind::range) a = call(*global("collect"), Args{{a}, {}}, pos);
  }
  if (std::any_of(args.pos.begin(), args.pos.end(), is_number_struct)) {
    vectors_of_values(args.pos, pos);  // `x .* z` of a Complex z: a vector of them
  }
  if (std::any_of(args.pos.begin(), args.pos.end(),
                  [](const Value& a) { return a.kind == VKind::tuple; })) {
    return broadcast_tuples(f, std::move(args), pos);
  }
  // A user function (or callable struct) runs once on the whole arrays, each marked as
  // standing for its elements, so that its arithmetic on them is elementwise while the
  // arrays it captures keep their meaning; built-ins are elementwise on their arguments.
  // A built-in with methods for user types (the prelude's `*` of a Tridiagonal) stays a
  // built-in on arrays and numbers.
  auto objects = [&] {
    return std::any_of(args.pos.begin(), args.pos.end(),
                       [](const Value& a) { return a.kind == VKind::object; });
  };
  // So does a number type's constructor (`Complex.(re, im)`).
  bool number_type = f.kind == VKind::type && f.type_ref()->tag == TypeTag::user &&
                     subtype(*f.type_ref(), *builtin_type(TypeTag::number));
  bool user = f.kind == VKind::object || number_type ||
              (f.kind == VKind::function && !f.fn().methods.empty() &&
               (f.fn().builtin == nullptr || objects()));
  if (user) return broadcast_user(f, std::move(args), pos);
  // `f.(x)` is a new array even where f returns its argument (identity, Float32 of
  // Float32s), as in Julia: a write into it leaves x as it was.
  std::vector<const Object*> inputs;
  for (const Value& a : args.pos) inputs.push_back(a.obj.get());
  ++elementwise_;
  try {
    Value out = call(f, std::move(args), pos);
    --elementwise_;
    bool shared = out.is_tensor() && std::count(inputs.begin(), inputs.end(), out.obj.get()) > 0;
    return shared ? copy_array(out) : out;
  } catch (...) {
    --elementwise_;
    throw;
  }
}

Value Interpreter::broadcast_user(const Value& f, Args args, Pos pos) {
  Args given = args;
  // Inside another such broadcast the result stands for elements still.
  bool nested = std::any_of(args.pos.begin(), args.pos.end(), is_element);
  // A rule for the broadcast itself (Zygote's `@adjoint broadcasted(::typeof(f), x, y)`)
  // takes the whole arrays; without one, f's own rule applies to the elements.
  if (rules_defined_ && tracing() && !nested && f.kind == VKind::function) {
    const Value* broadcasted = global("broadcasted");
    if (broadcasted != nullptr && broadcasted->kind == VKind::function) {
      Args with;
      with.pos.push_back(f);
      with.pos.insert(with.pos.end(), args.pos.begin(), args.pos.end());
      with.kw = args.kw;
      if (std::optional<Value> v = apply_rule(*broadcasted, with, pos)) return *v;
    }
  }
  std::optional<Type> shape;  // of the broadcast, if it has arrays
  for (Value& a : args.pos) {
    if (!a.is_tensor() || a.tensor().number) continue;
    const Type& t = a.tensor().type;
    shape = shape ? Type{t.dtype, shapes::broadcast_shapes(*shape, t)} : t;
    a = with_element(std::move(a), true);
  }
  if (shape) element_shapes_.push_back(shape->shape);
  Value out;
  try {
    out = with_element(call(f, std::move(args), pos), nested);
  } catch (...) {
    if (shape) element_shapes_.pop_back();
    throw;
  }
  if (shape) element_shapes_.pop_back();
  if (!nested && shape && is_number_struct(out)) {
    // Complex elements (`complex.(re, im)`): an array of them is a vector of values,
    // made one element at a time.
    vectors_of_values(given.pos, pos);
    return broadcast_tuples(f, std::move(given), pos);
  }
  if (nested || !shape || !out.is_number()) return out;
  // A result that does not depend on the elements fills the broadcast's shape, as
  // Julia's `(t -> 1.0).(x)` does.
  return prim1<Prim::broadcast_to>({as_tensor(out, dtype_of_value(out))}, {.shape = shape->shape});
}

// Arrays broadcast with complex numbers become vectors of values, whose items the
// broadcast takes one by one: an array of complex numbers is one.
void Interpreter::vectors_of_values(std::vector<Value>& args, Pos pos) {
  for (Value& a : args) {
    if (!a.is_tensor() || a.tensor().number || a.tensor().element) continue;
    if (a.tensor().type.rank() != 1) {
      fail(pos, fmt::format("broadcasting complex numbers with {}: an array of complex "
                            "numbers is a vector of values here, so only vectors take part; "
                            "make it a vector (vec(x)) or work on real(z) and imag(z)",
                            a_type_name(a)));
    }
    a = Value::vector(iterate(a, pos));
  }
}

Value Interpreter::broadcast_tuples(const Value& f, Args args, Pos pos) {
  // f.(xs) over a sequence of slices (`m.(eachslice(x; dims=3))`): map's scan.
  if (args.pos.size() == 1 && args.kw.empty() && is_value_vector(args.pos[0])) {
    if (std::optional<Value> r = trace_map(f, args.pos[0], pos)) return *r;
  }
  // Beside a vector of values (of Complex numbers, say), a vector of the same length
  // gives its elements, as Julia's `x .* mask`.
  if (std::any_of(args.pos.begin(), args.pos.end(), is_value_vector)) {
    size_t n = std::find_if(args.pos.begin(), args.pos.end(), is_value_vector)->tup().items.size();
    for (Value& a : args.pos) {
      bool vector = a.is_tensor() && !a.tensor().number && a.tensor().type.rank() == 1;
      if (vector && static_cast<size_t>(a.tensor().type.shape[0]) == n && n != 1) {
        a = Value::vector(iterate(a, pos));
      }
    }
  }
  // As Julia's: f is called on the items, a tuple of one item or a non-tuple stretching.
  size_t n = 1;
  for (const Value& a : args.pos) {
    if (a.kind != VKind::tuple || a.tup().items.size() == 1) continue;
    size_t k = a.tup().items.size();
    if (n != 1 && k != n) {
      fail(pos, fmt::format("broadcasting tuples of lengths {} and {}: they must match", n, k));
    }
    n = k;
  }
  std::vector<Value> out;
  for (size_t i = 0; i < n; ++i) {
    Args item;
    item.kw = args.kw;
    for (const Value& a : args.pos) {
      bool tuple = a.kind == VKind::tuple;
      item.pos.push_back(tuple ? a.tup().items.at(a.tup().items.size() == 1 ? 0 : i) : a);
    }
    out.push_back(call(f, std::move(item), pos));
  }
  // Over a vector of values, a Vector (of numbers, an array), as Julia's.
  if (std::any_of(args.pos.begin(), args.pos.end(), is_value_vector)) {
    return vector_of(*this, std::move(out));
  }
  return Value::tuple(std::move(out));
}

Value vector_of(Interpreter& in, std::vector<Value> items) {
  bool numbers = !items.empty();
  for (const Value& x : items) numbers = numbers && x.is_number();
  if (!numbers) return Value::vector(std::move(items));
  Args a;
  a.pos = std::move(items);
  return in.call(*in.global("vect"), std::move(a), in.here());
}

Value Interpreter::call(const Value& f, Args args, Pos pos) {
  Pos saved = here_;
  if (pos.known()) here_ = pos;
  Value out;
  try {
    switch (f.kind) {
      case VKind::function:
        if (rules_defined_ && tracing()) {
          if (std::optional<Value> v = apply_rule(f, args, pos)) {
            out = std::move(*v);
            break;
          }
        }
        out = call_function(f.fn(), args, pos, nullptr);
        break;
      case VKind::type:
        out = construct(f, args, pos);
        break;
      case VKind::object: {
        const Value* callable = global("#call");
        if (callable == nullptr) fail(pos, fmt::format("{} is not callable", a_type_name(f)));
        LayerScope scope(*this, f, pos);
        out = call_function(callable->fn(), args, pos, &f);
        break;
      }
      default:
        fail(pos, fmt::format("{} is not callable", a_type_name(f)));
    }
  } catch (const ProgramError&) {
    throw;
  } catch (const UserError& e) {
    fail(pos, e.what());
  }
  here_ = saved;
  return out;
}

Value Interpreter::call_function(const FunctionObj& f, Args& args, Pos pos, const Value* self) {
  Value result = dispatch(f, args, pos, self);
  return f.stops_gradient ? stop_gradient_(*this, result) : result;
}

Value Interpreter::dispatch(const FunctionObj& f, Args& args, Pos pos, const Value* self) {
  if (f.builtin != nullptr && self == nullptr &&
      (f.methods.empty() || only_for_structs(f.methods, args))) {
    return f.builtin(*this, args);
  }
  std::string name = self != nullptr ? type_name_of(*self) : f.name;
  const Method* m = select(f.methods, args, self, pos, name);
  if (m != nullptr) return invoke(*m, args, pos, self, name);
  if (f.builtin != nullptr && self == nullptr) return f.builtin(*this, args);
  bool count_fits = false;
  for (const Method& c : f.methods)
    count_fits = count_fits || accepts_count(*c.def, args.pos.size());
  std::string message =
      count_fits ? fmt::format("no method of {} matches the arguments (", name)
                 : fmt::format("no method of {} takes {} positional argument{}; the call has (",
                               name, args.pos.size(), args.pos.size() == 1 ? "" : "s");
  for (size_t i = 0; i < args.pos.size(); ++i) {
    message += (i > 0 ? ", " : "") + std::string("::") + type_name_of(args.pos[i]);
  }
  message += ")";
  if (!f.methods.empty()) message += "; the methods are:";
  for (const Method& c : f.methods) {
    message += fmt::format("\n  {} at {}", signature(c, name), sources_.where(c.pos));
  }
  fail(pos, message);
}

const Method* Interpreter::select(const std::vector<Method>& methods, const Args& args,
                                  const Value* self, Pos pos, const std::string& name) {
  std::vector<const Method*> fits;
  for (const Method& m : methods) {
    if (applicable(m, args, self) && (m.def->where.empty() || static_params_agree(m, args))) {
      fits.push_back(&m);
    }
  }
  std::vector<const Method*> best;
  for (const Method* m : fits) {
    bool beaten = false;
    for (const Method* o : fits) {
      if (o != m && as_specific(*o, *m) && !as_specific(*m, *o)) beaten = true;
    }
    if (!beaten) best.push_back(m);
  }
  if (best.size() <= 1) return best.empty() ? nullptr : best[0];
  // Equally specific methods: the later definition replaces the earlier, as in Julia,
  // when their signatures are the same.
  const Method* last = best.back();
  for (const Method* m : best) {
    if (!as_specific(*m, *last) || !as_specific(*last, *m)) {
      std::string message = fmt::format("the call of {} is ambiguous between:", name);
      for (const Method* c : best) {
        message += fmt::format("\n  {} at {}", signature(*c, name), sources_.where(c->pos));
      }
      fail(pos, message);
    }
  }
  return last;
}

void Interpreter::push_frame(const std::string& name, Pos pos) {
  if (static_cast<int>(frames_.size()) >= limits_.max_depth) {
    fail(pos, fmt::format("calls nest more than {} deep (runaway recursion?)", limits_.max_depth));
  }
  frames_.push_back({name, pos});
}

Value Interpreter::invoke(const Method& m, Args& args, Pos pos, const Value* self,
                          const std::string& name) {
  auto frame = std::make_shared<Env>();
  frame->parent = m.env;
  frame->function_scope = true;
  if (self != nullptr && m.def->receiver && !m.def->receiver->name.empty()) {
    frame->vars[m.def->receiver->name] = *self;
  }
  push_frame(name, pos);
  Value out;
  try {
    if (!m.def->where.empty()) bind_static_params(m, args, frame);
    bind_params(m, args, frame, pos, name);
    out = eval(*m.def->body, frame);
  } catch (...) {
    // The message already holds the stack; leave the interpreter usable.
    frames_.pop_back();
    signal_ = Signal::none;
    throw;
  }
  if (signal_ == Signal::return_) out = std::move(return_value_);
  signal_ = Signal::none;
  frames_.pop_back();
  return out;
}

void Interpreter::unpack_into(const EnvPtr& frame, const std::vector<Unpack>& parts, const Value& v,
                              Pos pos) {
  std::vector<Value> items = iterate(v, pos);
  if (items.size() < parts.size()) fail(pos, "too few values to unpack");
  for (size_t k = 0; k < parts.size(); ++k) {
    if (parts[k].parts.empty()) {
      frame->vars[parts[k].name] = items[k];
    } else {
      unpack_into(frame, parts[k].parts, items[k], pos);
    }
  }
}

void Interpreter::bind_params(const Method& m, Args& args, const EnvPtr& frame, Pos pos,
                              const std::string& name) {
  const Function& def = *m.def;
  size_t next = 0;
  for (const Param& p : def.params) {
    Value v;
    if (p.splat) {
      std::vector<Value> rest(args.pos.begin() + static_cast<long>(next), args.pos.end());
      next = args.pos.size();
      v = Value::tuple(std::move(rest));
    } else if (next < args.pos.size()) {
      v = args.pos[next++];
    } else {
      v = eval(*p.default_value, frame);
    }
    if (!p.unpack.empty()) {
      unpack_into(frame, p.unpack, v, p.pos);
    } else if (!p.name.empty()) {
      frame->vars[p.name] = std::move(v);
    }
  }
  std::vector<bool> used(args.kw.size(), false);
  for (const Param& p : def.kwparams) {
    if (p.splat) continue;
    size_t k = 0;
    while (k < args.kw.size() && args.kw[k].first != p.name) ++k;
    if (k < args.kw.size()) {
      frame->vars[p.name] = args.kw[k].second;
      used[k] = true;
    } else if (p.default_value) {
      frame->vars[p.name] = eval(*p.default_value, frame);
    } else {
      fail_call(pos, fmt::format("{} requires the keyword argument '{}'", name, p.name));
    }
  }
  std::vector<std::string> names;
  std::vector<Value> rest;
  for (size_t k = 0; k < args.kw.size(); ++k) {
    if (used[k]) continue;
    names.push_back(args.kw[k].first);
    rest.push_back(args.kw[k].second);
  }
  if (!def.kwparams.empty() && def.kwparams.back().splat) {
    frame->vars[def.kwparams.back().name] = Value::named_tuple(std::move(names), std::move(rest));
  } else if (!names.empty()) {
    fail_call(pos, fmt::format("{} has no keyword argument '{}'", name, names[0]));
  }
}

Value Interpreter::eval_function(const Expr& e, const EnvPtr& env) {
  const Function& def = *e.function;
  Method m;
  m.def = &def;
  m.pos = e.pos;
  m.env = env;
  if (captured_.empty() || captured_.back().lock() != env) captured_.push_back(env);
  for (const Param& p : def.params) {
    m.types.push_back(p.type ? eval_type(*p.type, env, &def.where) : nullptr);
  }
  if (def.receiver) m.receiver = eval_type(*def.receiver->type, env, &def.where);
  auto add_to = [&](const FunctionObj& f) { f.methods.push_back(m); };
  if (e.kind == Kind::lambda || (def.name.empty() && !def.receiver)) {
    auto f = std::make_shared<FunctionObj>();
    f->name = "#anonymous";
    f->methods.push_back(std::move(m));
    Value v;
    v.kind = VKind::function;
    v.obj = std::move(f);
    return v;
  }
  std::string name = def.receiver ? "#call" : strip_module(def.name);
  if (name == "rrule" || name == "#adjoint" || name == "#scalar_rule") rules_defined_ = true;
  // The nearest binding of the name: a function gains a method; a struct type gains an
  // outer constructor. Callable-struct methods all live in the global function "#call".
  EnvPtr home = def.receiver ? globals_ : env;
  if (name != def.name && !def.receiver) {  // `Flux.dropout(x) = ...` extends the prelude's
    auto it = shadowed_.find(name);
    if (it != shadowed_.end()) {
      add_to(it->second.fn());
      return it->second;
    }
  }
  Value* existing = nullptr;
  // A function defined inside a function is local to it, as in Julia: look no further
  // than the enclosing function's scope.
  for (Env* scope = home.get(); scope != nullptr && existing == nullptr;
       scope = scope->parent.get()) {
    auto it = scope->vars.find(name);
    if (it != scope->vars.end()) existing = &it->second;
    if (scope->function_scope) break;
  }
  if (existing != nullptr && existing->kind == VKind::function) {
    if (def.receiver || home != globals_ || !shadows(m, def.name, *existing)) {
      add_to(existing->fn());
      return *existing;
    }
    shadowed_.emplace(name, *existing);
  }
  if (existing != nullptr && existing->kind == VKind::type &&
      existing->type_ref()->tag == TypeTag::user) {
    const Value* ctor = global("#ctor:" + existing->type_ref()->name);
    add_to(ctor->fn());
    return *existing;
  }
  auto f = std::make_shared<FunctionObj>();
  f->name = name;
  f->methods.push_back(std::move(m));
  Value v;
  v.kind = VKind::function;
  v.obj = std::move(f);
  home->vars[name] = v;
  return v;
}

bool Interpreter::shadows(const Method& m, const std::string& written,
                          const Value& existing) const {
  // Only functions written in the prelude: built-ins (operators, getindex, ...) gain the
  // program's methods, as do methods that take a type of the program's
  // (`iterate(c::Countdown)`): Julia would want `Base.iterate`, but such a method cannot
  // clash with the prelude's, and the program means to extend.
  const FunctionObj& f = existing.fn();
  if (in_prelude(m.pos.file) || written.find('.') != std::string::npos ||
      imported_.contains(written) || f.builtin != nullptr || f.methods.empty() ||
      std::any_of(m.types.begin(), m.types.end(), names_program_type))
    return false;
  return std::all_of(f.methods.begin(), f.methods.end(),
                     [&](const Method& old) { return in_prelude(old.pos.file); });
}

// "no constructor of Conv takes the arguments (::Array{Float32, 4}, ...); the
// constructors are:" and each, the implied one of the fields first.
std::string Interpreter::no_constructor(const TypeObj& t, const Value* ctor, const Args& args) {
  std::string message = fmt::format("no constructor of {} takes the arguments (", t.name);
  for (size_t i = 0; i < args.pos.size(); ++i) {
    message += (i > 0 ? ", ::" : "::") + type_name_of(args.pos[i]);
  }
  if (!args.kw.empty()) message += args.pos.empty() ? "; keywords" : "; and keywords";
  message += fmt::format("); the constructors are:\n  {}(", t.name);
  for (size_t i = 0; i < t.fields.size(); ++i) {
    message +=
        (i > 0 ? ", " : "") + t.fields[i] + (t.field_types[i] ? "::" + t.field_types[i]->name : "");
  }
  message += "), one argument per field";
  if (ctor != nullptr) {
    for (const Method& c : ctor->fn().methods) {
      message += fmt::format("\n  {} at {}", signature(c, t.name), sources_.where(c.pos));
    }
  }
  return message;
}

}  // namespace ytape::tracer
