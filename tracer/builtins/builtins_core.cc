// Core built-ins: printing, types and conversion, tuples and small collection functions.
#include <fmt/format.h>

#include <cmath>
#include <limits>
#include <span>

#include "tape/error.h"
#include "tape/float16.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

namespace {

void need(const Args& args, size_t n, std::string_view name) {
  if (args.pos.size() != n) {
    user_error("{} takes {} argument{}, got {}", name, n, n == 1 ? "" : "s", args.pos.size());
  }
}

// A traced print's text of `v`: the static parts as Julia prints them, and a "{}" per
// traced tensor for the print op to fill at run time. Float32 arrays say so first, as
// Julia writes Float32[1.0, 2.0]. A container inside itself is a circular reference, as
// show writes it.
void print_piece(const Value& v, bool top, Nesting& nesting, std::string& format,
                 std::vector<Value>& tensors) {
  if (v.is_tensor() && v.tensor().traced) {
    const TensorObj& t = v.tensor();
    if (!t.number && t.type.dtype == DType::f32) format += "Float32";
    if (!t.number && t.type.dtype == DType::f16) format += "Float16";
    format += "{}";
    tensors.push_back(v);
    return;
  }
  if (v.kind == VKind::tuple || v.kind == VKind::named_tuple || v.kind == VKind::object) {
    bool object = v.kind == VKind::object, vector = is_value_vector(v);
    const std::vector<Value>& items = object ? v.object().fields : v.tup().items;
    std::string open = object ? v.object().type->name + "(" : "(", close = ")";
    if (vector) open = items.empty() ? "Any[" : "[", close = "]";
    format += open;
    if (size_t up = nesting.levels_up(v.obj.get()); up > 0) {
      format += Nesting::circular_reference(up) + close;
      return;
    }
    if (items.size() == 1 && !object && !vector) close = ",)";
    NestingScope scope(nesting, v.kind == VKind::named_tuple ? nullptr : v.obj.get(), "print");
    for (size_t i = 0; i < items.size(); ++i) {
      if (i > 0) format += ", ";
      if (v.kind == VKind::named_tuple) format += v.tup().names[i] + " = ";
      print_piece(items[i], false, nesting, format, tensors);
    }
    format += close;
    return;
  }
  format += top ? print_text(v) : show(v);
}

// Records a print op, also of static text only: the tape prints it on every run, as the
// function would on every call, and not once while it is traced.
void record_print(Interpreter& in, const std::vector<Value>& tensors, const std::string& format) {
  in.record(Prim::print, tensors, AttrsOf<Prim::print>{.format = format}.to_attrs());
}

// When tracing, printing is an effect of the tape: one `print` op per call, with the
// static parts in its format and the tensors as arguments.
Value print_values(Interpreter& in, Args& args, bool newline) {
  if (!in.tracing()) {
    std::string text;
    for (const Value& v : args.pos) text += in.printed(v);
    in.emit(newline ? text + "\n" : text);
    return Value();
  }
  std::string format;
  std::vector<Value> tensors;
  for (const Value& v : args.pos) {
    // An instance with a show method of its type prints as that writes it, unless it holds
    // traced values, which only the print op knows: then its fields, filled in at run time.
    // Values without traced ones print as they do untraced.
    size_t before = tensors.size();
    std::string fields;
    Nesting nesting;
    print_piece(v, true, nesting, fields, tensors);
    format += tensors.size() == before ? in.printed(v) : fields;
  }
  record_print(in, tensors, format);
  return Value();
}

Value print(Interpreter& in, Args& args) {
  return print_values(in, args, false);
}
Value println(Interpreter& in, Args& args) {
  return print_values(in, args, true);
}

Value string(Interpreter& in, Args& args) {
  std::string text;
  for (const Value& v : args.pos) text += in.printed(v);
  return Value::string(std::move(text));
}

Value isa_(Interpreter&, Args& args) {
  need(args, 2, "isa");
  if (args.pos[1].kind != VKind::type) user_error("the right side of isa must be a type");
  return Value::boolean(isa(args.pos[0], *args.pos[1].type_ref()));
}

// A <: B and B >: A of types: whether A is a subtype of B (eltype(x) <: AbstractFloat).
template <bool Super>
Value subtype_of(Interpreter&, Args& args) {
  need(args, 2, Super ? ">:" : "<:");
  if (args.pos[0].kind != VKind::type || args.pos[1].kind != VKind::type)
    user_error("'{}' compares two types, got {} and {}",
               Super ? ">:" : "<:", a_type_name(args.pos[0]), a_type_name(args.pos[1]));
  const TypeObj &a = *args.pos[0].type_ref(), &b = *args.pos[1].type_ref();
  return Value::boolean(Super ? subtype(b, a) : subtype(a, b));
}

bool type_dtype(const TypeObj& t, DType* d) {
  switch (t.tag) {
    case TypeTag::float32:
      *d = DType::f32;
      return true;
    case TypeTag::float64:
      *d = DType::f64;
      return true;
    case TypeTag::float16:
      *d = DType::f16;
      return true;
    case TypeTag::int64:
      *d = DType::i64;
      return true;
    case TypeTag::boolean:
      *d = DType::boolean;
      return true;
    default:
      return false;
  }
}

Value typeof_(Interpreter& in, Args& args);

// Tuple{Int64, Float64}: the type of each item (Any where it has none here), for a tuple
// `depth` tuples deep in the one typeof was given.
Value tuple_type(Interpreter& in, const Value& v, size_t depth) {
  if (depth >= kMaxValueNesting) nesting_error("take the type of");
  auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::tuple));
  t->has_params = true;
  std::vector<std::string> names;
  for (const Value& item : v.tup().items) {
    Value type;
    if (item.kind == VKind::function || item.kind == VKind::type) {
      type = Value::type(builtin_type(TypeTag::any));
    } else if (item.kind == VKind::tuple && !item.tup().vector) {
      type = tuple_type(in, item, depth + 1);
    } else {
      Args one{{item}, {}};
      type = typeof_(in, one);
    }
    t->params.push_back(type.type_ref());
    names.push_back(t->params.back()->name);
  }
  set_nesting(*t);
  t->name = fmt::format("Tuple{{{}}}", fmt::join(names, ", "));
  return Value::type(std::move(t));
}

