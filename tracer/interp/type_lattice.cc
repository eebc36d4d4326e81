// The type lattice: the built-in types, `Union`, `Tuple{...}` and `Val{x}`, subtyping,
// `isa`, and the specificity that dispatch ranks methods by.
#include <fmt/format.h>

#include <algorithm>
#include <map>

#include "tape/error.h"
#include "tracer/interp/nesting.h"
#include "tracer/interp/value.h"

namespace ytape::tracer {

namespace {

struct BuiltinTypeInfo {
  TypeTag tag;
  const char* name;
  TypeTag super;
};

constexpr BuiltinTypeInfo kBuiltinTypes[] = {
    {TypeTag::any, "Any", TypeTag::any},
    {TypeTag::number, "Number", TypeTag::any},
    {TypeTag::real, "Real", TypeTag::number},
    {TypeTag::abstract_float, "AbstractFloat", TypeTag::real},
    {TypeTag::integer, "Integer", TypeTag::real},
    {TypeTag::float32, "Float32", TypeTag::abstract_float},
    {TypeTag::float64, "Float64", TypeTag::abstract_float},
    {TypeTag::float16, "Float16", TypeTag::abstract_float},
    {TypeTag::int64, "Int64", TypeTag::integer},
    {TypeTag::boolean, "Bool", TypeTag::integer},
    {TypeTag::abstract_array, "AbstractArray", TypeTag::any},
    {TypeTag::string, "String", TypeTag::any},
    {TypeTag::symbol, "Symbol", TypeTag::any},
    {TypeTag::tuple, "Tuple", TypeTag::any},
    {TypeTag::named_tuple, "NamedTuple", TypeTag::any},
    {TypeTag::function, "Function", TypeTag::any},
    {TypeTag::nothing, "Nothing", TypeTag::any},
    {TypeTag::range, "UnitRange", TypeTag::any},
    {TypeTag::type, "Type", TypeTag::any},
    {TypeTag::union_, "Union", TypeTag::any},
    {TypeTag::val, "Val", TypeTag::any},
};

const std::vector<TypeRef>& builtin_types() {
  static const std::vector<TypeRef> types = [] {
    std::vector<TypeRef> out;
    for (const BuiltinTypeInfo& info : kBuiltinTypes) {
      auto t = std::make_shared<TypeObj>();
      t->name = info.name;
      t->tag = info.tag;
      t->is_abstract = info.tag == TypeTag::any || info.tag == TypeTag::number ||
                       info.tag == TypeTag::real || info.tag == TypeTag::abstract_float ||
                       info.tag == TypeTag::integer || info.tag == TypeTag::abstract_array ||
                       info.tag == TypeTag::union_ || info.tag == TypeTag::val;
      out.push_back(std::move(t));
    }
    return out;
  }();
  return types;
}

TypeTag builtin_super(TypeTag tag) {
  for (const BuiltinTypeInfo& info : kBuiltinTypes) {
    if (info.tag == tag) return info.super;
  }
  return TypeTag::any;
}

TypeTag dtype_tag(DType d) {
  switch (d) {
    case DType::f32:
      return TypeTag::float32;
    case DType::f64:
      return TypeTag::float64;
    case DType::i64:
      return TypeTag::int64;
    case DType::boolean:
      return TypeTag::boolean;
    case DType::f16:
      return TypeTag::float16;
  }
  return TypeTag::any;
}

// Whether the built-in tag `a` is `b` or below it.
bool tag_below(TypeTag a, TypeTag b) {
  while (true) {
    if (a == b || b == TypeTag::any) return true;
    if (a == TypeTag::any) return false;
    a = builtin_super(a);
  }
}

// Whether two type parameters of Val are the same value (`Val{2}` is not `Val{2.0}`).
bool same_val(const Value& a, const Value& b) {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case VKind::integer:
      return a.i == b.i;
    case VKind::boolean:
      return a.b == b.b;
    case VKind::float_:
      return a.dtype == b.dtype && a.f == b.f;
    case VKind::symbol:
      return a.text() == b.text();
    case VKind::type:
      return subtype(*a.type_ref(), *b.type_ref()) && subtype(*b.type_ref(), *a.type_ref());
    default:
      return true;  // nothing
  }
}

bool param_below(const TypeRef& a, const TypeRef& b) {
  return b == nullptr || (a != nullptr && subtype(*a, *b));
}

// Tuple types: plain `Tuple` (any tuple), `Tuple{A, B}` (has_params) or `NTuple{N, T}`
// with N free (vararg: any number of T).
bool tuple_below(const TypeObj& a, const TypeObj& b) {
  if (!b.has_params && !b.vararg) return true;
  if (b.vararg) {
    if (!a.has_params && !a.vararg) return false;
    return std::all_of(a.params.begin(), a.params.end(),
                       [&](const TypeRef& p) { return param_below(p, b.params[0]); });
  }
  if (!a.has_params || a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!param_below(a.params[i], b.params[i])) return false;
  }
  return true;
}

