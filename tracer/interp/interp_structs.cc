// Structs: their definitions (type parameters taken from fields), and construction of
// instances: the implied constructor, outer ones, `@kwdef` keywords, parametric
// instantiations (`Complex{Float64}(1, 2)`), arrays (`Vector{T}(undef, n)`) and `Val`.
#include <fmt/format.h>

#include <algorithm>

#include "tape/error.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

// Per field of a struct, the type parameter it is declared as exactly (`re::T`), or -1;
// empty unless every parameter has a field (TypeObj::field_params).
std::vector<int> field_params(const StructDef& def) {
  std::vector<int> out(def.fields.size(), -1);
  for (size_t p = 0; p < def.type_params.size(); ++p) {
    const Expr& param = *def.type_params[p];
    const Expr& var = param.kind == Kind::call ? *param.args[1] : param;
    bool found = false;
    for (size_t f = 0; f < def.fields.size(); ++f) {
      const Expr* type = def.fields[f].type.get();
      if (type == nullptr || type->kind != Kind::id || type->name != var.name) continue;
      out[f] = static_cast<int>(p);
      found = true;
    }
    if (!found) return {};
  }
  return def.type_params.empty() ? std::vector<int>{} : out;
}

}  // namespace

Value Interpreter::eval_struct(const Expr& e, const EnvPtr& env) {
  auto t = std::make_shared<TypeObj>();
  t->tag = TypeTag::user;
  t->program = !in_prelude(e.pos.file);
  // Flux's layers are defined in these files of the prelude; the program's own structs may
  // be layers of its own. A call of one is a scope of the ops it records (Tape::scopes).
  std::string_view file = sources_.file(e.pos.file).path;
  t->layer = t->program || file == "prelude/layers.jl" || file == "prelude/recurrent.jl" ||
             file == "prelude/flux.jl";
  const Expr* super = nullptr;
  if (e.kind == Kind::abstract_type) {
    t->name = e.name;
    t->is_abstract = true;
    if (!e.args.empty()) super = e.args[0].get();
  } else {
    t->name = e.struct_def->name;
    t->is_mutable = e.struct_def->is_mutable;
    if (e.struct_def->kwdef) t->kwdef = e.struct_def.get();
    for (const Field& f : e.struct_def->fields) {
      t->fields.push_back(f.name);
      // Only field types naming a known type constrain the implied constructor; type
      // parameters (`W::Matrix{T}`) and unknown names do not.
      const Expr* head = f.type == nullptr             ? nullptr
                         : f.type->kind == Kind::curly ? f.type->args[0].get()
                                                       : f.type.get();
      const Value* known = head != nullptr && head->kind == Kind::id ? global(head->name) : nullptr;
      bool typed = known != nullptr && known->kind == VKind::type;
      t->field_types.push_back(typed ? eval_type(*f.type, env, &e.struct_def->type_params)
                                     : nullptr);
    }
    super = e.struct_def->supertype.get();
    t->field_params = field_params(*e.struct_def);
  }
  if (super != nullptr) {
    TypeRef s = eval_type(*super, env, nullptr);
    // A struct may be a Number or a Real (the prelude's Complex); other built-in
    // supertypes have values of their own layout here (arrays, tuples) and are not taken.
    bool number = s->tag == TypeTag::number || s->tag == TypeTag::real;
    if (s->tag == TypeTag::user || number) t->super = s;
  }
  auto ctor = std::make_shared<FunctionObj>();
  ctor->name = t->name;
  Value fv;
  fv.kind = VKind::function;
  fv.obj = std::move(ctor);
  define_global("#ctor:" + t->name, std::move(fv));
  define_global(t->name, Value::type(t));
  return Value();
}

void Interpreter::kwdef_fields(const TypeObj& t, Args& args, Pos pos) {
  // Each field from its keyword, or its default evaluated now, in order, where the
  // earlier fields are bound (as keyword defaults are); unknown keywords are errors.
  for (const auto& [name, v] : args.kw) {
    if (std::find(t.fields.begin(), t.fields.end(), name) == t.fields.end()) {
      fail(pos, fmt::format("{} has no field '{}'; its fields are {}", t.name, name,
                            fmt::join(t.fields, ", ")));
    }
  }
  auto scope = std::make_shared<Env>();
  scope->parent = globals_;
  scope->function_scope = true;
  // The defaults run in a call of T, as in the keyword constructor Julia's @kwdef
  // defines: a default that makes a T again nests calls until the depth limit stops it.
  push_frame(t.name, pos);
  try {
    for (const Field& f : t.kwdef->fields) {
      auto given = std::find_if(args.kw.begin(), args.kw.end(),
                                [&](const auto& kv) { return kv.first == f.name; });
      if (given != args.kw.end()) {
        args.pos.push_back(given->second);
      } else if (f.default_value != nullptr) {
        args.pos.push_back(eval(*f.default_value, scope));
      } else {
        fail_call(pos, fmt::format("{} requires the keyword argument '{}'", t.name, f.name));
      }
      scope->vars[f.name] = args.pos.back();
    }
  } catch (...) {
    frames_.pop_back();
    throw;
  }
  frames_.pop_back();
  args.kw.clear();
}

