// Elementwise ONNX ops. ONNX broadcasts numpy's way, aligning shapes from the last dim;
// on the reversed shapes of the tape that is Julia's rule, aligning from the first, which
// the primitives apply: no op here needs to reshape for broadcasting. The ops that are a
// primitive's namesake (Neg, Add, Where, ...) import from onnx/namesakes.def; those here are
// wider than their primitive, or compositions of several.
#include <cmath>
#include <limits>
#include <optional>

#include "onnx/importer.h"
#include "onnx/rules/integer.h"

namespace ytape::onnx_import {

namespace {

Var in(Importer& im, const Node& n, int i) {
  return im.input(n, i);
}
DType dt(Importer& im, Var v) {
  return im.type(v).dtype;
}
Var k(Importer& im, Var like, double value) {
  return im.scalar(dt(im, like), value);
}

template <Prim P>
void binary(Importer& im, const Node& n) {
  im.set_output(n, 0, im.emit(P, {in(im, n, 0), in(im, n, 1)}));
}

// Integer division truncates in ONNX (onnx/rules/integer.h).
void div(Importer& im, const Node& n) {
  Var x = in(im, n, 0), y = in(im, n, 1);
  if (dt(im, x) != DType::i64) return binary<Prim::div>(im, n);
  im.set_output(n, 0, integer_div(im, x, y));
}

// fmod = 1: C's fmod, the rem primitive (integers through f64, onnx/rules/integer.h).
// fmod = 0, the remainder with the divisor's sign, ONNX defines for integers only.
void mod(Importer& im, const Node& n) {
  Var x = in(im, n, 0), y = in(im, n, 1);
  int64_t fmod = attr_int(n, "fmod", 0);
  if (fmod != 0 && fmod != 1) user_error("fmod is 0 or 1, not {}", fmod);
  if (dt(im, x) == DType::i64) return im.set_output(n, 0, integer_mod(im, x, y, fmod == 1));
  if (fmod != 1) user_error("Mod of floats needs fmod = 1 (ONNX's rule), not {}", fmod);
  binary<Prim::rem>(im, n);
}

// The exponent may have another dtype than the base; the result has the base's. Integers
// go through f64, whose pow is exact where the power is below 2^53, and are rounded back.
// x^2 and x^3 of floats by a constant exponent (PyTorch's tanh GELU exports x^3) are the
// products x*x and (x*x)*x, as the language traces them (Julia's literal_pow): the C
// library's pow is a scalar call per element.
std::optional<Var> small_power(Importer& im, Var x, Var y) {
  const Tensor* e = im.known(y);
  if (!is_float(dt(im, x)) || e == nullptr || e->size() != 1 || im.rank(y) > im.rank(x))
    return std::nullopt;
  double v = e->dtype() == DType::f32   ? e->data<float>()[0]
             : e->dtype() == DType::f64 ? e->data<double>()[0]
                                        : std::nan("");
  if (v != 2 && v != 3) return std::nullopt;
  Var square = im.op<Prim::mul>({x, x});
  return v == 2 ? square : im.op<Prim::mul>({square, x});
}

void pow(Importer& im, const Node& n) {
  Var x = in(im, n, 0), y = in(im, n, 1);
  DType d = dt(im, x);
  if (!is_float(d) && d != DType::i64) unsupported("Pow of " + std::string(dtype_name(d)));
  if (std::optional<Var> p = small_power(im, x, y)) return im.set_output(n, 0, *p);
  DType work = is_float(d) ? d : DType::f64;
  if (d != work) x = im.op<Prim::convert>({x}, {.dtype = work});
  if (dt(im, y) != work) y = im.op<Prim::convert>({y}, {.dtype = work});
  Var p = im.op<Prim::pow>({x, y});
  if (d != work) p = im.op<Prim::convert>({im.op<Prim::round>({p})}, {.dtype = d});
  im.set_output(n, 0, p);
}

// x << y is x 2^y, x >> y is x / 2^y truncated (onnx/rules/integer.h); an output of the
// shifted type wraps away what << carried beyond it.
void bit_shift(Importer& im, const Node& n) {
  Var x = in(im, n, 0), y = in(im, n, 1);
  if (dt(im, x) != DType::i64) unsupported("BitShift of " + std::string(dtype_name(dt(im, x))));
  std::string direction = attr_string(n, "direction", "");
  if (direction != "LEFT" && direction != "RIGHT")
    user_error("direction is LEFT or RIGHT, not '{}'", direction);
  Var exponent = im.op<Prim::convert>({y}, {.dtype = DType::f64});
  Var power = im.op<Prim::pow>({im.scalar(DType::f64, 2), exponent});
  power = im.op<Prim::convert>({power}, {.dtype = DType::i64});
  im.set_output(n, 0,
                direction == "LEFT" ? im.op<Prim::mul>({x, power}) : integer_div(im, x, power));
}

// Max, Min, Sum: one or more arguments, folded left to right.
template <Prim P>
Var fold_inputs(Importer& im, const Node& n) {
  Var acc = in(im, n, 0);
  for (int i = 1; i < n.input_size(); ++i) acc = im.emit(P, {acc, in(im, n, i)});
  return acc;
}
template <Prim P>
void variadic(Importer& im, const Node& n) {
  im.set_output(n, 0, fold_inputs<P>(im, n));
}
void mean(Importer& im, const Node& n) {
  Var sum = fold_inputs<Prim::add>(im, n);
  im.set_output(n, 0, im.op<Prim::div>({sum, k(im, sum, n.input_size())}));
}

// y = 1 / x
void reciprocal(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, im.op<Prim::div>({k(im, x, 1), x}));
}

void logical_not(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, im.op<Prim::eq>({x, k(im, x, 0)}));
}
void logical_and(Importer& im, const Node& n) {
  Var a = in(im, n, 0), b = in(im, n, 1);
  im.set_output(n, 0, im.op<Prim::select>({a, b, k(im, a, 0)}));
}
void logical_or(Importer& im, const Node& n) {
  Var a = in(im, n, 0), b = in(im, n, 1);
  im.set_output(n, 0, im.op<Prim::select>({a, k(im, a, 1), b}));
}

