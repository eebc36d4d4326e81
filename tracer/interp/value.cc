#include "tracer/interp/value.h"

#include <fmt/format.h>

#include "tape/error.h"
#include "tape/float16.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

namespace {

// A new tensor object with t's value, not linked as a view or to views.
std::shared_ptr<TensorObj> detached(const TensorObj& t) {
  auto copy = std::make_shared<TensorObj>(t);
  copy->view = nullptr;
  copy->views.clear();
  return copy;
}

}  // namespace

TupleObj::~TupleObj() {
  release_values(items);
}
StructObj::~StructObj() {
  release_values(fields);
}
FunctionObj::~FunctionObj() {
  for (Method& m : methods) release_later(std::move(m.env));
}
TensorObj::~TensorObj() {
  release_later(std::move(view));
}
TensorObj::ViewOf::~ViewOf() {
  release_later(std::move(parent));
  release_values(index);
}

Value with_element(Value v, bool on) {
  if (!v.is_tensor() || v.tensor().element == on) return v;
  auto t = detached(v.tensor());
  t->element = on;
  v.obj = std::move(t);
  return v;
}

Value with_slice_of(Value v, Value parent, int dim, int64_t index) {
  auto t = detached(v.tensor());
  t->slice_of =
      std::make_shared<const TensorObj::SliceOf>(TensorObj::SliceOf{std::move(parent), dim, index});
  v.obj = std::move(t);
  return v;
}

Value copy_array(const Value& v) {
  Value out = v;
  out.obj = detached(v.tensor());
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
  out.f = dtype == DType::f32   ? static_cast<float>(v)
          : dtype == DType::f16 ? f16_to_f32(f16_from_double(v))
                                : v;
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

Value Value::like(const TupleObj& t, std::vector<Value> items) {
  if (!t.names.empty()) return named_tuple(t.names, std::move(items));
  return t.vector ? vector(std::move(items)) : tuple(std::move(items));
}

Value Value::instance(TypeRef type, std::vector<Value> fields, Pos made, std::string path) {
  Value out;
  out.kind = VKind::object;
  auto obj = std::make_shared<StructObj>();
  obj->type = std::move(type);
  obj->fields = std::move(fields);
  obj->made = made;
  obj->path = std::move(path);
  out.obj = std::move(obj);
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

namespace {
uint32_t trace_level = 0;
}  // namespace

void set_trace_level(uint32_t level) {
  trace_level = level;
}

Value Value::traced(Var v, Type type, bool number, uint32_t level) {
  Value out;
  out.kind = VKind::tensor;
  auto obj = std::make_shared<TensorObj>();
  obj->number = number && type.rank() == 0;
  obj->type = std::move(type);
  obj->traced = true;
  obj->var = v;
  obj->level = level == kCurrentLevel ? trace_level : level;
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
  // The distance in unsigned 64 bits, where it is exact (it is below 2^64). A count Int64
  // cannot hold is Julia's OverflowError of Base.checked_length (Julia 1.7's `length`
  // wraps around instead, to a count a for loop would take as true: 0 for
  // typemin(Int):typemax(Int)).
  int64_t from = step > 0 ? start : stop, to = step > 0 ? stop : start;
  if (to < from) return 0;
  uint64_t distance = static_cast<uint64_t>(to) - static_cast<uint64_t>(from);
  uint64_t magnitude = step > 0 ? static_cast<uint64_t>(step) : 0 - static_cast<uint64_t>(step);
  if (magnitude == 1 && distance > INT64_MAX) {
    user_error("OverflowError: {} - {} overflowed for type Int64", to, from);
  }
  uint64_t quotient = distance / magnitude;
  if (quotient >= INT64_MAX)
    user_error("OverflowError: {} + 1 overflowed for type Int64", quotient);
  return static_cast<int64_t>(quotient) + 1;
}

std::string type_name_of(const Value& v) {
  switch (v.kind) {
    case VKind::boolean:
      return "Bool";
    case VKind::integer:
      return "Int64";
    case VKind::float_:
      return v.dtype == DType::f32 ? "Float32" : v.dtype == DType::f16 ? "Float16" : "Float64";
    case VKind::object:
      return v.object().type->name;
    case VKind::tuple:
      if (is_value_vector(v)) return "Vector{" + value_vector_eltype(v.tup())->name + "}";
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

DType dtype_of_value(const Value& v) {
  if (v.is_tensor()) return v.tensor().type.dtype;
  if (v.kind == VKind::float_) return v.dtype;
  return v.kind == VKind::boolean ? DType::boolean : DType::i64;
}

const Value* keyword(const Args& args, std::string_view name) {
  for (const auto& [k, v] : args.kw) {
    if (k == name) return &v;
  }
  return nullptr;
}

Value range_array(const RangeObj& r) {
  Tensor values(Type{DType::i64, {r.length()}});
  for (int64_t k = 0; k < r.length(); ++k) values.data<int64_t>()[k] = r.at(k);
  return Value::concrete(std::move(values));
}

}  // namespace ytape::tracer
