// Arithmetic, comparisons and scalar math: on numbers directly, on arrays through the
// elementwise primitives (concrete or traced), with Julia's promotion and weak literals.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <numeric>
#include <optional>

#include "tape/error.h"
#include "tape/float16.h"
#include "tape/scalar_math.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"
#include "tracer/interp/nesting.h"

namespace ytape::tracer {

namespace {

bool is_scalar(const Value& v) {
  return v.kind == VKind::integer || v.kind == VKind::float_ || v.kind == VKind::boolean;
}
bool is_array(const Value& v) {
  return v.is_tensor() && !v.tensor().number;
}

// Whether arithmetic here is elementwise: inside a built-in's broadcast, or on the elements
// of a user function's broadcast (TensorObj::element).
bool pointwise(const Interpreter& in, const Value& a, const Value& b = Value()) {
  return in.elementwise() || is_element(a) || is_element(b);
}

// Julia calls a broadcast function per element, so an element met with another whole
// array makes an array of arrays, which tapes do not hold.
void check_elements(const Value& a, const Value& b) {
  bool ea = is_element(a), eb = is_element(b);
  if (ea == eb || !is_array(ea ? b : a)) return;
  user_error(
      "a function broadcast with f.(x) combines an element of x with the whole {} it "
      "reaches otherwise, which Julia would make an array of arrays; pass that array to "
      "the broadcast as an argument too, or write the loop out",
      type_str((ea ? b : a).tensor().type));
}
bool is_float_value(const Value& v) {
  return v.kind == VKind::float_ || (v.is_tensor() && is_float(v.tensor().type.dtype));
}
// Strong values have a fixed dtype; ints, bools and untyped float literals adopt another.
bool strong(const Value& v) {
  return v.is_tensor() || (v.kind == VKind::float_ && !v.weak);
}

// Julia's Int x^y: by squaring, wrapping around on overflow.
int64_t int_power(int64_t x, int64_t y) {
  if (y < 0) user_error("an integer to a negative integer power: write float(x)^y");
  int64_t r = 1;
  for (auto e = static_cast<uint64_t>(y); e > 0; e >>= 1, x = wrap_mul(x, x)) {
    if (e & 1) r = wrap_mul(r, x);
  }
  return r;
}

// x p y on numbers, by the kernels' arithmetic (tape/scalar_math.h) where they have the
// dtype; comparisons give 0 or 1. Integers compare exactly: as doubles, integers past 2^53
// would equal their neighbours.
template <typename T>
T apply_scalar(Prim p, T x, T y) {
  constexpr bool ints = std::is_same_v<T, int64_t>;
  switch (p) {
    case Prim::add:
      return add_values(x, y);
    case Prim::sub:
      return sub_values(x, y);
    case Prim::mul:
      return mul_values(x, y);
    case Prim::max:
      return max_nan(x, y);
    case Prim::min:
      return min_nan(x, y);
    case Prim::eq:
      return x == y;
    case Prim::ne:
      return x != y;
    case Prim::lt:
      return x < y;
    case Prim::le:
      return x <= y;
    case Prim::gt:
      return x > y;
    case Prim::ge:
      return x >= y;
    case Prim::div:
      if constexpr (!ints) return x / y;
      break;
    case Prim::pow:
      if constexpr (ints) {
        return int_power(x, y);
      } else {
        return std::pow(x, y);
      }
    case Prim::rem:
      if constexpr (ints) {
        if (y == 0) user_error("DivideError: integer division error");
        return y == -1 ? 0 : x % y;
      } else {
        return std::fmod(x, y);
      }
    default:
      break;
  }
  internal_error("no scalar rule for {}", prim_name(p));
}

Value scalar_binary(Prim p, const Value& a, const Value& b) {
  bool ints = !is_float_value(a) && !is_float_value(b);
  if (ints && p != Prim::div) {
    int64_t x = a.kind == VKind::boolean ? a.b : a.i, y = b.kind == VKind::boolean ? b.b : b.i;
    if (prim_info(p).compares()) return Value::boolean(apply_scalar(p, x, y) != 0);
    return Value::integer(apply_scalar(p, x, y));
  }
  double r = apply_scalar(p, as_double(a), as_double(b));
  if (prim_info(p).compares()) return Value::boolean(r != 0);
  DType d = result_dtype(a, b);
  if (!is_float(d)) d = DType::f64;
  return Value::floating(r, d, !strong(a) && !strong(b));
}

}  // namespace

DType result_dtype(const Value& a, const Value& b) {
  DType da = dtype_of_value(a), db = dtype_of_value(b);
  bool fa = is_float(da), fb = is_float(db);
  if (fa && fb) {
    if (strong(a) && !strong(b)) return da;
    if (strong(b) && !strong(a)) return db;
    return wider_float(da, db);
  }
  if (fa) return da;
  if (fb) return db;
  if (da == DType::boolean && db == DType::boolean) return DType::boolean;
  return DType::i64;
}

// The operator or function a program writes for primitive p, for messages.
std::string op_text(Prim p) {
  switch (p) {
    case Prim::add:
      return "'+'";
    case Prim::sub:
      return "'-'";
    case Prim::neg:
      return "unary '-'";
    case Prim::mul:
      return "'*'";
    case Prim::div:
      return "'/'";
    case Prim::pow:
      return "'^'";
    default:
      return std::string(prim_name(p));
  }
}

Value elementwise_binary(Interpreter& in, Prim p, const Value& a, const Value& b) {
  // Arithmetic on a range is on its values: (1:3) .+ 1 is [2, 3, 4].
  if (a.kind == VKind::range) return elementwise_binary(in, p, range_array(a.rng()), b);
  if (b.kind == VKind::range) return elementwise_binary(in, p, a, range_array(b.rng()));
  if (!a.is_number() && !a.is_tensor()) not_defined_for(op_text(p), a);
  if (!b.is_number() && !b.is_tensor()) not_defined_for(op_text(p), b);
  if (is_scalar(a) && is_scalar(b)) return scalar_binary(p, a, b);
  check_elements(a, b);
  DType d = result_dtype(a, b);
  if (!prim_info(p).compares() && d == DType::boolean) d = DType::i64;
  if ((p == Prim::div || p == Prim::pow) && !is_float(d)) d = DType::f64;
  Value r = in.prim1(p, {in.as_tensor(a, d), in.as_tensor(b, d)});
  return is_element(a) || is_element(b) ? with_element(std::move(r), true) : r;
}

Value elementwise_unary(Interpreter& in, Prim p, const Value& a) {
  if (a.kind == VKind::range) return elementwise_unary(in, p, range_array(a.rng()));
  if (!a.is_number() && !a.is_tensor()) not_defined_for(op_text(p), a);
  bool float_only = prim_info(p).dtypes == DTypes::floating;
  // -true is the Int -1, as Julia's (it read the Int result as a float: an internal error).
  if (a.kind == VKind::boolean && !float_only) return elementwise_unary(in, p, Value::integer(a.b));
  if (a.kind == VKind::integer && !float_only) {
    switch (p) {
      // -typemin(Int) and abs(typemin(Int)) wrap around to typemin(Int), as Julia's.
      case Prim::neg:
        return Value::integer(wrap_sub(0, a.i));
      case Prim::abs:
        return Value::integer(a.i < 0 ? wrap_sub(0, a.i) : a.i);
      case Prim::sign:
        return Value::integer((a.i > 0) - (a.i < 0));
      default:
        return Value::integer(std::max<int64_t>(a.i, 0));
    }
  }
  DType d = dtype_of_value(a);
  if (float_only && !is_float(d)) d = DType::f64;
  if (d == DType::boolean) d = DType::i64;
  Value r = in.prim1(p, {in.as_tensor(a, d)});
  if (a.is_tensor()) return with_element(std::move(r), is_element(a));
  // A concrete number stays a number.
  if (d == DType::i64) return to_scalar(r);
  double x = element_value(r.tensor().data, 0);
  return Value::floating(x, d, !strong(a));
}

namespace {

[[noreturn]] void array_error(std::string_view op, std::string_view dotted) {
  user_error("'{}' of an array and a number is not defined: write '{}' to broadcast", op, dotted);
}

// Julia's promote_shape: equal dims, and those past the shorter shape's rank all 1.
bool same_up_to_trailing_ones(const Shape& a, const Shape& b) {
  const Shape& longer = a.size() >= b.size() ? a : b;
  const Shape& shorter = a.size() >= b.size() ? b : a;
  for (size_t i = 0; i < longer.size(); ++i) {
    if (longer[i] != (i < shorter.size() ? shorter[i] : 1)) return false;
  }
  return true;
}

// `a + b`, `a - b`: numbers, or arrays of one shape up to trailing dims of 1, as Julia's
// ((3,) + (3, 1) is (3, 1)); broadcasting needs the dotted form.
Value additive(Interpreter& in, Prim p, const Value& a, const Value& b) {
  if (!pointwise(in, a, b) && (is_array(a) || is_array(b))) {
    std::string_view op = p == Prim::add ? "+" : "-";
    if (!is_array(a) || !is_array(b)) array_error(op, p == Prim::add ? ".+" : ".-");
    if (!same_up_to_trailing_ones(a.tensor().type.shape, b.tensor().type.shape)) {
      user_error(
          "'{}' of arrays of shapes {} and {}: the shapes must be equal (or write '.{}' "
          "to broadcast)",
          op, shape_str(a.tensor().type.shape), shape_str(b.tensor().type.shape), op);
    }
  }
  return elementwise_binary(in, p, a, b);
}

Value reshape_value(Interpreter& in, const Value& v, Shape shape) {
  return in.prim1<Prim::reshape>({v}, {.shape = std::move(shape)});
}

// The matrix product of arrays: vectors are reshaped around matmul as Julia's `*` does.
Value matrix_product(Interpreter& in, const Value& a, const Value& b) {
  const Shape& sa = a.tensor().type.shape;
  const Shape& sb = b.tensor().type.shape;
  DType d = result_dtype(a, b);
  Value x = in.as_tensor(a, d), y = in.as_tensor(b, d);
  // Shapes are checked here, in the program's terms: matmul would name the reshaped
  // operands, which the program never wrote.
  if (sa.size() >= 1 && sa.size() <= 2 && sb.size() >= 1 && sb.size() <= 2) {
    int64_t inner_a = sa.size() == 2 ? sa[1] : 1;
    if (inner_a != sb[0]) {
      user_error(
          "DimensionMismatch: '*' of a {} and a {}: the left side has {} column{} and the "
          "right side {} "
          "row{}",
          type_str(a.tensor().type), type_str(b.tensor().type), inner_a, inner_a == 1 ? "" : "s",
          sb[0], sb[0] == 1 ? "" : "s");
    }
  }
  if (sa.size() == 2 && sb.size() == 2) {
    Value r = in.prim1(Prim::matmul, {x, y});
    if (!a.tensor().adjoint_vector) return r;
    // x'A is a row vector (Julia's Adjoint), so that x'A * y is a number.
    auto row = std::make_shared<TensorObj>(r.tensor());
    row->adjoint_vector = true;
    r.obj = std::move(row);
    return r;
  }
  if (sa.size() == 2 && sb.size() == 1) {
    Value r = in.prim1(Prim::matmul, {x, reshape_value(in, y, {sb[0], 1})});
    if (a.tensor().adjoint_vector) return as_number(reshape_value(in, r, {}));  // x'y
    return reshape_value(in, r, {sa[0]});
  }
  if (sa.size() == 1 && sb.size() == 2) {
    return in.prim1(Prim::matmul, {reshape_value(in, x, {sa[0], 1}), y});
  }
  user_error(
      "'*' of arrays of shapes {} and {}: the matrix product needs matrices or a "
      "matrix and a vector (write '.*' to multiply elementwise)",
      shape_str(sa), shape_str(sb));
}

// `a + b + c` is one call: folded by `op`, or, with a struct among three or more
// arguments (a Complex), pairwise through `name`, so that its methods take each pair.
Value fold(Interpreter& in, Args& args, std::string_view name,
           Value (*op)(Interpreter&, const Value&, const Value&)) {
  bool objects =
      args.pos.size() > 2 && std::any_of(args.pos.begin(), args.pos.end(),
                                         [](const Value& v) { return v.kind == VKind::object; });
  Value acc = args.pos.at(0);
  for (size_t i = 1; i < args.pos.size(); ++i) {
    acc = objects ? in.call(*in.global(std::string(name)), Args{{acc, args.pos[i]}, {}}, in.here())
                  : op(in, acc, args.pos[i]);
  }
  return acc;
}

void need(const Args& args, size_t n, std::string_view name) {
  if (args.pos.size() != n) {
    user_error("{} takes {} argument{}, got {}", name, n, n == 1 ? "" : "s", args.pos.size());
  }
}

// Arithmetic of vectors of complex numbers (vectors of values) as Julia's of arrays:
// `x + y`, `-x`, `2x`, `x / 2` are elementwise. With `scaling`, the other arguments must
// be numbers (a vector times a vector is left to the matrix product's error).
bool complex_vectors(const Args& args, bool scaling) {
  auto complex_vector = [](const Value& v) {
    return is_value_vector(v) && value_vector_eltype(v.tup())->tag == TypeTag::user;
  };
  auto scalar = [](const Value& v) { return v.is_number() || is_number_struct(v); };
  const std::vector<Value>& a = args.pos;
  if (std::none_of(a.begin(), a.end(), complex_vector)) return false;
  return !scaling || std::all_of(a.begin(), a.end(),
                                 [&](const Value& v) { return complex_vector(v) || scalar(v); });
}

Value plus(Interpreter& in, Args& args) {
  if (complex_vectors(args, false)) return in.broadcast(*in.global("+"), args, in.here());
  if (args.pos.size() == 1) return args.pos[0];
  return fold(in, args, "+", [](Interpreter& i, const Value& a, const Value& b) {
    return additive(i, Prim::add, a, b);
  });
}

Value minus(Interpreter& in, Args& args) {
  if (complex_vectors(args, false)) return in.broadcast(*in.global("-"), args, in.here());
  if (args.pos.size() == 1) return elementwise_unary(in, Prim::neg, args.pos[0]);
  need(args, 2, "-");
  return additive(in, Prim::sub, args.pos[0], args.pos[1]);
}

Value times(Interpreter& in, Args& args) {
  // "a" * "b": strings concatenate, as Julia's.
  if (!args.pos.empty() && std::all_of(args.pos.begin(), args.pos.end(),
                                       [](const Value& v) { return v.kind == VKind::string; })) {
    std::string text;
    for (const Value& v : args.pos) text += v.text();
    return Value::string(std::move(text));
  }
  if (args.pos.size() == 2 && complex_vectors(args, true) &&
      (!is_value_vector(args.pos[0]) || !is_value_vector(args.pos[1]))) {
    return in.broadcast(*in.global("*"), args, in.here());
  }
  return fold(in, args, "*", [](Interpreter& i, const Value& a, const Value& b) {
    if (!pointwise(i, a, b) && is_array(a) && is_array(b)) return matrix_product(i, a, b);
    return elementwise_binary(i, Prim::mul, a, b);
  });
}

Value divide(Interpreter& in, Args& args) {
  need(args, 2, "/");
  if (complex_vectors(args, true) && !is_value_vector(args.pos[1])) {
    return in.broadcast(*in.global("/"), args, in.here());
  }
  if (!pointwise(in, args.pos[0], args.pos[1]) && is_array(args.pos[1])) {
    user_error("'/' by an array is not defined: write './' to divide elementwise");
  }
  return elementwise_binary(in, Prim::div, args.pos[0], args.pos[1]);
}

Value power(Interpreter& in, Args& args) {
  need(args, 2, "^");
  const Value& x = args.pos[0];
  const Value& y = args.pos[1];
  if (!pointwise(in, x, y) && is_array(x)) {
    user_error("'^' of an array is the matrix power, which is not supported: write '.^'");
  }
  // x^2 and x^3 of floats are products, as Julia's literal_pow: (x*x)*x, not the C
  // library's pow (a scalar call per element, GELU's cube).
  if (y.kind == VKind::integer && x.kind != VKind::integer && (y.i == 2 || y.i == 3)) {
    Value square = elementwise_binary(in, Prim::mul, x, x);
    return y.i == 2 ? square : elementwise_binary(in, Prim::mul, square, x);
  }
  if (y.kind == VKind::integer && y.i >= 0 && x.is_tensor() && !is_float(x.tensor().type.dtype) &&
      x.tensor().type.dtype != DType::boolean) {
    // Integers to a power stay integers, as Julia's ([5, 12] .^ 3): by squaring.
    auto mul = [&](const Value& a, const Value& b) {
      return elementwise_binary(in, Prim::mul, a, b);
    };
    if (y.i == 0)
      return elementwise_binary(in, Prim::add, mul(x, Value::integer(0)), Value::integer(1));
    std::optional<Value> result;
    Value base = x;
    for (int64_t e = y.i; e > 0; e >>= 1) {
      if (e & 1) result = result ? mul(*result, base) : base;
      if (e > 1) base = mul(base, base);
    }
    return *result;
  }
  return elementwise_binary(in, Prim::pow, x, y);
}

Value not_(Interpreter& in, Args& args) {
  need(args, 1, "!");
  const Value& x = args.pos[0];
  if (x.kind == VKind::boolean) return Value::boolean(!x.b);
  if (x.is_tensor() && x.tensor().type.dtype == DType::boolean) {
    return in.prim1(Prim::eq, {x, in.as_tensor(Value::boolean(false), DType::boolean)});
  }
  user_error("'!' needs a Bool, got {}", a_type_name(x));
}

// a | b, a & b, xor(a, b): bitwise on integers, logical on Bools; on Bool arrays and
// traced Bools elementwise, as select and ne.
template <char Op>
Value bitwise(Interpreter& in, Args& args) {
  const char* name = Op == '|' ? "|" : Op == '&' ? "&" : "xor";
  need(args, 2, name);
  const Value &a = args.pos[0], &b = args.pos[1];
  if (a.kind == VKind::boolean && b.kind == VKind::boolean) {
    return Value::boolean(Op == '|' ? a.b || b.b : Op == '&' ? a.b && b.b : a.b != b.b);
  }
  if (a.kind == VKind::integer && b.kind == VKind::integer) {
    return Value::integer(Op == '|' ? a.i | b.i : Op == '&' ? a.i & b.i : a.i ^ b.i);
  }
  auto is_bool = [](const Value& v) {
    return v.kind == VKind::boolean || (v.is_tensor() && v.tensor().type.dtype == DType::boolean);
  };
  if (!is_bool(a) || !is_bool(b)) {
    user_error("'{}' takes two Bools (or Bool arrays) or two integers, got {} and {}", name,
               a_type_name(a), a_type_name(b));
  }
  Value x = in.as_tensor(a, DType::boolean), y = in.as_tensor(b, DType::boolean);
  if (Op == '^') return in.prim1(Prim::ne, {x, y});
  return Op == '|' ? in.prim1(Prim::select, {x, x, y}) : in.prim1(Prim::select, {x, y, x});
}

// a // b where none of the prelude's methods (integers and rationals, rational.jl) apply:
// a float in place of the fraction would change the meaning of what follows.
Value rational(Interpreter&, Args& args) {
  need_args(args, 2, 2, "//");
  user_error(
      "a // b takes integers or rationals, as Julia's, not {} and {}: write a / b for "
      "a float",
      a_type_name(args.pos[0]), a_type_name(args.pos[1]));
}

using ValuePairs = std::vector<std::pair<const Value*, const Value*>>;

// a === b of two values without looking inside containers: false where they differ there;
// where both are immutable containers of the same shape, true, and their pairs of items
// go onto `items`, to be compared too.
bool egal_here(const Value& a, const Value& b, ValuePairs& items) {
  if (is_scalar(a) || is_scalar(b)) {
    return a.kind == b.kind && as_double(a) == as_double(b) && a.dtype == b.dtype;
  }
  if (a.kind != b.kind) return false;
  if (a.obj != nullptr && a.obj == b.obj) return true;
  switch (a.kind) {
    case VKind::nothing:
      return true;
    case VKind::string:
    case VKind::symbol:
      return a.text() == b.text();
    case VKind::tuple:
    case VKind::named_tuple: {
      const TupleObj &x = a.tup(), &y = b.tup();
      if (x.vector || y.vector || x.items.size() != y.items.size() || x.names != y.names)
        return false;
      for (size_t i = x.items.size(); i-- > 0;) items.emplace_back(&x.items[i], &y.items[i]);
      return true;
    }
    case VKind::object: {
      const StructObj &x = a.object(), &y = b.object();
      if (x.type != y.type || x.type->is_mutable) return false;
      for (size_t i = x.fields.size(); i-- > 0;) items.emplace_back(&x.fields[i], &y.fields[i]);
      return true;
    }
    case VKind::range:
      return a.rng().start == b.rng().start && a.rng().step == b.rng().step &&
             a.rng().length() == b.rng().length();
    case VKind::type: {
      // Built-in types made apart (typeof(x), Vector{Float32}) are equal by content.
      const TypeObj &x = *a.type_ref(), &y = *b.type_ref();
      if (&x == &y) return true;
      // As Julia's `==` of types: each below the other (`Union{A, B} == Union{B, A}`).
      if (x.tag == TypeTag::user || y.tag == TypeTag::user) return false;
      return subtype(x, y) && subtype(y, x);
    }
    default:
      return false;
  }
}

// a === b, Julia's egal: numbers by type and value; immutable values (tuples, named
// tuples, instances of immutable structs, ranges, strings, symbols, types) by content;
// mutable ones (arrays, vectors of values, mutable structs) and functions by identity.
// Pairs wait on a stack rather than recursion: immutable tuples nest as deep as a program
// likes, and only mutable containers, never looked into, can hold themselves.
bool egal_values(const Value& a, const Value& b) {
  ValuePairs pending{{&a, &b}};
  while (!pending.empty()) {
    auto [x, y] = pending.back();
    pending.pop_back();
    if (!egal_here(*x, *y, pending)) return false;
  }
  return true;
}

// `a == b` of arrays, as Julia's: one Bool, true when the shapes are equal and so is every
// element (NaN unequal to itself, -0.0 equal to 0.0); traced when either is.
Value arrays_equal(Interpreter& in, const Value& a, const Value& b) {
  if (!is_array(a) || !is_array(b) || a.tensor().type.shape != b.tensor().type.shape) {
    return Value::boolean(false);
  }
  Value unequal = in.as_tensor(elementwise_binary(in, Prim::ne, a, b), DType::i64);
  std::vector<int64_t> dims(a.tensor().type.shape.size());
  std::iota(dims.begin(), dims.end(), 1);
  Value count = as_number(in.prim1<Prim::sum>({unequal}, {.dims = dims}));
  return elementwise_binary(in, Prim::eq, count, Value::integer(0));
}

// The pairs of containers a walk of `==` is inside, outermost first.
using EqualPath = std::vector<std::pair<const Object*, const Object*>>;

Value equal_values(Interpreter& in, const Value& a, const Value& b, EqualPath& path);

// `a == b` of tuples, named tuples and vectors of values: item by item with ==, as
// Julia's (([1.0],) == ([1.0],) compares the arrays' elements); traced when an item is.
// Two vectors met again as the same pair inside themselves would be compared forever.
Value items_equal(Interpreter& in, const Value& a, const Value& b, EqualPath& path) {
  const TupleObj &x = a.tup(), &y = b.tup();
  if (x.items.size() != y.items.size() || x.names != y.names) return Value::boolean(false);
  std::pair<const Object*, const Object*> pair{a.obj.get(), b.obj.get()};
  if (std::find(path.begin(), path.end(), pair) != path.end()) {
    user_error(
        "'==' of vectors that contain themselves would never end (Julia's overflows the "
        "stack); compare their items, or their identity with ===");
  }
  if (path.size() >= kMaxValueNesting) nesting_error("compare (==)");
  path.push_back(pair);
  Value all = Value::boolean(true);
  for (size_t i = 0; i < x.items.size(); ++i) {
    Value e = equal_values(in, x.items[i], y.items[i], path);
    if (e.kind == VKind::boolean && !e.b) {
      all = e;
      break;
    }
    if (e.kind != VKind::boolean)
      all = all.kind == VKind::boolean ? e : in.prim1(Prim::select, {all, e, all});
  }
  path.pop_back();
  return all;
}

// `a == b`: numbers and arrays by value, collections item by item, anything else as `===`
// (Julia's default `==`, which Flux's layers keep: Chain(d)[1:1] == Chain(d)).
Value equal_values(Interpreter& in, const Value& a, const Value& b, EqualPath& path) {
  bool numeric = (a.is_number() || a.is_tensor()) && (b.is_number() || b.is_tensor());
  if (numeric) {
    if (is_array(a) || is_array(b)) return arrays_equal(in, a, b);
    return elementwise_binary(in, Prim::eq, a, b);
  }
  bool collections = (a.kind == VKind::tuple || a.kind == VKind::named_tuple) && a.kind == b.kind &&
                     a.tup().vector == b.tup().vector;
  if (collections) return items_equal(in, a, b, path);
  return Value::boolean(egal_values(a, b));
}

Value equal_values(Interpreter& in, const Value& a, const Value& b) {
  EqualPath path;
  return equal_values(in, a, b, path);
}

template <Prim P>
Value compare(Interpreter& in, Args& args) {
  need(args, 2, prim_name(P));
  const Value &a = args.pos[0], &b = args.pos[1];
  bool numeric = (a.is_number() || a.is_tensor()) && (b.is_number() || b.is_tensor());
  if (!numeric && (P == Prim::eq || P == Prim::ne)) {
    Value equal = equal_values(in, a, b);
    if (P == Prim::eq) return equal;
    Args negated;
    negated.pos = {equal};
    return not_(in, negated);
  }
  if ((P == Prim::eq || P == Prim::ne) && !pointwise(in, a, b) && (is_array(a) || is_array(b))) {
    Value equal = arrays_equal(in, a, b);
    if (P == Prim::eq) return equal;
    Args negated;
    negated.pos = {equal};
    return not_(in, negated);
  }
  if (!pointwise(in, a, b) && (is_array(a) || is_array(b))) {
    user_error("'{}' of arrays: write the dotted form to compare elementwise", prim_name(P));
  }
  return elementwise_binary(in, P, a, b);
}

bool egal(const Args& args) {
  need(args, 2, "===");
  const Value &a = args.pos[0], &b = args.pos[1];
  return egal_values(a, b);
}

Value identical(Interpreter&, Args& args) {
  return Value::boolean(egal(args));
}
Value not_identical(Interpreter&, Args& args) {
  return Value::boolean(!egal(args));
}

// isequal(a, b): == except that NaN equals NaN and -0.0 does not equal 0.0 (Dict keys).
Value isequal(Interpreter& in, Args& args) {
  need(args, 2, "isequal");
  const Value &a = args.pos[0], &b = args.pos[1];
  if (is_scalar(a) && is_scalar(b)) {
    double x = as_double(a), y = as_double(b);
    bool nan = std::isnan(x) && std::isnan(y);
    return Value::boolean(nan || (x == y && std::signbit(x) == std::signbit(y)));
  }
  return compare<Prim::eq>(in, args);
}

template <Prim P>
Value binary(Interpreter& in, Args& args) {
  if (args.pos.size() > 2 && (P == Prim::max || P == Prim::min)) {
    return fold(in, args, prim_name(P), [](Interpreter& i, const Value& a, const Value& b) {
      return elementwise_binary(i, P, a, b);
    });
  }
  need(args, 2, prim_name(P));
  if (!pointwise(in, args.pos[0], args.pos[1]) &&
      (is_array(args.pos[0]) || is_array(args.pos[1]))) {
    user_error("{} of arrays: write {}.(a, b) to apply it elementwise", prim_name(P), prim_name(P));
  }
  return elementwise_binary(in, P, args.pos[0], args.pos[1]);
}

template <Prim P>
Value unary(Interpreter& in, Args& args) {
  need(args, 1, prim_name(P));
  if (!pointwise(in, args.pos[0]) && is_array(args.pos[0])) {
    user_error("{} of an array: write {}.(x) to apply it to each element", prim_name(P),
               prim_name(P));
  }
  return elementwise_unary(in, P, args.pos[0]);
}

Value abs2(Interpreter& in, Args& args) {
  need(args, 1, "abs2");
  if (!pointwise(in, args.pos[0]) && is_array(args.pos[0]))
    user_error("abs2 of an array: write abs2.(x)");
  return elementwise_binary(in, Prim::mul, args.pos[0], args.pos[0]);
}

Value ifelse(Interpreter& in, Args& args) {
  need(args, 3, "ifelse");
  const Value& c = args.pos[0];
  if (c.kind == VKind::boolean) return c.b ? args.pos[1] : args.pos[2];
  // As in Julia, the condition is a Bool: ifelse(0.5, a, b) is an error, not a cast.
  if (!(c.is_number() || c.is_tensor()) || dtype_of_value(c) != DType::boolean) {
    user_error("ifelse takes a Bool condition (or a Bool array), got {}", a_type_name(c));
  }
  DType d = result_dtype(args.pos[1], args.pos[2]);
  Value r = in.prim1(Prim::select, {in.as_tensor(c, DType::boolean), in.as_tensor(args.pos[1], d),
                                    in.as_tensor(args.pos[2], d)});
  bool element = is_element(c) || is_element(args.pos[1]) || is_element(args.pos[2]);
  return with_element(std::move(r), element);
}

// Primitives of the op list's X_UNARY rows built in otherwise than as the function of their
// name: floor, ceil and round take Julia's forms, with a type or digits (builtins_core.cc);
// gelu is the prelude's function (which a program may redefine, as Flux's), calling _gelu.
constexpr std::array kSpelledOtherwise = {Prim::floor, Prim::ceil, Prim::round, Prim::gelu};

// Every other X_UNARY primitive is the function of its name (sin, asin, ...): the language
// grows with the op list.
template <Prim P>
void add_namesake(BuiltinTable& t) {
  if (std::find(kSpelledOtherwise.begin(), kSpelledOtherwise.end(), P) == kSpelledOtherwise.end())
    t.emplace_back(std::string(prim_name(P)), unary<P>);
}

}  // namespace

void add_math_builtins(BuiltinTable& t) {
#define X(...)
#define X_UNARY(name, ...) add_namesake<Prim::name>(t);
#include "tape/ops.def"
#undef X
  t.insert(t.end(), {
                        {"_gelu", unary<Prim::gelu>},
                        {"+", plus},
                        {"-", minus},
                        {"*", times},
                        {"/", divide},
                        {"^", power},
                        {"!", not_},
                        {"//", rational},
                        {"|", bitwise<'|'>},
                        {"&", bitwise<'&'>},
                        {"xor", bitwise<'^'>},
                        {"⊻", bitwise<'^'>},
                        {"==", compare<Prim::eq>},
                        {"!=", compare<Prim::ne>},
                        {"<", compare<Prim::lt>},
                        {"<=", compare<Prim::le>},
                        {">", compare<Prim::gt>},
                        {">=", compare<Prim::ge>},
                        {"===", identical},
                        {"isequal", isequal},
                        {"!==", not_identical},
                        {"max", binary<Prim::max>},
                        {"min", binary<Prim::min>},
                        {"√", unary<Prim::sqrt>},
                        {"σ", unary<Prim::sigmoid>},
                        {"abs2", abs2},
                        {"ifelse", ifelse},
                    });
}

}  // namespace ytape::tracer