// x < 0 ? f(x) : x
Var negative_part(Importer& im, Var x, Var fx) {
  return im.op<Prim::select>({im.op<Prim::lt>({x, k(im, x, 0)}), fx, x});
}

// alpha * x for x < 0
void leaky_relu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var ax = im.op<Prim::mul>({x, k(im, x, attr_float(n, "alpha", 0.01))});
  im.set_output(n, 0, negative_part(im, x, ax));
}
// slope * x for x < 0, slope broadcast to x
void prelu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, negative_part(im, x, im.op<Prim::mul>({x, in(im, n, 1)})));
}
// alpha * (exp(x) - 1) for x < 0
void elu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var e = im.op<Prim::mul>({im.op<Prim::expm1>({x}), k(im, x, attr_float(n, "alpha", 1))});
  im.set_output(n, 0, negative_part(im, x, e));
}
// gamma * (x > 0 ? x : alpha * (exp(x) - 1))
void selu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  double alpha = attr_float(n, "alpha", 1.67326319217681884765625);
  double gamma = attr_float(n, "gamma", 1.05070102214813232421875);
  Var ax = im.op<Prim::sub>(
      {im.op<Prim::mul>({im.op<Prim::exp>({x}), k(im, x, alpha)}), k(im, x, alpha)});
  Var pos = im.op<Prim::gt>({x, k(im, x, 0)});
  im.set_output(n, 0, im.op<Prim::mul>({im.op<Prim::select>({pos, x, ax}), k(im, x, gamma)}));
}
// max(0, x) + min(0, alpha * (exp(x / alpha) - 1))
void celu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var alpha = k(im, x, attr_float(n, "alpha", 1));
  Var e = im.op<Prim::mul>({alpha, im.op<Prim::expm1>({im.op<Prim::div>({x, alpha})})});
  Var zero = k(im, x, 0);
  im.set_output(n, 0, im.op<Prim::add>({im.op<Prim::max>({zero, x}), im.op<Prim::min>({zero, e})}));
}
// x > alpha ? x : 0
void thresholded_relu(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var above = im.op<Prim::gt>({x, k(im, x, attr_float(n, "alpha", 1))});
  im.set_output(n, 0, im.op<Prim::select>({above, x, k(im, x, 0)}));
}
// max(0, min(1, alpha * x + beta))
Var hard_sigmoid_of(Importer& im, Var x, double alpha, double beta) {
  Var lin = im.op<Prim::add>({im.op<Prim::mul>({x, k(im, x, alpha)}), k(im, x, beta)});
  return im.op<Prim::max>({k(im, x, 0), im.op<Prim::min>({k(im, x, 1), lin})});
}
void hard_sigmoid(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0,
                hard_sigmoid_of(im, x, attr_float(n, "alpha", 0.2), attr_float(n, "beta", 0.5)));
}
// x * hard_sigmoid(x) with alpha = 1/6, beta = 1/2
void hard_swish(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, im.op<Prim::mul>({x, hard_sigmoid_of(im, x, 1.0 / 6, 0.5)}));
}
// x / (1 + |x|)
void softsign(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0,
                im.op<Prim::div>({x, im.op<Prim::add>({k(im, x, 1), im.op<Prim::abs>({x})})}));
}
// x * tanh(softplus(x))
void mish(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, im.op<Prim::mul>({x, im.op<Prim::tanh>({im.op<Prim::softplus>({x})})}));
}

