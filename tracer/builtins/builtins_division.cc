// Division's integer quotient and remainders: ÷ (div), % (rem) and mod. On integers they
// are computed directly; on floats rem is the rem primitive (C's fmod) and mod is built from
// it, so traced values stay traced and differentiable.
#include <cmath>
#include <cstdint>

#include "tape/error.h"
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

void check_divisor(int64_t b) {
  if (b == 0) user_error("integer division by zero");
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
  // INT64_MIN ÷ -1 wraps around, as Julia's Int (in C it is undefined).
  if (b.i == -1) return Value::integer(static_cast<int64_t>(0 - static_cast<uint64_t>(a.i)));
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
  Value flip = bin(Prim::ne, bin(Prim::lt, r, zero), bin(Prim::lt, b, zero));
  Value moved = select(flip, bin(Prim::add, r, b), r);
  Value signed_zero =
      bin(Prim::mul, elementwise_unary(in, Prim::abs, r), elementwise_unary(in, Prim::sign, b));
  return select(bin(Prim::ne, r, zero), moved, signed_zero);
}

}  // namespace

void add_division_builtins(BuiltinTable& t) {
  t.insert(t.end(), {
                        {"÷", int_div},
                        {"div", int_div},
                        {"%", rem},
                        {"rem", rem},
                        {"mod", mod},
                    });
}

}  // namespace ytape::tracer
