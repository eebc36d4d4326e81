// VJP rules of the elementwise primitives. x, y: arguments; z: the output; g: its
// cotangent. Results of a broadcast shape are summed back by the driver.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

Var g_of(const RuleArgs& r) {
  return *r.cots[0];
}
Var x_of(const RuleArgs& r) {
  return r.args[0];
}
Var z_of(const RuleArgs& r) {
  return r.outs[0];
}

// g masked by c: select(c, g, 0).
Var where(Builder& b, Var c, Var g) {
  return b.select(c, g, scalar(b, g, 0));
}

// dx = -g
Dx neg_vjp(Builder& b, const RuleArgs& r) {
  return {b.neg(g_of(r))};
}
// dx = g * z
Dx exp_vjp(Builder& b, const RuleArgs& r) {
  return {b.mul(g_of(r), z_of(r))};
}
// dx = g / x
Dx log_vjp(Builder& b, const RuleArgs& r) {
  return {b.div(g_of(r), x_of(r))};
}
// dx = g / (1 + x)
Dx log1p_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  return {b.div(g_of(r), b.add(x, scalar(b, x, 1)))};
}
// dx = g * (z + 1)
Dx expm1_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  return {b.mul(g_of(r), b.add(z, scalar(b, z, 1)))};
}
// dx = g * 0.5 / z
Dx sqrt_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  return {b.div(b.mul(g_of(r), scalar(b, z, 0.5)), z)};
}
// dx = g * sign(x)  (0 at 0)
Dx abs_vjp(Builder& b, const RuleArgs& r) {
  return {b.mul(g_of(r), b.sign(x_of(r)))};
}
// dx = g * cos(x)
Dx sin_vjp(Builder& b, const RuleArgs& r) {
  return {b.mul(g_of(r), b.cos(x_of(r)))};
}
// dx = -(g * sin(x))
Dx cos_vjp(Builder& b, const RuleArgs& r) {
  return {b.neg(b.mul(g_of(r), b.sin(x_of(r))))};
}
// dx = g * (1 + z^2)
Dx tan_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  Var z2 = b.mul(z, z);
  return {b.mul(g_of(r), b.add(scalar(b, z, 1), z2))};
}
// dx = g * (1 - z^2)
Dx tanh_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  Var z2 = b.mul(z, z);
  return {b.mul(g_of(r), b.sub(scalar(b, z, 1), z2))};
}
// dx = g * z * (1 - z)
Dx sigmoid_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  Var one_minus_z = b.sub(scalar(b, z, 1), z);
  return {b.mul(b.mul(g_of(r), z), one_minus_z)};
}
// dx = g where x > 0, else 0 (as PyTorch, 0 at the kink). The mask reads z = relu(x),
// z > 0 exactly where x > 0: then x need not live through the backward pass.
Dx relu_vjp(Builder& b, const RuleArgs& r) {
  Var z = z_of(r);
  return {where(b, b.gt(z, scalar(b, z, 0)), g_of(r))};
}
// dx = g * sigmoid(x)
Dx softplus_vjp(Builder& b, const RuleArgs& r) {
  return {b.mul(g_of(r), b.sigmoid(x_of(r)))};
}
// dx = g * 2/sqrt(pi) * exp(-x^2)
Dx erf_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  Var gauss = b.exp(b.neg(b.mul(x, x)));
  Var slope = b.mul(scalar(b, x, 1.1283791670955126), gauss);
  return {b.mul(g_of(r), slope)};
}
// dx = g * (0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2)), t = tanh(k (x + c x^3)): from
// x alone, so the backward keeps x and none of the forward's intermediates, and the
// executor runs the whole as one elementwise group (two reads, one write).
Dx gelu_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  auto c = [&](double v) { return scalar(b, x, v); };
  const double k = 0.7978845608028654, cubic = 0.044715;
  Var x2 = b.mul(x, x);
  Var t = b.tanh(b.mul(c(k), b.add(x, b.mul(c(cubic), b.mul(x2, x)))));
  Var outer = b.mul(c(0.5), b.add(c(1), t));
  Var inner_slope = b.mul(c(k), b.add(c(1), b.mul(c(3 * cubic), x2)));
  Var inner = b.mul(b.mul(b.mul(c(0.5), x), b.sub(c(1), b.mul(t, t))), inner_slope);
  return {b.mul(g_of(r), b.add(outer, inner))};
}
// dx = g / sqrt(1 - x^2)
Dx asin_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  Var x2 = b.mul(x, x);
  return {b.div(g_of(r), b.sqrt(b.sub(scalar(b, x, 1), x2)))};
}
// dx = -g / sqrt(1 - x^2)
Dx acos_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  Var x2 = b.mul(x, x);
  return {b.neg(b.div(g_of(r), b.sqrt(b.sub(scalar(b, x, 1), x2))))};
}
// dx = g / (1 + x^2)
Dx atan_vjp(Builder& b, const RuleArgs& r) {
  Var x = x_of(r);
  Var x2 = b.mul(x, x);
  return {b.div(g_of(r), b.add(scalar(b, x, 1), x2))};
}

