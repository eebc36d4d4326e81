// Random ops over the `rand` and `randn` primitives: RandomUniform, RandomNormal, their
// -Like forms, Bernoulli, and Dropout (in training mode a random mask; in inference the
// identity). A run draws them from its random key, so they follow ONNX's distributions but
// not its numbers, which its runtimes draw from other generators (docs/onnx.md, Random ops).
#include "onnx/importer.h"
#include "onnx/proto.h"

namespace ytape::onnx_import {

namespace {

// The dtype the attribute `attr` names, or `fallback` without one; with `floats`, one of
// the draws' dtypes (f32, f64, f16).
DType dtype_attr(const Node& n, std::string_view attr, DType fallback, bool floats) {
  if (!find_attr(n, attr)) return fallback;
  auto to = static_cast<int32_t>(attr_int(n, attr, 0));
  std::optional<DType> dtype = to_dtype(to, true);
  if (!dtype || (floats && !is_float(*dtype)))
    unsupported(fmt::format("{} of {}", n.op_type(), onnx_dtype_name(to)));
  return *dtype;
}

DType draw_dtype(Importer& im, const Node& n, Var like) {
  DType d = im.type(like).dtype;
  if (!find_attr(n, "dtype") && !is_float(d)) {
    user_error("the input is {}, so the dtype attribute must name a float type", dtype_name(d));
  }
  return dtype_attr(n, "dtype", d, true);
}

Var scaled(Importer& im, Var x, DType d, double scale, double shift) {
  if (scale != 1) x = im.op<Prim::mul>({x, im.scalar(d, scale)});
  return shift != 0 ? im.op<Prim::add>({x, im.scalar(d, shift)}) : x;
}

// low + (high - low) u, u uniform in [0, 1).
Var uniform(Importer& im, const Node& n, DType d, const Shape& shape) {
  double low = attr_float(n, "low", 0), high = attr_float(n, "high", 1);
  Var u = im.op<Prim::rand>({}, {.dtype = d, .shape = shape, .seed = im.random_seed(n)});
  return scaled(im, u, d, high - low, low);
}

// mean + scale z, z standard normal.
Var normal(Importer& im, const Node& n, DType d, const Shape& shape) {
  double mean = attr_float(n, "mean", 0), scale = attr_float(n, "scale", 1);
  Var z = im.op<Prim::randn>({}, {.dtype = d, .shape = shape, .seed = im.random_seed(n)});
  return scaled(im, z, d, scale, mean);
}

template <Var (*Draw)(Importer&, const Node&, DType, const Shape&)>
void random_of_shape(Importer& im, const Node& n) {
  if (!find_attr(n, "shape")) user_error("the shape attribute is missing");
  DType d = dtype_attr(n, "dtype", DType::f32, true);
  im.set_output(n, 0, Draw(im, n, d, reversed(attr_ints(n, "shape"))));
}

template <Var (*Draw)(Importer&, const Node&, DType, const Shape&)>
void random_like(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  im.set_output(n, 0, Draw(im, n, draw_dtype(im, n, x), im.type(x).shape));
}

// 1 where a uniform draw is below p (so with probability p), in the dtype asked, p's by
// default; as ONNX's function body of Bernoulli (RandomUniformLike, Greater, Cast).
void bernoulli(Importer& im, const Node& n) {
  Var p = im.input(n, 0);
  DType pd = im.type(p).dtype;
  if (!is_float(pd)) user_error("the probabilities are {}, not floats", dtype_name(pd));
  Var u =
      im.op<Prim::rand>({}, {.dtype = pd, .shape = im.type(p).shape, .seed = im.random_seed(n)});
  Var one = im.op<Prim::lt>({u, p});
  DType to = dtype_attr(n, "dtype", pd, false);
  im.set_output(n, 0, to == DType::boolean ? one : im.op<Prim::convert>({one}, {.dtype = to}));
}

// In training mode, each element kept where a uniform draw is at least the ratio (so with
// probability 1 - ratio) and scaled by 1 / (1 - ratio), zero elsewhere, as ONNX's reference;
// the mask tells which were kept. training_mode and ratio are static; a ratio of 0, or
// inference, keeps all (older Dropouts, whose ratio is an attribute, only infer).
void dropout(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  bool training = im.has_input(n, 2) && im.static_number(n, 2) != 0;
  double ratio = training && im.has_input(n, 1) ? im.static_number(n, 1) : 0.5;
  const Shape shape = im.type(x).shape;
  if (!training || ratio == 0) {
    im.set_output(n, 0, x);
    im.set_output(n, 1,
                  im.op<Prim::fill>({}, {.value = 1, .dtype = DType::boolean, .shape = shape}));
    return;
  }
  if (!(ratio > 0 && ratio < 1)) user_error("ratio {} is not in [0, 1)", ratio);
  DType d = im.type(x).dtype;
  if (!is_float(d)) user_error("the input is {}, not floats", dtype_name(d));
  Var u = im.op<Prim::rand>({}, {.dtype = d, .shape = shape, .seed = im.random_seed(n)});
  Var keep = im.op<Prim::ge>({u, im.scalar(d, ratio)});
  Var kept = im.op<Prim::div>({x, im.scalar(d, 1 - ratio)});
  im.set_output(n, 0, im.op<Prim::select>({keep, kept, im.scalar(d, 0)}));
  im.set_output(n, 1, keep);
}

}  // namespace

void add_random_rules(Rules& r) {
  r["RandomUniform"] = random_of_shape<uniform>;
  r["RandomNormal"] = random_of_shape<normal>;
  r["RandomUniformLike"] = random_like<uniform>;
  r["RandomNormalLike"] = random_like<normal>;
  r["Bernoulli"] = bernoulli;
  r["Dropout"] = dropout;
}

}  // namespace ytape::onnx_import