Value Interpreter::construct_array(const TypeObj& t, Args& args, Pos pos) {
  // `Vector{Float32}(undef, n)`, `Matrix{T}(undef, m, n)`, `Array{T, N}(undef, dims...)`,
  // `Vector{T}()`: Julia leaves an undef array's contents unset; here they are zeros.
  bool undef = !args.pos.empty() && args.pos[0].kind == VKind::object &&
               args.pos[0].object().type->name == "UndefInitializer";
  if (!undef && !(args.pos.empty() && t.rank == 1)) {
    if (args.pos.size() == 1) {
      Args conv;
      conv.pos = {Value::type(std::make_shared<TypeObj>(t)), args.pos[0]};
      return call(*global("convert"), std::move(conv), pos);
    }
    fail(pos, fmt::format("{}(...) takes undef and the dims, as {}(undef, 3), or an array "
                          "to convert",
                          t.name, t.name));
  }
  if (!t.has_eltype)
    fail(pos, fmt::format("{}(undef, ...) needs an element type: {}{{Float32}}", t.name, t.name));
  Args dims;
  dims.pos.push_back(Value::type(dtype_type(t.eltype)));
  if (args.pos.empty()) dims.pos.push_back(Value::integer(0));
  for (size_t i = 1; i < args.pos.size(); ++i) dims.pos.push_back(args.pos[i]);
  int64_t rank = static_cast<int64_t>(dims.pos.size()) - 1;
  if (t.rank >= 0 && rank != t.rank) {
    fail(pos, fmt::format("{} has {} dims, given {}", t.name, t.rank, rank));
  }
  return call(*global("zeros"), std::move(dims), pos);
}

// `Complex{Float64}(1, 2)`, `ComplexF64(1)`: the struct's constructors make an instance,
// whose fields its parameters name are then converted to the parameters' types.
Value Interpreter::construct_instantiated(const TypeRef& t, Args& args, Pos pos) {
  Value made = construct(Value::type(t->generic), args, pos);
  bool instance = made.kind == VKind::object && made.object().type->tag == TypeTag::user &&
                  subtype(*made.object().type, *t->generic);
  if (!instance) return made;
  std::vector<Value> fields = made.object().fields;
  const std::vector<int>& field_params = t->generic->field_params;
  for (size_t f = 0; f < fields.size() && f < field_params.size(); ++f) {
    if (field_params[f] < 0) continue;
    fields[f] = convert_to(t->params.at(static_cast<size_t>(field_params[f])), fields[f], pos);
  }
  TypeRef type = instance_type(t, fields);
  return Value::instance(std::move(type), std::move(fields), program_pos(pos));
}

Value Interpreter::construct(const Value& type, Args& args, Pos pos) {
  TypeRef t = type.type_ref();
  if (t->tag == TypeTag::user && t->generic) return construct_instantiated(t, args, pos);
  if (t->tag == TypeTag::user) {
    if (t->kwdef != nullptr && args.pos.empty()) {
      kwdef_fields(*t, args, pos);  // T(; a = 1, b) of `@kwdef struct T`
    }
    const Value* ctor = global("#ctor:" + t->name);
    const Method* m =
        ctor == nullptr ? nullptr : select(ctor->fn().methods, args, nullptr, pos, t->name);
    // The implied positional constructor, typed by the declared field types, is more
    // specific than an outer constructor with a splat (`Chain(layers...)`), as in Julia.
    bool positional = args.pos.size() == t->fields.size() && args.kw.empty() && !t->is_abstract;
    for (size_t i = 0; positional && i < args.pos.size(); ++i) {
      positional = t->field_types[i] == nullptr || isa(args.pos[i], *t->field_types[i]);
    }
    bool splat = m != nullptr && !m->def->params.empty() && m->def->params.back().splat;
    if (m != nullptr && !(splat && positional)) return invoke(*m, args, pos, nullptr, t->name);
    if (t->is_abstract)
      fail(pos, fmt::format("cannot make an instance of abstract type {}", t->name));
    if (args.pos.size() != t->fields.size() || !args.kw.empty()) {
      fail(pos, no_constructor(*t, ctor, args));
    }
    if (!positional) {
      // Julia's other implied constructor converts each argument to its field's type
      // (`epochs::Int = 1e3` of a @kwdef struct is 1000).
      std::string message = no_constructor(*t, ctor, args);
      try {
        for (size_t i = 0; i < args.pos.size(); ++i) {
          if (t->field_types[i] != nullptr && !isa(args.pos[i], *t->field_types[i]))
            args.pos[i] = convert_to(t->field_types[i], args.pos[i], pos);
        }
      } catch (const UserError&) {
        fail(pos, message);
      }
    }
    TypeRef instance = instance_type(t, args.pos);
    return Value::instance(std::move(instance), std::move(args.pos), program_pos(pos));
  }
  if (t->tag == TypeTag::abstract_array) return construct_array(*t, args, pos);
  if (t->tag == TypeTag::symbol && t->val && args.pos.empty() && args.kw.empty())
    return *t->val;  // Colon(): `:`
  if (t->tag == TypeTag::val) return construct_val(t, args, pos);
  if (t->tag == TypeTag::symbol && !t->val && args.pos.size() > 1 && args.kw.empty()) {
    // Symbol(a, b, ...): of the strings of its arguments joined, as Julia's.
    Value text = call(*global("string"), std::move(args), pos);
    args = Args{{std::move(text)}, {}};
  }
  if (t->tag == TypeTag::symbol && !t->val && args.pos.size() == 1 &&
      args.pos[0].kind == VKind::string)
    return Value::symbol(args.pos[0].text());
  const Value* convert = global("convert");
  Args conv;
  conv.pos.push_back(type);
  for (Value& a : args.pos) conv.pos.push_back(std::move(a));
  return call(*convert, std::move(conv), pos);
}

}  // namespace ytape::tracer
