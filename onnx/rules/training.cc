// The optimizers of ONNX's training domain (ai.onnx.preview.training): Adagrad, Momentum
// and Adam, each updating n tensors at once from a learning rate R and a step count T
// (scalars), elementwise as their definitions say. T is a value of the model, so what
// depends on it (T > 0, alpha^T) is computed in the tape.
#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

struct Ops {
  Importer& im;
  DType dtype;
  Var k(double v) const { return im.scalar(dtype, v); }
  Var add(Var a, Var b) const { return im.op<Prim::add>({a, b}); }
  Var sub(Var a, Var b) const { return im.op<Prim::sub>({a, b}); }
  Var mul(Var a, Var b) const { return im.op<Prim::mul>({a, b}); }
  Var div(Var a, Var b) const { return im.op<Prim::div>({a, b}); }
  Var sqrt(Var a) const { return im.op<Prim::sqrt>({a}); }
  Var pow(Var a, Var b) const { return im.op<Prim::pow>({a, b}); }
  // T > 0 ? yes : no, for the step count T (an integer)
  Var if_started(Var t, Var yes, Var no) const {
    return im.op<Prim::select>({im.op<Prim::gt>({t, im.scalar(im.type(t).dtype, 0)}), yes, no});
  }
  // g + norm_coefficient x, the gradient with L2 regularization
  Var regularized(const Node& n, Var x, Var g) const {
    return add(mul(k(attr_float(n, "norm_coefficient", 0)), x), g);
  }
};

// The number of tensors updated by an optimizer with `per_tensor` inputs for each.
int tensors(Importer& im, const Node& n, int per_tensor) {
  int count = (n.input_size() - 2) / per_tensor;
  if (count < 1 || n.input_size() != 2 + per_tensor * count)
    user_error("{} inputs are not R, T and {} per tensor", n.input_size(), per_tensor);
  DType d = im.type(im.input(n, 0)).dtype;
  if (!is_float(d)) user_error("R must be floats, not {}", dtype_name(d));
  return count;
}

// r = R / (1 + T decay); h' = h + g^2; x' = x - r g / (sqrt(h') + epsilon)
void adagrad(Importer& im, const Node& n) {
  int count = tensors(im, n, 3);
  Ops o{im, im.type(im.input(n, 0)).dtype};
  Var t = im.op<Prim::convert>({im.input(n, 1)}, {.dtype = o.dtype});
  // One op per statement where two would be arguments of one call (C++ leaves their order
  // open; the tape's must not depend on the compiler).
  Var decay = o.mul(t, o.k(attr_float(n, "decay_factor", 0)));
  Var r = o.div(im.input(n, 0), o.add(o.k(1), decay));
  Var epsilon = o.k(attr_float(n, "epsilon", 1e-6));
  for (int i = 0; i < count; ++i) {
    Var x = im.input(n, 2 + i), g = o.regularized(n, x, im.input(n, 2 + count + i));
    Var h = o.add(im.input(n, 2 + 2 * count + i), o.mul(g, g));
    Var denominator = o.add(o.sqrt(h), epsilon);
    im.set_output(n, i, o.sub(x, o.div(o.mul(r, g), denominator)));
    im.set_output(n, count + i, h);
  }
}

// v' = alpha v + (T > 0 ? beta : 1) g; x' = x - R v' (standard) or x - R (g + alpha v')
// (nesterov)
void momentum(Importer& im, const Node& n) {
  int count = tensors(im, n, 3);
  Ops o{im, im.type(im.input(n, 0)).dtype};
  std::string mode = attr_string(n, "mode", "");
  if (mode != "standard" && mode != "nesterov")
    user_error("mode '{}' is not standard or nesterov", mode);
  Var alpha = o.k(attr_float(n, "alpha", 0)), r = im.input(n, 0);
  Var beta = o.k(attr_float(n, "beta", 0)), one = o.k(1);
  beta = o.if_started(im.input(n, 1), beta, one);
  for (int i = 0; i < count; ++i) {
    Var x = im.input(n, 2 + i), g = o.regularized(n, x, im.input(n, 2 + count + i));
    Var kept = o.mul(alpha, im.input(n, 2 + 2 * count + i));
    Var v = o.add(kept, o.mul(beta, g));
    Var step = mode == "standard" ? v : o.add(g, o.mul(alpha, v));
    im.set_output(n, i, o.sub(x, o.mul(r, step)));
    im.set_output(n, count + i, v);
  }
}

// v' = alpha v + (1 - alpha) g; h' = beta h + (1 - beta) g^2; the rate R sqrt(1 - beta^T)
// / (1 - alpha^T) once T > 0; x' = (1 - norm_coefficient_post) (x - rate v' / (sqrt(h') +
// epsilon))
void adam(Importer& im, const Node& n) {
  int count = tensors(im, n, 4);
  Ops o{im, im.type(im.input(n, 0)).dtype};
  double alpha = attr_float(n, "alpha", 0.9), beta = attr_float(n, "beta", 0.999);
  Var r = im.input(n, 0), t = im.op<Prim::convert>({im.input(n, 1)}, {.dtype = o.dtype});
  auto one_minus_power = [&](double base) {
    Var one = o.k(1);
    return o.sub(one, o.pow(o.k(base), t));
  };
  Var numerator = o.mul(r, o.sqrt(one_minus_power(beta)));
  Var corrected = o.div(numerator, one_minus_power(alpha));
  Var rate = o.if_started(im.input(n, 1), corrected, r);
  Var epsilon = o.k(attr_float(n, "epsilon", 1e-6));
  Var keep = o.k(1 - attr_float(n, "norm_coefficient_post", 0));
  for (int i = 0; i < count; ++i) {
    Var x = im.input(n, 2 + i), g = o.regularized(n, x, im.input(n, 2 + count + i));
    // a p + (1 - a) q
    auto mix = [&](double a, Var p, Var q) {
      Var kept = o.mul(o.k(a), p);
      Var fresh = o.k(1 - a);
      return o.add(kept, o.mul(fresh, q));
    };
    Var v = mix(alpha, im.input(n, 2 + 2 * count + i), g);
    Var h = mix(beta, im.input(n, 2 + 3 * count + i), o.mul(g, g));
    Var denominator = o.add(o.sqrt(h), epsilon);
    Var step = o.div(o.mul(rate, v), denominator);
    im.set_output(n, i, o.mul(keep, o.sub(x, step)));
    im.set_output(n, count + i, v);
    im.set_output(n, 2 * count + i, h);
  }
}

}  // namespace

void add_training_rules(Rules& r) {
  r["Adagrad"] = adagrad;
  r["Momentum"] = momentum;
  r["Adam"] = adam;
}

}  // namespace ytape::onnx_import