Value typeof_(Interpreter& in, Args& args) {
  need(args, 1, "typeof");
  const Value& v = args.pos[0];
  if (v.kind == VKind::object) return Value::type(v.object().type);
  if (v.kind == VKind::float_) return Value::type(dtype_type(v.dtype));
  if (v.kind == VKind::integer) return Value::type(builtin_type(TypeTag::int64));
  if (v.kind == VKind::boolean) return Value::type(builtin_type(TypeTag::boolean));
  if (v.is_tensor() && (v.tensor().number || v.tensor().element)) {
    return Value::type(dtype_type(v.tensor().type.dtype));
  }
  if (v.is_tensor() || is_value_vector(v)) {
    // Vector{Float32}, Matrix{Float64}, Array{Bool, 3}; a vector of values is Vector{Any}.
    auto t = std::make_shared<TypeObj>(
        *builtin_type(v.is_tensor() ? TypeTag::abstract_array : TypeTag::tuple));
    t->name = type_name_of(v);
    if (v.is_tensor()) {
      int rank = v.tensor().type.rank();
      std::string el = dtype_type(v.tensor().type.dtype)->name;
      if (rank <= 2) t->name = fmt::format("{}{{{}}}", rank == 1 ? "Vector" : "Matrix", el);
      t->has_eltype = true;
      t->eltype = v.tensor().type.dtype;
      t->rank = rank;
    }
    return Value::type(std::move(t));
  }
  if (v.kind == VKind::tuple) return tuple_type(in, v, 0);
  if (v.kind == VKind::function) {
    // typeof(sin): the type of sin alone, below Function, named as Julia shows it.
    auto t = std::make_shared<TypeObj>(*builtin_type(TypeTag::function));
    t->name = fmt::format("typeof({})", v.fn().name);
    t->function_of = true;
    t->function = v.obj;
    return Value::type(std::move(t));
  }
  if (v.kind == VKind::symbol && v.text() == ":") return Value::type(colon_type());
  TypeTag tag = v.kind == VKind::string        ? TypeTag::string
                : v.kind == VKind::symbol      ? TypeTag::symbol
                : v.kind == VKind::range       ? TypeTag::range
                : v.kind == VKind::nothing     ? TypeTag::nothing
                : v.kind == VKind::named_tuple ? TypeTag::named_tuple
                                               : TypeTag::any;
  if (tag == TypeTag::any) user_error("typeof of {} is not supported", a_type_name(v));
  return Value::type(builtin_type(tag));
}