// `Type{A}` <: `Type{B}` when A is B, or below it for `Type{<:B}`.
bool type_below(const TypeObj& a, const TypeObj& b) {
  const TypeObj &x = *a.params[0], &y = *b.params[0];
  if (!subtype(x, y)) return false;
  return b.covariant || (!a.covariant && subtype(y, x));
}

// A tuple value of a `Tuple{...}` or `NTuple` type; vectors of values are not tuples.
bool tuple_isa(const Value& v, const TypeObj& t) {
  if (v.kind != VKind::tuple || is_value_vector(v)) return false;
  const std::vector<Value>& items = v.tup().items;
  if (t.has_params && items.size() != t.params.size()) return false;
  for (size_t i = 0; i < items.size(); ++i) {
    const TypeRef& p = t.vararg ? t.params[0] : t.params[i];
    if (p != nullptr && !isa(items[i], *p)) return false;
  }
  return true;
}

// The struct type a user type instantiates, or the type itself.
const TypeObj& root_struct(const TypeObj& t) {
  return t.generic ? *t.generic : t;
}

// Whether user type `a` is `b`: the same type, or an instantiation of the struct `b`, or
// both instantiations of one struct with the same parameters (Julia's types are invariant
// in them: `Complex{Int}` is not a `Complex{Real}`). An instance whose parameters are not
// known here (a field holds a function) has the struct type, which parameters do not
// constrain, as before there were any.
bool same_struct(const TypeObj& a, const TypeObj& b) {
  if (&a == &b) return true;
  if (&root_struct(a) != &root_struct(b)) return false;
  if (!b.generic || !a.generic) return true;
  if (a.params.size() != b.params.size()) return false;
  for (size_t i = 0; i < a.params.size(); ++i) {
    if (!subtype(*a.params[i], *b.params[i]) || !subtype(*b.params[i], *a.params[i])) return false;
  }
  return true;
}

// Julia shows the instantiations of Complex of its float types by their aliases.
std::string instance_name(const TypeObj& generic, const std::vector<TypeRef>& params) {
  if (generic.name == "Complex" && params.size() == 1) {
    for (auto [tag, alias] : {std::pair{TypeTag::float64, "ComplexF64"},
                              {TypeTag::float32, "ComplexF32"},
                              {TypeTag::float16, "ComplexF16"}}) {
      if (params[0]->tag == tag) return alias;
    }
  }
  std::vector<std::string> names;
  for (const TypeRef& p : params) names.push_back(p->name);
  return fmt::format("{}{{{}}}", generic.name, fmt::join(names, ", "));
}

// The type of a value that may be a struct's type parameter: a number's or an instance's;
// null for others.
TypeRef param_type_of(const Value& v) {
  switch (v.kind) {
    case VKind::boolean:
      return builtin_type(TypeTag::boolean);
    case VKind::integer:
      return builtin_type(TypeTag::int64);
    case VKind::float_:
      return dtype_type(v.dtype);
    case VKind::object:
      return v.object().type;
    case VKind::tensor:
      return v.tensor().number || v.tensor().element ? dtype_type(v.tensor().type.dtype) : nullptr;
    default:
      return nullptr;
  }
}

}  // namespace

void set_nesting(TypeObj& t) {
  size_t inner = 0;
  for (const TypeRef& p : t.params) {
    if (p != nullptr) inner = std::max(inner, p->nesting);
  }
  if (t.val && t.val->kind == VKind::type) inner = std::max(inner, t.val->type_ref()->nesting);
  if (inner >= kMaxValueNesting) {
    user_error(
        "cannot make a type nested more than {} levels deep (Val{{Val{{...}}}} or "
        "Tuple{{Tuple{{...}}}} wrapped in a loop)",
        kMaxValueNesting);
  }
  t.nesting = inner + 1;
}