// x < -lambd ? x + bias : x > lambd ? x - bias : 0
void shrink(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  double lambd = attr_float(n, "lambd", 0.5), bias = attr_float(n, "bias", 0);
  Var above = im.op<Prim::select>(
      {im.op<Prim::gt>({x, k(im, x, lambd)}), im.op<Prim::sub>({x, k(im, x, bias)}), k(im, x, 0)});
  im.set_output(n, 0,
                im.op<Prim::select>({im.op<Prim::lt>({x, k(im, x, -lambd)}),
                                     im.op<Prim::add>({x, k(im, x, bias)}), above}));
}

// min(max(x, lo), hi), each bound optional
void clip(Importer& im, const Node& n) {
  Var y = in(im, n, 0);
  if (im.has_input(n, 1)) y = im.op<Prim::max>({y, in(im, n, 1)});
  if (im.has_input(n, 2)) y = im.op<Prim::min>({y, in(im, n, 2)});
  im.set_output(n, 0, y);
}

void is_nan(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  im.set_output(n, 0, im.op<Prim::ne>({x, x}));
}
void is_inf(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  double inf = std::numeric_limits<double>::infinity();
  bool pos = attr_int(n, "detect_positive", 1) != 0, neg = attr_int(n, "detect_negative", 1) != 0;
  Var y = pos && neg ? im.op<Prim::eq>({im.op<Prim::abs>({x}), k(im, x, inf)})
          : pos      ? im.op<Prim::eq>({x, k(im, x, inf)})
          : neg      ? im.op<Prim::eq>({x, k(im, x, -inf)})
                     : im.op<Prim::fill>(
                      {}, {.value = 0, .dtype = DType::boolean, .shape = im.type(x).shape});
  im.set_output(n, 0, y);
}

// The hyperbolic functions and their inverses, in terms of exp and log.
Var half(Importer& im, Var x) {
  return im.op<Prim::mul>({x, k(im, x, 0.5)});
}
// (exp(x) - exp(-x)) / 2
void sinh(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var d = im.op<Prim::sub>({im.op<Prim::exp>({x}), im.op<Prim::exp>({im.op<Prim::neg>({x})})});
  im.set_output(n, 0, half(im, d));
}
// (exp(x) + exp(-x)) / 2
void cosh(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var s = im.op<Prim::add>({im.op<Prim::exp>({x}), im.op<Prim::exp>({im.op<Prim::neg>({x})})});
  im.set_output(n, 0, half(im, s));
}
// log(x + sqrt(x^2 + c)): asinh with c = 1, acosh with c = -1
template <int C>
void inverse_hyperbolic(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var root = im.op<Prim::sqrt>({im.op<Prim::add>({im.op<Prim::mul>({x, x}), k(im, x, C)})});
  im.set_output(n, 0, im.op<Prim::log>({im.op<Prim::add>({x, root})}));
}
// (log1p(x) - log1p(-x)) / 2
void atanh(Importer& im, const Node& n) {
  Var x = in(im, n, 0);
  Var d = im.op<Prim::sub>({im.op<Prim::log1p>({x}), im.op<Prim::log1p>({im.op<Prim::neg>({x})})});
  im.set_output(n, 0, half(im, d));
}

}  // namespace

void add_elementwise_rules(Rules& r) {
  r["Shrink"] = shrink;
  r["Div"] = div;
  r["Pow"] = pow;
  r["BitShift"] = bit_shift;
  r["Mod"] = mod;
  r["Xor"] = binary<Prim::ne>;
  r["Max"] = variadic<Prim::max>;
  r["Min"] = variadic<Prim::min>;
  r["Sum"] = variadic<Prim::add>;
  r["Mean"] = mean;
  r["Reciprocal"] = reciprocal;
  r["Not"] = logical_not;
  r["And"] = logical_and;
  r["Or"] = logical_or;
  r["LeakyRelu"] = leaky_relu;
  r["PRelu"] = prelu;
  r["Elu"] = elu;
  r["Selu"] = selu;
  r["Celu"] = celu;
  r["ThresholdedRelu"] = thresholded_relu;
  r["HardSigmoid"] = hard_sigmoid;
  r["HardSwish"] = hard_swish;
  r["Softsign"] = softsign;
  r["Mish"] = mish;
  r["Clip"] = clip;
  r["IsNaN"] = is_nan;
  r["IsInf"] = is_inf;
  r["Sinh"] = sinh;
  r["Cosh"] = cosh;
  r["Asinh"] = inverse_hyperbolic<1>;
  r["Acosh"] = inverse_hyperbolic<-1>;
  r["Atanh"] = atanh;
}

}  // namespace ytape::onnx_import