// The element type of an array, or a number's type.
Value eltype(Interpreter& in, Args& args) {
  need(args, 1, "eltype");
  const Value& v = args.pos[0];
  if (v.is_tensor()) return Value::type(dtype_type(v.tensor().type.dtype));
  // A vector of values is a Vector{Any}, or of its items' type where they are numbers of
  // one struct type (a Vector{ComplexF64}); a tuple's items are of the union of their types.
  if (is_value_vector(v)) return Value::type(value_vector_eltype(v.tup()));
  if (v.kind == VKind::range) return Value::type(builtin_type(TypeTag::int64));
  if ((v.kind == VKind::tuple || v.kind == VKind::named_tuple) && !v.tup().items.empty()) {
    std::vector<TypeRef> types;
    for (const Value& item : v.tup().items) {
      Args one;
      one.pos = {item};
      types.push_back(typeof_(in, one).type_ref());
    }
    return Value::type(make_union(types));
  }
  return typeof_(in, args);
}

// The spacing of floats of T at |x| (Julia's eps(x)).
template <typename T>
T spacing(T x) {
  x = std::abs(x);
  return std::nextafter(x, std::numeric_limits<T>::infinity()) - x;
}

// eps.(x) of a concrete float array: the spacing at each element (a traced array's would
// need the exponent of each element, which no primitive gives).
Value eps_each(const Value& v) {
  const TensorObj& t = v.tensor();
  if (t.traced) user_error("eps.(x) of a traced array is not supported: eps of each element");
  Tensor out(t.type);
  if (t.type.dtype == DType::f32) {
    std::span<const float> in = t.data.span<float>();
    std::span<float> o = out.span<float>();
    for (size_t i = 0; i < in.size(); ++i) o[i] = spacing(in[i]);
  } else {
    std::span<const double> in = t.data.span<double>();
    std::span<double> o = out.span<double>();
    for (size_t i = 0; i < in.size(); ++i) o[i] = spacing(in[i]);
  }
  return Value::concrete(std::move(out), t.number);
}

// eps(Float32), eps(Float64), eps(): the spacing of floats at 1; eps(x): at x; of an
// array (eps.(x)), at each element.
Value eps(Interpreter&, Args& args) {
  if (args.pos.empty()) return Value::floating(0x1p-52, DType::f64);
  need(args, 1, "eps");
  const Value& v = args.pos[0];
  DType d;
  if (v.kind == VKind::type && type_dtype(*v.type_ref(), &d) && is_float(d)) {
    return Value::floating(d == DType::f32 ? 0x1p-23 : d == DType::f16 ? 0x1p-10 : 0x1p-52, d);
  }
  if ((v.kind == VKind::float_ && v.dtype == DType::f16) ||
      (v.is_tensor() && v.tensor().type.dtype == DType::f16)) {
    user_error("eps of a Float16 value is not supported (eps(Float16) is)");
  }
  if (v.kind == VKind::float_) {
    double at = v.dtype == DType::f32 ? static_cast<double>(spacing(static_cast<float>(v.f)))
                                      : spacing(v.f);
    return Value::floating(at, v.dtype);
  }
  if (v.is_tensor() && is_float(v.tensor().type.dtype)) return eps_each(v);
  user_error("eps takes Float16, Float32, Float64 or a float number, got {}", a_type_name(v));
}

// Julia's repr: the value as `show` writes it, in a string.
Value repr(Interpreter&, Args& args) {
  need(args, 1, "repr");
  return Value::string(show(args.pos[0]));
}

