#include "tracer/interp/value.h"

#include <fmt/format.h>

#include "tape/error.h"

namespace ytape::tracer {

Value with_element(Value v, bool on) {
  if (!v.is_tensor() || v.tensor().element == on) return v;
  auto t = std::make_shared<TensorObj>(v.tensor());
  t->element = on;
  v.obj = std::move(t);
  return v;
}

Value copy_array(const Value& v) {
  Value out = v;
  out.obj = std::make_shared<TensorObj>(v.tensor());
  return out;
}

Value Value::boolean(bool v) {
  Value out;
  out.kind = VKind::boolean;
  out.b = v;
  return out;
}

Value Value::integer(int64_t v) {
  Value out;
  out.kind = VKind::integer;
  out.i = v;
  return out;
}

Value Value::floating(double v, DType dtype, bool weak) {
  Value out;
  out.kind = VKind::float_;
  out.f = dtype == DType::f32 ? static_cast<float>(v) : v;
  out.dtype = dtype;
  out.weak = weak;
  return out;
}

Value Value::string(std::string text) {
  Value out;
  out.kind = VKind::string;
  auto s = std::make_shared<StringObj>();
  s->text = std::move(text);
  out.obj = std::move(s);
  return out;
}

Value Value::symbol(std::string name) {
  Value out = string(std::move(name));
  out.kind = VKind::symbol;
  return out;
}

Value Value::tuple(std::vector<Value> items) {
  Value out;
  out.kind = VKind::tuple;
  auto t = std::make_shared<TupleObj>();
  t->items = std::move(items);
  out.obj = std::move(t);
  return out;
}

Value Value::vector(std::vector<Value> items) {
  Value out = tuple(std::move(items));
  std::const_pointer_cast<TupleObj>(std::static_pointer_cast<const TupleObj>(out.obj))->vector =
      true;
  return out;
}

Value Value::named_tuple(std::vector<std::string> names, std::vector<Value> items) {
  Value out;
  out.kind = VKind::named_tuple;
  auto t = std::make_shared<TupleObj>();
  t->items = std::move(items);
  t->names = std::move(names);
  out.obj = std::move(t);
  return out;
}

Value Value::type(TypeRef t) {
  Value out;
  out.kind = VKind::type;
  out.obj = std::move(t);
  return out;
}

Value Value::range(int64_t start, int64_t step, int64_t stop) {
  Value out;
  out.kind = VKind::range;
  auto r = std::make_shared<RangeObj>();
  r->start = start;
  r->step = step;
  r->stop = stop;
  out.obj = std::move(r);
  return out;
}

Value Value::concrete(Tensor t, bool number) {
  Value out;
  out.kind = VKind::tensor;
  auto obj = std::make_shared<TensorObj>();
  obj->type = t.type();
  obj->data = std::move(t);
  obj->number = number && obj->type.rank() == 0;
  out.obj = std::move(obj);
  return out;
}

Value Value::traced(Var v, Type type, bool number) {
  Value out;
  out.kind = VKind::tensor;
  auto obj = std::make_shared<TensorObj>();
  obj->number = number && type.rank() == 0;
  obj->type = std::move(type);
  obj->traced = true;
  obj->var = v;
  out.obj = std::move(obj);
  return out;
}

bool Value::is_number() const {
  switch (kind) {
    case VKind::boolean:
    case VKind::integer:
    case VKind::float_:
      return true;
    case VKind::tensor:
      return tensor().number;
    default:
      return false;
  }
}

int64_t RangeObj::length() const {
  if (step > 0) return stop < start ? 0 : (stop - start) / step + 1;
  return stop > start ? 0 : (start - stop) / -step + 1;
}

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
                       info.tag == TypeTag::integer || info.tag == TypeTag::abstract_array;
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

}  // namespace

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
  for (auto [name, rank] : {std::pair{"Array", -1},
                            {"Vector", 1},
                            {"Matrix", 2},
                            {"AbstractVector", 1},
                            {"AbstractMatrix", 2}}) {
    auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::abstract_array));
    t->name = name;
    t->rank = rank;
    out.emplace_back(name, std::move(t));
  }
  return out;
}

TypeRef dtype_type(DType dtype) {
  return builtin_type(dtype_tag(dtype));
}

bool subtype(const TypeObj& a, const TypeObj& b) {
  if (b.tag == TypeTag::any) return true;
  if (a.tag == TypeTag::user) {
    if (b.tag == TypeTag::user && &a == &b) return true;
    return a.super && subtype(*a.super, b);
  }
  if (b.tag == TypeTag::user) return false;
  if (!tag_below(a.tag, b.tag)) return false;
  if (b.tag != TypeTag::abstract_array) return true;
  if (b.rank >= 0 && a.rank != b.rank) return false;
  return !b.has_eltype || (a.has_eltype && a.eltype == b.eltype);
}

bool isa(const Value& v, const TypeObj& t) {
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
      return subtype(*builtin_type(TypeTag::symbol), t);
    case VKind::tuple:
      return subtype(*builtin_type(TypeTag::tuple), t);
    case VKind::named_tuple:
      return subtype(*builtin_type(TypeTag::named_tuple), t);
    case VKind::function:
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

std::string type_name_of(const Value& v) {
  switch (v.kind) {
    case VKind::boolean:
      return "Bool";
    case VKind::integer:
      return "Int64";
    case VKind::float_:
      return v.dtype == DType::f32 ? "Float32" : "Float64";
    case VKind::object:
      return v.object().type->name;
    case VKind::tuple:
      if (is_value_vector(v)) return "Vector{Any}";
      return "Tuple";
    case VKind::function:
      return fmt::format("typeof({})", v.fn().name);
    case VKind::type:
      return fmt::format("Type{{{}}}", v.type_ref()->name);
    case VKind::tensor: {
      const TensorObj& x = v.tensor();
      std::string el = dtype_type(x.type.dtype)->name;
      if (x.number) return el;
      return fmt::format("Array{{{}, {}}}", el, x.type.rank());
    }
    default:
      return builtin_type(v.kind == VKind::string    ? TypeTag::string
                          : v.kind == VKind::symbol  ? TypeTag::symbol
                          : v.kind == VKind::tuple   ? TypeTag::tuple
                          : v.kind == VKind::range   ? TypeTag::range
                          : v.kind == VKind::nothing ? TypeTag::nothing
                                                     : TypeTag::named_tuple)
          ->name;
  }
}

double as_double(const Value& v) {
  switch (v.kind) {
    case VKind::boolean:
      return v.b ? 1 : 0;
    case VKind::integer:
      return static_cast<double>(v.i);
    case VKind::float_:
      return v.f;
    default:
      internal_error("as_double of a {}", type_name_of(v));
  }
}

}  // namespace ytape::tracer
