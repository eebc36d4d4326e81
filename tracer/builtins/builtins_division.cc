// Division's integer quotient and remainders: ÷ (div), % (rem) and mod, and Julia's checked
// integer arithmetic (Base.Checked). On integers they are computed directly, raising
// Julia's DivideError and OverflowError where Julia does (never C's undefined behaviour);
// on floats rem is the rem primitive (C's fmod) and mod is built from it, so traced values
// stay traced and differentiable.
#include <fmt/format.h>

#include <cmath>
#include <cstdint>

#include "tape/error.h"
#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

namespace {

bool is_array(const Value& v) {
  return v.is_tensor() && !v.tensor().number;
}
bool is_float_value(const Value& v) {
  return v.kind == VKind::float_ || (v.is_tensor() && is_float(v.tensor().type.dtype));
}
// Bools take part in integer arithmetic as 0 and 1, as Julia's.
Value as_integer(const Value& v) {
  return v.kind == VKind::boolean ? Value::integer(v.b) : v;
}

[[noreturn]] void divide_error() {
  user_error("DivideError: integer division error");
}

// Julia's DivideError of every integer division by zero (rem and mod too).
void check_divisor(int64_t b) {
  if (b == 0) divide_error();
}

// The float operands of rem or mod, checked: numbers, or arrays under a broadcast.
void check_float_operands(Interpreter& in, std::string_view name, const Value& a, const Value& b) {
  for (const Value* v : {&a, &b}) {
    if (v->kind != VKind::range && !v->is_number() && !v->is_tensor()) {
      user_error("{} is not defined for {}", name, a_type_name(*v));
    }
  }
  bool arrays = is_array(a) || is_array(b) || a.kind == VKind::range || b.kind == VKind::range;
  if (arrays && !(in.elementwise() || is_element(a) || is_element(b))) {
    user_error("{} of arrays: write {}.(a, b) to apply it elementwise", name, name);
  }
  if (!is_float_value(a) && !is_float_value(b)) {
    user_error(
        "{} of integer arrays is not supported (ytape's rem primitive takes floats): "
        "write {}.(float.(a), b)",
        name, name);
  }
}

Value int_div(Interpreter&, Args& args) {
  need_args(args, 2, 2, "÷");
  const Value &a = args.pos[0], &b = args.pos[1];
  if (a.kind != VKind::integer || b.kind != VKind::integer) user_error("÷ takes integers");
  check_divisor(b.i);
  // typemin(Int) ÷ -1 has no Int quotient: Julia's DivideError (in C it is undefined).
  if (b.i == -1 && a.i == INT64_MIN) divide_error();
  return Value::integer(a.i / b.i);
}

// rem(a, b), a % b: the remainder of truncated division, with the sign of a.
Value rem(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "rem");
  Value a = as_integer(args.pos[0]), b = as_integer(args.pos[1]);
  if (a.kind == VKind::integer && b.kind == VKind::integer) {
    check_divisor(b.i);
    return Value::integer(b.i == -1 ? 0 : a.i % b.i);
  }
  check_float_operands(in, "rem", a, b);
  return elementwise_binary(in, Prim::rem, a, b);
}

// Julia's mod of floats: r = rem(x, y), moved by y where r and y differ in sign, a zero
// signed as y.
double mod_double(double x, double y) {
  double r = std::fmod(x, y);
  if (r == 0) return std::copysign(0.0, y);
  return (r < 0) != (y < 0) ? r + y : r;
}