// convert(T, x) and T(x): numbers and arrays to an element type.
Value convert(Interpreter& in, Args& args) {
  need(args, 2, "convert");
  if (args.pos[0].kind != VKind::type) user_error("convert takes a type first");
  const TypeObj& t = *args.pos[0].type_ref();
  const Value& x = args.pos[1];
  if (isa(x, t) && !(x.kind == VKind::float_ && x.weak)) return x;
  // Tuple(v) of a Vector{Any} or a named tuple: its items.
  if (t.tag == TypeTag::tuple && !t.has_params &&
      (x.kind == VKind::tuple || x.kind == VKind::named_tuple))
    return Value::tuple(x.tup().items);
  DType d;
  if (!type_dtype(t, &d) && t.tag == TypeTag::abstract_array && t.has_eltype)
    d = t.eltype;
  else if (!type_dtype(t, &d))
    user_error("cannot convert {} to {}", a_type_name(x), t.name);
  // Concrete values go into Int and Bool exactly or not at all (InexactError); a traced
  // value's are known only when the tape runs.
  if (x.is_tensor() && !x.tensor().traced && !is_float(d)) return convert_exact(in, x, d);
  if (x.is_tensor()) return in.as_tensor(x, d);
  if (!x.is_number())
    user_error("cannot convert {} to {}{}", a_type_name(x), t.name, complex_note(x));
  double v = as_double(x);
  switch (d) {
    case DType::f32:
    case DType::f64:
    case DType::f16:
      return Value::floating(v, d);
    case DType::i64:
      if (x.kind == VKind::integer) return x;
      if (x.kind == VKind::boolean) return Value::integer(x.b);
      if (!exact_int64(v)) user_error("InexactError: Int64({})", show(x));
      return Value::integer(static_cast<int64_t>(v));
    case DType::boolean:
      if (v != 0 && v != 1) user_error("InexactError: Bool({})", show(x));
      return Value::boolean(v != 0);
  }
  return x;
}

// round, floor, ceil or trunc of a traced float (number, array or element of f.(x)): the
// rounding primitives, exact at any magnitude. trunc has none: the float-to-i64 convert
// truncates toward zero, exactly for |x| < 2^63.
Value traced_rounding(Interpreter& in, const Value& x, int mode, DType to) {
  DType d = x.tensor().type.dtype;
  if (!is_float(d)) return in.as_tensor(x, to);
  static constexpr Prim kPrims[] = {Prim::round, Prim::floor, Prim::ceil};
  Value t = mode < 3 ? in.prim1(kPrims[mode], {x}) : in.as_tensor(in.as_tensor(x, DType::i64), d);
  return in.as_tensor(t, to);
}

// round, floor, ceil, trunc of numbers and of arrays: round(x), round(Int, x), round(x;
// digits=n), with Julia's ties to even. Of a traced value they record the primitives
// (above); digits= is an error there.
template <int Mode>  // 0 round, 1 floor, 2 ceil, 3 trunc
Value rounding(Interpreter& in, Args& args) {
  static constexpr const char* kNames[] = {"round", "floor", "ceil", "trunc"};
  const char* name = kNames[Mode];
  need_args(args, 1, 2, name);
  DType to = DType::f64;
  bool to_type = args.pos.size() == 2;
  if (to_type && (args.pos[0].kind != VKind::type || !type_dtype(*args.pos[0].type_ref(), &to))) {
    user_error("{}(T, x) takes a number type first", name);
  }
  const Value& x = args.pos.back();
  const Value* digits = keyword(args, "digits");
  double scale =
      digits != nullptr && digits->kind == VKind::integer ? std::pow(10.0, digits->i) : 1;
  auto r = [&](double v) {
    v *= scale;
    v = Mode == 0   ? std::nearbyint(v)
        : Mode == 1 ? std::floor(v)
        : Mode == 2 ? std::ceil(v)
                    : std::trunc(v);
    return v / scale;
  };
  if (x.kind == VKind::integer && !to_type) return x;
  if (is_element(x) || (x.is_tensor() && x.tensor().traced)) {
    if (digits != nullptr) {
      user_error("{} with digits of a traced value is not supported (without digits it is)", name);
    }
    return traced_rounding(in, x, Mode, to_type ? to : x.tensor().type.dtype);
  }
  if (x.is_tensor() && !x.tensor().number) {
    const Tensor& t = x.tensor().data;
    DType d = to_type ? to : (is_float(t.dtype()) ? t.dtype() : DType::f64);
    Tensor out(Type{DType::f64, t.shape()});
    for (int64_t k = 0; k < t.size(); ++k) {
      double v = r(element_value(t, k));
      if (d == DType::i64 && !exact_int64(v)) {
        DType from = is_float(t.dtype()) ? t.dtype() : DType::f64;
        user_error("InexactError: trunc(Int64, {})", show(Value::floating(v, from)));
      }
      out.data<double>()[k] = v;
    }
    return in.as_tensor(Value::concrete(std::move(out)), d);
  }
  if (!x.is_number()) user_error("{} takes a number or an array, got {}", name, a_type_name(x));
  double v = r(as_double(to_scalar(x)));
  if (to_type && to == DType::i64 && !exact_int64(v)) {
    // Julia rounds, then truncates to the type (round(Int, x) is trunc(Int, round(x))).
    DType d = x.kind == VKind::float_ ? x.dtype : DType::f64;
    user_error("InexactError: trunc(Int64, {})", show(Value::floating(v, d)));
  }
  if (to_type) {
    Args conv;
    conv.pos = {args.pos[0], Value::floating(v, DType::f64)};
    return in.call(*in.global("convert"), std::move(conv), in.here());
  }
  return Value::floating(v, x.kind == VKind::float_ ? x.dtype : DType::f64,
                         x.kind == VKind::float_ && x.weak);
}