// dx = g, dy = g
Dx add_vjp(Builder&, const RuleArgs& r) {
  return {g_of(r), g_of(r)};
}
// dx = g, dy = -g
Dx sub_vjp(Builder& b, const RuleArgs& r) {
  return {g_of(r), r.need[1] ? Cotangent(b.neg(g_of(r))) : std::nullopt};
}
// dx = g * y, dy = g * x
Dx mul_vjp(Builder& b, const RuleArgs& r) {
  Dx dx(2);
  if (r.need[0]) dx[0] = b.mul(g_of(r), r.args[1]);
  if (r.need[1]) dx[1] = b.mul(g_of(r), r.args[0]);
  return dx;
}
// dx = g / y, dy = -(g * z) / y
Dx div_vjp(Builder& b, const RuleArgs& r) {
  Dx dx(2);
  if (r.need[0]) dx[0] = b.div(g_of(r), r.args[1]);
  if (r.need[1]) dx[1] = b.neg(b.div(b.mul(g_of(r), z_of(r)), r.args[1]));
  return dx;
}
// dx = g * y * x^(y-1), dy = g * z * log(x)
Dx pow_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0], y = r.args[1];
  Dx dx(2);
  if (r.need[0]) dx[0] = b.mul(g_of(r), b.mul(y, b.pow(x, b.sub(y, scalar(b, y, 1)))));
  if (r.need[1]) {
    Var log_x = b.log(x);
    dx[1] = b.mul(b.mul(g_of(r), z_of(r)), log_x);
  }
  return dx;
}
// dx = g, dy = -g * n where n = trunc(x / y), the quotient that rem took away: read as
// round((x - z) / y), exact where x / y would round up to the next integer
Dx rem_vjp(Builder& b, const RuleArgs& r) {
  Dx dx(2);
  if (r.need[0]) dx[0] = g_of(r);
  if (r.need[1]) {
    Var n = b.round(b.div(b.sub(r.args[0], z_of(r)), r.args[1]));
    dx[1] = b.neg(b.mul(g_of(r), n));
  }
  return dx;
}
// The first argument takes g where it wins or ties; the other where it loses, so that
// the two always sum to g.
Dx extremum_vjp(Builder& b, const RuleArgs& r, Var first_wins) {
  Var g = g_of(r);
  Dx dx(2);
  if (r.need[0]) dx[0] = where(b, first_wins, g);
  if (r.need[1]) dx[1] = b.select(first_wins, scalar(b, g, 0), g);
  return dx;
}
Dx max_vjp(Builder& b, const RuleArgs& r) {
  return extremum_vjp(b, r, b.ge(r.args[0], r.args[1]));
}
Dx min_vjp(Builder& b, const RuleArgs& r) {
  return extremum_vjp(b, r, b.le(r.args[0], r.args[1]));
}

// dc = none, dx = select(c, g, 0), dy = select(c, 0, g)
Dx select_vjp(Builder& b, const RuleArgs& r) {
  Var c = r.args[0], g = g_of(r);
  Dx dx(3);
  if (r.need[1]) dx[1] = where(b, c, g);
  if (r.need[2]) dx[2] = b.select(c, scalar(b, g, 0), g);
  return dx;
}
// dx = convert(g, dtype of x), for float x only
Dx convert_vjp(Builder& b, const RuleArgs& r) {
  DType from = b.type(x_of(r)).dtype;
  if (!is_float(from)) return {std::nullopt};
  return {b.convert(g_of(r), {.dtype = from})};
}

}  // namespace

void register_elementwise_rules(RuleTable& t) {
  t.set(Prim::neg, neg_vjp);
  t.set(Prim::exp, exp_vjp);
  t.set(Prim::log, log_vjp);
  t.set(Prim::log1p, log1p_vjp);
  t.set(Prim::expm1, expm1_vjp);
  t.set(Prim::sqrt, sqrt_vjp);
  t.set(Prim::abs, abs_vjp);
  t.set(Prim::sin, sin_vjp);
  t.set(Prim::cos, cos_vjp);
  t.set(Prim::tan, tan_vjp);
  t.set(Prim::tanh, tanh_vjp);
  t.set(Prim::sigmoid, sigmoid_vjp);
  t.set(Prim::relu, relu_vjp);
  t.set(Prim::softplus, softplus_vjp);
  t.set(Prim::gelu, gelu_vjp);
  t.set(Prim::erf, erf_vjp);
  t.set(Prim::asin, asin_vjp);
  t.set(Prim::acos, acos_vjp);
  t.set(Prim::atan, atan_vjp);
  t.set(Prim::add, add_vjp);
  t.set(Prim::sub, sub_vjp);
  t.set(Prim::mul, mul_vjp);
  t.set(Prim::div, div_vjp);
  t.set(Prim::pow, pow_vjp);
  t.set(Prim::rem, rem_vjp);
  t.set(Prim::max, max_vjp);
  t.set(Prim::min, min_vjp);
  t.set(Prim::select, select_vjp);
  t.set(Prim::convert, convert_vjp);
}

}  // namespace ytape::grad