// mod(a, b): the remainder of floored division, with the sign of b.
Value mod(Interpreter& in, Args& args) {
  need_args(args, 2, 2, "mod");
  Value a = as_integer(args.pos[0]), b = as_integer(args.pos[1]);
  if (a.kind == VKind::integer && b.kind == VKind::integer) {
    check_divisor(b.i);
    int64_t r = b.i == -1 ? 0 : a.i % b.i;
    return Value::integer(r != 0 && (r < 0) != (b.i < 0) ? r + b.i : r);
  }
  check_float_operands(in, "mod", a, b);
  Value r = elementwise_binary(in, Prim::rem, a, b);
  if (r.kind == VKind::float_) {
    return Value::floating(mod_double(as_double(a), as_double(b)), r.dtype, r.weak);
  }
  // select(r != 0, select((r < 0) != (y < 0), r + y, r), |r| sign(y)), elementwise.
  auto bin = [&](Prim p, const Value& x, const Value& y) {
    return elementwise_binary(in, p, x, y);
  };
  auto select = [&](const Value& c, const Value& x, const Value& y) {
    DType d = r.tensor().type.dtype;
    Value s = in.prim1(Prim::select,
                       {in.as_tensor(c, DType::boolean), in.as_tensor(x, d), in.as_tensor(y, d)});
    return with_element(std::move(s), is_element(c) || is_element(x) || is_element(y));
  };
  Value zero = Value::integer(0);
  // One op per statement where two would be arguments of one call (C++ leaves their order
  // open; the tape's must not depend on the compiler).
  Value b_negative = bin(Prim::lt, b, zero), r_negative = bin(Prim::lt, r, zero);
  Value flip = bin(Prim::ne, r_negative, b_negative);
  Value moved = select(flip, bin(Prim::add, r, b), r);
  Value sign_b = elementwise_unary(in, Prim::sign, b), size_r = elementwise_unary(in, Prim::abs, r);
  Value signed_zero = bin(Prim::mul, size_r, sign_b);
  return select(bin(Prim::ne, r, zero), moved, signed_zero);
}

// ---- Base.Checked --------------------------------------------------------------------------

// The integer operands of a checked operation; a traced integer gives false: its value is
// not known until the tape runs, which computes in wrapping Int64 arithmetic.
bool concrete_integers(const Args& args, size_t n, std::string_view name) {
  need_args(args, n, n, name);
  bool traced = false;
  for (const Value& v : args.pos) {
    bool integer = v.kind == VKind::integer || v.kind == VKind::boolean;
    bool traced_integer = v.is_tensor() && v.tensor().number && v.tensor().traced &&
                          v.tensor().type.dtype == DType::i64;
    if (!integer && !traced_integer) user_error("{} takes integers, got {}", name, a_type_name(v));
    traced = traced || traced_integer;
  }
  return !traced;
}

int64_t int_of(const Value& v) {
  return v.kind == VKind::boolean ? v.b : v.i;
}

// checked_add, checked_sub, checked_mul: Julia's OverflowError where Int64 cannot hold the
// result ("9223372036854775807 + 1 overflowed for type Int64").
template <Prim P>
Value checked_binary(Interpreter& in, Args& args) {
  static constexpr const char* kName = P == Prim::add   ? "checked_add"
                                       : P == Prim::sub ? "checked_sub"
                                                        : "checked_mul";
  static constexpr const char* kOp = P == Prim::add ? "+" : P == Prim::sub ? "-" : "*";
  if (!concrete_integers(args, 2, kName))
    return elementwise_binary(in, P, args.pos[0], args.pos[1]);
  int64_t a = int_of(args.pos[0]), b = int_of(args.pos[1]), r;
  bool overflow = P == Prim::add   ? __builtin_add_overflow(a, b, &r)
                  : P == Prim::sub ? __builtin_sub_overflow(a, b, &r)
                                   : __builtin_mul_overflow(a, b, &r);
  if (overflow) user_error("OverflowError: {} {} {} overflowed for type Int64", a, kOp, b);
  return Value::integer(r);
}

// checked_neg, checked_abs (Julia's negates a negative x): -typemin(Int) overflows.
template <bool Abs>
Value checked_unary(Interpreter& in, Args& args) {
  if (!concrete_integers(args, 1, Abs ? "checked_abs" : "checked_neg"))
    return elementwise_unary(in, Abs ? Prim::abs : Prim::neg, args.pos[0]);
  int64_t x = int_of(args.pos[0]);
  if (Abs && x >= 0) return Value::integer(x);
  if (x == INT64_MIN) {
    user_error("OverflowError: checked arithmetic: cannot compute -x for x = {}::Int64", x);
  }
  return Value::integer(-x);
}

}  // namespace

void add_division_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"÷", int_div},
                        {"div", int_div},
                        {"%", rem},
                        {"rem", rem},
                        {"mod", mod},
                        // Julia's checked_div, _rem and _mod raise DivideError as div does.
                        {"checked_div", int_div},
                        {"checked_rem", rem},
                        {"checked_mod", mod},
                        {"checked_add", checked_binary<Prim::add>},
                        {"checked_sub", checked_binary<Prim::sub>},
                        {"checked_mul", checked_binary<Prim::mul>},
                        {"checked_neg", checked_unary<false>},
                        {"checked_abs", checked_unary<true>},
                    });
}

}  // namespace ytape::tracer