Value float_(Interpreter& in, Args& args) {
  need(args, 1, "float");
  const Value& x = args.pos[0];
  if (x.kind == VKind::integer || x.kind == VKind::boolean)
    return Value::floating(as_double(x), DType::f64, true);
  if (x.is_tensor() && !is_float(x.tensor().type.dtype)) return in.as_tensor(x, DType::f64);
  DType d;
  // float(T) of a type: Float64 for Int and Bool, as Julia's; a float type is itself.
  if (x.kind == VKind::type && type_dtype(*x.type_ref(), &d) && !is_float(d))
    return Value::type(dtype_type(DType::f64));
  return x;
}

Value zero_one(Interpreter& in, const Value& x, double v) {
  if (x.kind == VKind::integer) return Value::integer(static_cast<int64_t>(v));
  if (x.kind == VKind::float_) return Value::floating(v, x.dtype, x.weak);
  if (x.kind == VKind::boolean) return Value::boolean(v != 0);
  if (is_value_vector(x) && v == 0) {
    // zero(x) of a vector of values (Complex numbers): zero of each item.
    std::vector<Value> items;
    for (const Value& item : x.tup().items) {
      items.push_back(in.call(*in.global("zero"), Args{{item}, {}}, in.here()));
    }
    return Value::vector(std::move(items));
  }
  if (x.is_tensor() && !x.tensor().number && !x.tensor().element) {
    // zero(x) of an array: an array of zeros of its type, as Julia's.
    const Type& t = x.tensor().type;
    return in.prim1<Prim::fill>({}, {.value = v, .dtype = t.dtype, .shape = t.shape});
  }
  if (x.kind == VKind::type || x.is_tensor()) {
    // A number's type, or a traced number's (zero(x[1])) or an element's in f.(x).
    TypeRef type = x.is_tensor() ? dtype_type(x.tensor().type.dtype) : x.type_ref();
    DType d;
    if (!type_dtype(*type, &d)) user_error("zero/one of type {}", type->name);
    if (d == DType::i64) return Value::integer(static_cast<int64_t>(v));
    if (d == DType::boolean) return Value::boolean(v != 0);
    return Value::floating(v, d);
  }
  user_error("zero/one of {} is not supported", a_type_name(x));
}

Value zero(Interpreter& in, Args& args) {
  need(args, 1, "zero");
  return zero_one(in, args.pos[0], 0);
}
Value one(Interpreter& in, Args& args) {
  need(args, 1, "one");
  return zero_one(in, args.pos[0], 1);
}