TypeRef instantiate(const TypeRef& generic, const std::vector<TypeRef>& params) {
  TypeRef root = generic->generic ? generic->generic : generic;
  TypeObj check;  // before the name, which holds every parameter's
  check.params = params;
  set_nesting(check);
  std::string name = instance_name(*root, params);
  // One object per instantiation, so that instances compare by type as any struct's do
  // (`===`); each holds its struct type, whose address therefore stays its own.
  thread_local std::map<std::pair<const TypeObj*, std::string>, TypeRef> made;
  TypeRef& t = made[{root.get(), name}];
  if (t == nullptr) {
    auto made_type = std::make_shared<TypeObj>(*root);
    made_type->generic = root;
    made_type->name = std::move(name);
    made_type->params = params;
    made_type->nesting = check.nesting;
    t = std::move(made_type);
  }
  return t;
}

size_t TypeObj::param_count() const {
  int most = -1;
  for (int p : field_params) most = std::max(most, p);
  return static_cast<size_t>(most + 1);
}

TypeRef instance_type(const TypeRef& t, const std::vector<Value>& fields) {
  const TypeObj& g = root_struct(*t);
  if (g.field_params.empty() || fields.size() != g.field_params.size()) return t;
  std::vector<TypeRef> params(g.param_count());
  for (size_t f = fields.size(); f-- > 0;) {
    if (g.field_params[f] >= 0)
      params[static_cast<size_t>(g.field_params[f])] = param_type_of(fields[f]);
  }
  if (std::find(params.begin(), params.end(), nullptr) != params.end()) return t;
  if (t->generic && same_struct(*instantiate(t, params), *t)) return t;
  return instantiate(t, params);
}

TypeRef value_vector_eltype(const TupleObj& t) {
  TypeRef any = builtin_type(TypeTag::any);
  if (t.items.empty() || !is_number_struct(t.items[0])) return any;
  TypeRef type = t.items[0].object().type;
  for (const Value& x : t.items) {
    if (x.kind != VKind::object || x.object().type != type) return any;
  }
  return type;
}

bool is_number_struct(const Value& v) {
  return v.kind == VKind::object && subtype(*v.object().type, *builtin_type(TypeTag::number));
}

std::string complex_note(const Value& v) {
  auto is_complex = [](const Value& x) {
    return x.kind == VKind::object && x.object().type->generic &&
           x.object().type->generic->name == "Complex";
  };
  bool complex =
      is_complex(v) ||
      (is_value_vector(v) && std::any_of(v.tup().items.begin(), v.tup().items.end(), is_complex));
  if (!complex) return "";
  return "; complex numbers have no dtype on the tape: a Complex is a struct of its real "
         "and imaginary parts, with + - * / ^, abs, abs2, angle, conj, exp and sqrt, and an "
         "array of them a vector of values; write this step on real(z) and imag(z)";
}

// Colon, the type of `:` (a symbol here): below Symbol, with `:` its one value.
TypeRef colon_type() {
  static const TypeRef colon = [] {
    auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::symbol));
    t->name = "Colon";
    t->val = Value::symbol(":");
    return t;
  }();
  return colon;
}

TypeRef builtin_type(TypeTag tag) {
  for (const TypeRef& t : builtin_types()) {
    if (t->tag == tag) return t;
  }
  internal_error("no built-in type for tag {}", static_cast<int>(tag));
}