Value identity(Interpreter&, Args& args) {
  need(args, 1, "identity");
  return args.pos[0];
}

Value tuple(Interpreter&, Args& args) {
  return Value::tuple(args.pos);
}

Value error(Interpreter&, Args& args) {
  std::string text;
  for (const Value& v : args.pos) text += print_text(v);
  throw UserError(text);
}

// `@assert c` (the parser passes c, its source text and the message, if any): true goes on;
// a traced condition is decided on the example values and guarded, as `if` is.
Value assert_macro(Interpreter& in, Args& args) {
  const Value& c = args.pos[0];
  bool is_bool = c.kind == VKind::boolean ||
                 (c.is_tensor() && c.tensor().number && c.tensor().type.dtype == DType::boolean);
  if (!is_bool) user_error("@assert takes a Bool condition, got {}", a_type_name(c));
  if (in.truth(c, in.here())) return Value();
  std::string message = args.pos.size() > 2 ? print_text(args.pos[2]) : args.pos[1].text();
  throw UserError("AssertionError: " + message);
}

// `@show e` (the parser passes e's source text and value): prints "e = " and the value as
// Julia's show writes it, and returns the value.
Value show_macro(Interpreter& in, Args& args) {
  const Value& v = args.pos[1];
  if (!in.tracing()) {
    in.emit(args.pos[0].text() + " = " + show(v) + "\n");
    return v;
  }
  std::string format = args.pos[0].text() + " = ";
  std::vector<Value> tensors;
  Nesting nesting;
  print_piece(v, false, nesting, format, tensors);
  record_print(in, tensors, format);
  return v;
}

Value keys(Interpreter&, Args& args) {
  need(args, 1, "keys");
  const Value& v = args.pos[0];
  if (v.kind != VKind::named_tuple) user_error("keys of {} is not supported", a_type_name(v));
  std::vector<Value> out;
  for (const std::string& name : v.tup().names) out.push_back(Value::symbol(name));
  return Value::tuple(std::move(out));
}

Value values(Interpreter&, Args& args) {
  need(args, 1, "values");
  const Value& v = args.pos[0];
  if (v.kind == VKind::tuple) return v;  // a tuple's values are the tuple, as Julia's
  if (v.kind != VKind::named_tuple) user_error("values of {} is not supported", a_type_name(v));
  return Value::tuple(v.tup().items);
}

Value getfield(Interpreter&, Args& args) {
  need(args, 2, "getfield");
  const Value &v = args.pos[0], &f = args.pos[1];
  if (v.kind == VKind::object && f.kind == VKind::symbol) {
    const StructObj& s = v.object();
    for (size_t i = 0; i < s.fields.size(); ++i) {
      if (s.type->fields[i] == f.text()) return s.fields[i];
    }
  }
  if (v.kind == VKind::object && f.kind == VKind::integer && f.i >= 1 &&
      f.i <= static_cast<int64_t>(v.object().fields.size())) {
    return v.object().fields[f.i - 1];
  }
  if ((v.kind == VKind::tuple || v.kind == VKind::named_tuple) && f.kind == VKind::integer &&
      f.i >= 1 && f.i <= static_cast<int64_t>(v.tup().items.size())) {
    return v.tup().items[f.i - 1];
  }
  user_error("getfield: no field {} in {}", show(f), a_type_name(v));
}

// nfields(x): the fields of a struct instance, the items of a tuple, else 0.
Value nfields(Interpreter&, Args& args) {
  need(args, 1, "nfields");
  const Value& v = args.pos[0];
  if (v.kind == VKind::object)
    return Value::integer(static_cast<int64_t>(v.object().fields.size()));
  if (v.kind == VKind::tuple || v.kind == VKind::named_tuple) {
    return Value::integer(static_cast<int64_t>(v.tup().items.size()));
  }
  return Value::integer(0);
}

// fieldnames(T): the field names of a struct type, as symbols.
Value fieldnames(Interpreter&, Args& args) {
  need(args, 1, "fieldnames");
  if (args.pos[0].kind != VKind::type) user_error("fieldnames takes a type");
  std::vector<Value> names;
  for (const std::string& n : args.pos[0].type_ref()->fields) names.push_back(Value::symbol(n));
  return Value::tuple(std::move(names));
}