std::vector<std::pair<std::string, TypeRef>> builtin_type_names() {
  std::vector<std::pair<std::string, TypeRef>> out;
  for (const TypeRef& t : builtin_types()) out.emplace_back(t->name, t);
  out.emplace_back("Int", builtin_type(TypeTag::int64));
  out.emplace_back("AbstractRange", builtin_type(TypeTag::range));
  out.emplace_back("AbstractString", builtin_type(TypeTag::string));
  // `NTuple{N, T}` is a tuple type; alone, as Julia's, any tuple.
  auto ntuple = std::make_shared<TypeObj>(*builtin_type(TypeTag::tuple));
  ntuple->name = "NTuple";
  out.emplace_back("NTuple", std::move(ntuple));
  out.emplace_back("Colon", colon_type());
  std::map<std::string, TypeRef> arrays;
  for (auto [name, rank] : {std::pair{"Array", -1},
                            {"Vector", 1},
                            {"Matrix", 2},
                            {"AbstractVector", 1},
                            {"AbstractMatrix", 2}}) {
    auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::abstract_array));
    t->name = name;
    t->rank = rank;
    arrays[name] = t;
    out.emplace_back(name, std::move(t));
  }
  // Base's unions of the two; `AbstractVecOrMat{T}` gives each member the parameters
  // (Interpreter::eval_curly).
  out.emplace_back("AbstractVecOrMat",
                   make_union({arrays["AbstractVector"], arrays["AbstractMatrix"]}));
  out.emplace_back("VecOrMat", make_union({arrays["Vector"], arrays["Matrix"]}));
  // OneHotArrays' type: onehotbatch and onehot give Bool arrays here, so methods for one-hot
  // inputs take those.
  auto onehot = std::make_shared<TypeObj>(*arrays["Array"]);
  onehot->name = "OneHotArray";
  onehot->has_eltype = true;
  onehot->eltype = DType::boolean;
  out.emplace_back("OneHotArray", std::move(onehot));
  return out;
}

TypeRef dtype_type(DType dtype) {
  return builtin_type(dtype_tag(dtype));
}

namespace {

// Whether function type `t` (`typeof(f)`) is the type of the function object `f`: the
// same object, by owner, so a freed function's type matches no new one.
bool is_type_of(const TypeObj& t, const std::shared_ptr<const Object>& f) {
  return !t.function.owner_before(f) && !f.owner_before(t.function);
}

}  // namespace

bool subtype(const TypeObj& a, const TypeObj& b) {
  if (b.tag == TypeTag::any) return true;
  if (b.tag == TypeTag::symbol && b.val) return a.tag == TypeTag::symbol && a.val;  // Colon
  if (b.function_of) {  // typeof(f): only itself is below it
    return a.function_of && !a.function.owner_before(b.function) &&
           !b.function.owner_before(a.function);
  }
  if (a.tag == TypeTag::union_) {
    return std::all_of(a.params.begin(), a.params.end(),
                       [&](const TypeRef& m) { return subtype(*m, b); });
  }
  if (b.tag == TypeTag::union_) {
    return std::any_of(b.params.begin(), b.params.end(),
                       [&](const TypeRef& m) { return subtype(a, *m); });
  }
  if (a.tag == TypeTag::user) {
    if (b.tag == TypeTag::user && same_struct(a, b)) return true;
    return a.super && subtype(*a.super, b);
  }
  if (b.tag == TypeTag::user) return false;
  if (!tag_below(a.tag, b.tag)) return false;
  if (b.tag == TypeTag::tuple) return tuple_below(a, b);
  if (b.tag == TypeTag::val) return !b.val || (a.val && same_val(*a.val, *b.val));
  if (b.tag == TypeTag::type) return !b.has_params || (a.has_params && type_below(a, b));
  if (b.tag != TypeTag::abstract_array) return true;
  if (b.rank >= 0 && a.rank != b.rank) return false;
  return !b.has_eltype || (a.has_eltype && a.eltype == b.eltype);
}