// getfields(x) (ConstructionBase's): the fields of a struct instance as a named tuple, so
// that code can walk any struct (Optimisers.setup and update do), rebuilding it with
// new_instance(typeof(x), ...).
Value getfields(Interpreter&, Args& args) {
  need(args, 1, "getfields");
  const Value& v = args.pos[0];
  if (v.kind == VKind::named_tuple) return v;
  if (v.kind != VKind::object)
    user_error("getfields takes a struct instance, got {}", a_type_name(v));
  return Value::named_tuple(v.object().type->fields, v.object().fields);
}

// setfield!(x, :name, v), as `x.name = v`: returns v.
Value setfield(Interpreter& in, Args& args) {
  need(args, 3, "setfield!");
  if (args.pos[1].kind != VKind::symbol) {
    user_error("setfield!: the field is named by a Symbol (:name), got {}",
               a_type_name(args.pos[1]));
  }
  in.set_field(args.pos[0], args.pos[1].text(), args.pos[2]);
  return args.pos[2];
}

// new_instance(T, fields...): an instance of struct T with these fields, as the implied
// constructor makes it, whatever outer constructors T has: the prelude's stand-in for
// Julia's `new` in an inner constructor (Dense(w, false) must not call itself again).
Value new_instance(Interpreter& in, Args& args) {
  if (args.pos.empty() || args.pos[0].kind != VKind::type ||
      args.pos[0].type_ref()->tag != TypeTag::user || args.pos[0].type_ref()->is_abstract) {
    user_error("new_instance takes a struct type, then its fields");
  }
  TypeRef t = args.pos[0].type_ref();
  if (args.pos.size() != t->fields.size() + 1) {
    user_error("{} has {} fields, given {}", t->name, t->fields.size(), args.pos.size() - 1);
  }
  std::vector<Value> fields(args.pos.begin() + 1, args.pos.end());
  TypeRef type = instance_type(t, fields);
  return Value::instance(std::move(type), std::move(fields), in.program_here());
}

// `new(args...)` of an inner constructor (the parser writes it `new_struct(T, args...)`):
// as new_instance, each argument first converted to its field's declared type where it
// is not one, as Julia's `new` (Pos2(2) of a Float64 field holds 2.0).
Value new_struct(Interpreter& in, Args& args) {
  if (!args.pos.empty() && args.pos[0].kind == VKind::type) {
    const TypeObj& t = *args.pos[0].type_ref();
    for (size_t f = 0; f < t.field_types.size() && f + 1 < args.pos.size(); ++f) {
      bool parameter = f < t.field_params.size() && t.field_params[f] >= 0;
      const TypeRef& declared = t.field_types[f];
      if (declared == nullptr || parameter || isa(args.pos[f + 1], *declared)) continue;
      Args conv;
      conv.pos = {Value::type(declared), args.pos[f + 1]};
      args.pos[f + 1] = in.call(*in.global("convert"), std::move(conv), in.here());
    }
  }
  return new_instance(in, args);
}

}  // namespace

void add_core_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"print", print},
                        {"println", println},
                        {"string", string},
                        {"isa", isa_},
                        {"<:", subtype_of<false>},
                        {">:", subtype_of<true>},
                        {"typeof", typeof_},
                        {"eltype", eltype},
                        {"eps", eps},
                        {"repr", repr},
                        {"convert", convert},
                        {"float", float_},
                        {"zero", zero},
                        {"one", one},
                        {"identity", identity},
                        {"tuple", tuple},
                        {"error", error},
                        {"@assert", assert_macro},
                        {"@show", show_macro},
                        {"keys", keys},
                        {"values", values},
                        {"getfield", getfield},
                        {"setfield!", setfield},
                        {"new_instance", new_instance},
                        {"new_struct", new_struct},
                        {"nfields", nfields},
                        {"fieldnames", fieldnames},
                        {"getfields", getfields},
                        {"round", rounding<0>},
                        {"floor", rounding<1>},
                        {"ceil", rounding<2>},
                        {"trunc", rounding<3>},
                    });
}

}  // namespace ytape::tracer