bool isa(const Value& v, const TypeObj& t) {
  if (t.tag == TypeTag::union_) {
    return std::any_of(t.params.begin(), t.params.end(),
                       [&](const TypeRef& m) { return isa(v, *m); });
  }
  if (t.tag == TypeTag::tuple && (t.has_params || t.vararg)) return tuple_isa(v, t);
  if (t.tag == TypeTag::type && t.has_params) {
    if (v.kind != VKind::type) return false;
    const TypeObj &x = *v.type_ref(), &p = *t.params[0];
    return subtype(x, p) && (t.covariant || subtype(p, x));
  }
  switch (v.kind) {
    case VKind::boolean:
      return subtype(*builtin_type(TypeTag::boolean), t);
    case VKind::integer:
      return subtype(*builtin_type(TypeTag::int64), t);
    case VKind::float_:
      return subtype(*dtype_type(v.dtype), t);
    case VKind::string:
      return subtype(*builtin_type(TypeTag::string), t);
    case VKind::symbol:
      if (t.tag == TypeTag::symbol && t.val) return v.text() == ":";  // Colon
      return subtype(*builtin_type(TypeTag::symbol), t);
    case VKind::tuple: {
      if (!v.tup().vector) return subtype(*builtin_type(TypeTag::tuple), t);
      // A vector of values is a Vector{Any}.
      TypeObj array = *builtin_type(TypeTag::abstract_array);
      array.rank = 1;
      return subtype(array, t);
    }
    case VKind::named_tuple:
      return subtype(*builtin_type(TypeTag::named_tuple), t);
    case VKind::function:
      if (t.function_of) return is_type_of(t, v.obj);
      return subtype(*builtin_type(TypeTag::function), t);
    case VKind::nothing:
      return subtype(*builtin_type(TypeTag::nothing), t);
    case VKind::range:
      return subtype(*builtin_type(TypeTag::range), t);
    case VKind::type:
      return subtype(*builtin_type(TypeTag::type), t);
    case VKind::object:
      return subtype(*v.object().type, t);
    case VKind::tensor: {
      const TensorObj& x = v.tensor();
      // An element of a broadcast function's argument is a number, as Julia dispatches it.
      if (x.number || x.element) return subtype(*dtype_type(x.type.dtype), t);
      TypeObj array = *builtin_type(TypeTag::abstract_array);
      array.has_eltype = true;
      array.eltype = x.type.dtype;
      array.rank = x.type.rank();
      return subtype(array, t);
    }
  }
  return false;
}

bool as_specific_type(const TypeObj& a, const TypeObj& b) {
  if (subtype(a, b)) return true;
  // Julia's rule for unions (jl_type_morespecific): a Union beats b through a member that
  // does, unless b is below the Union or b, a Union too, has a member that beats a.
  if (a.tag != TypeTag::union_ || subtype(b, a)) return false;
  auto beats = [](const TypeObj& x, const TypeObj& y) {
    return as_specific_type(x, y) && !as_specific_type(y, x);
  };
  bool member =
      std::any_of(a.params.begin(), a.params.end(), [&](const TypeRef& m) { return beats(*m, b); });
  if (!member) return false;
  return b.tag != TypeTag::union_ || std::none_of(b.params.begin(), b.params.end(),
                                                  [&](const TypeRef& m) { return beats(*m, a); });
}

TypeRef make_union(const std::vector<TypeRef>& members) {
  std::vector<TypeRef> flat;
  for (const TypeRef& m : members) {
    if (m->tag == TypeTag::union_) {
      flat.insert(flat.end(), m->params.begin(), m->params.end());
    } else {
      flat.push_back(m);
    }
  }
  std::vector<TypeRef> kept;
  for (const TypeRef& m : flat) {
    if (std::any_of(kept.begin(), kept.end(), [&](const TypeRef& k) { return subtype(*m, *k); }))
      continue;
    std::erase_if(kept, [&](const TypeRef& k) { return subtype(*k, *m); });
    kept.push_back(m);
  }
  if (kept.empty())
    user_error("Union{{}} has no values; give it members, as Union{{Int, Nothing}}");
  if (kept.size() == 1) return kept[0];
  auto u = std::make_shared<TypeObj>(*builtin_type(TypeTag::union_));
  std::vector<std::string> names;
  for (const TypeRef& k : kept) names.push_back(k->name);
  u->name = fmt::format("Union{{{}}}", fmt::join(names, ", "));
  u->params = std::move(kept);
  set_nesting(*u);
  return u;
}

TypeRef make_val_type(const Value& x) {
  switch (x.kind) {
    case VKind::integer:
    case VKind::boolean:
    case VKind::float_:
    case VKind::symbol:
    case VKind::nothing:
    case VKind::type:
      break;
    default:
      user_error("Val({}): the value of a Val must be a number, Bool, Symbol, nothing or a type",
                 a_type_name(x));
  }
  auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::val));
  Value v = x;
  v.weak = false;
  t->val = v;
  set_nesting(*t);  // before the name, which holds x's
  t->name = fmt::format("Val{{{}}}", show(v));
  return t;
}

}  // namespace ytape::tracer
