// One rule per primitive, grouped by family as the primitives are. ytape dim d of a rank-r
// tensor is ONNX axis r - d; shapes and per-dim lists are reversed, [w, h] lists become
// [H, W] and pads [w_lo, w_hi, h_lo, h_hi] become [H_begin, W_begin, H_end, W_end].
#include "onnx/export_rules.h"

#include <algorithm>
#include <array>
#include <cstring>
#include <map>

#include "onnx/import.h"
#include "onnx/marks.h"
#include "onnx/proto.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

using Rule = void (*)(Exporter& ex, const Op& op);

std::string in(Exporter& ex, const Op& op, size_t i) {
  return ex.name(op.args[i]);
}
int rank(Exporter& ex, Var v) {
  return ex.type(v).rank();
}
int64_t axis(Exporter& ex, Var v, int64_t dim) {
  return rank(ex, v) - dim;
}
std::vector<int64_t> reversed(std::vector<int64_t> v) {
  return {v.rbegin(), v.rend()};
}
void done(Exporter& ex, const Op& op, onnx::NodeProto& n) {
  ex.name(op.outs[0], n.output(0));
}
[[noreturn]] void refuse(const std::string& why) {
  throw UnsupportedError(why);
}

// A tensor of `shape` whose every element is `v` in `dtype` (as `convert` rounds it).
Tensor holding(DType dtype, Shape shape, double v) {
  Tensor t(Type{dtype, std::move(shape)});
  std::array<uint8_t, 8> element = scalar_bytes(dtype, v);
  auto* bytes = static_cast<uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.size(); ++i) {
    std::memcpy(bytes + i * dtype_size(dtype), element.data(), dtype_size(dtype));
  }
  return t;
}

// A ConstantOfShape of ytape shape `shape` filled with `v`.
std::string filled(Exporter& ex, DType dtype, const Shape& shape, double v) {
  onnx::NodeProto& n = ex.node("ConstantOfShape", {ex.ints(reversed(shape))});
  auto* attr = n.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *attr->mutable_t() = tensor_proto(holding(dtype, {1}, v), "");
  return n.output(0);
}

// ---- elementwise ----------------------------------------------------------------------
const std::map<Prim, const char*>& simple_names() {
  static const std::map<Prim, const char*> names = {
      {Prim::neg, "Neg"},           {Prim::exp, "Exp"},           {Prim::log, "Log"},
      {Prim::sqrt, "Sqrt"},         {Prim::abs, "Abs"},           {Prim::sign, "Sign"},
      {Prim::sin, "Sin"},           {Prim::cos, "Cos"},           {Prim::tan, "Tan"},
      {Prim::tanh, "Tanh"},         {Prim::sigmoid, "Sigmoid"},   {Prim::relu, "Relu"},
      {Prim::softplus, "Softplus"}, {Prim::erf, "Erf"},           {Prim::floor, "Floor"},
      {Prim::ceil, "Ceil"},         {Prim::round, "Round"},       {Prim::asin, "Asin"},
      {Prim::acos, "Acos"},         {Prim::atan, "Atan"},         {Prim::add, "Add"},
      {Prim::sub, "Sub"},           {Prim::mul, "Mul"},           {Prim::div, "Div"},
      {Prim::pow, "Pow"},           {Prim::max, "Max"},           {Prim::min, "Min"},
      {Prim::eq, "Equal"},          {Prim::lt, "Less"},           {Prim::le, "LessOrEqual"},
      {Prim::gt, "Greater"},        {Prim::ge, "GreaterOrEqual"}, {Prim::select, "Where"}};
  return names;
}

void simple(Exporter& ex, const Op& op) {
  std::vector<std::string> args;
  for (size_t i = 0; i < op.args.size(); ++i) args.push_back(in(ex, op, i));
  done(ex, op, ex.node(simple_names().at(op.prim), args));
}
void log1p(Exporter& ex, const Op& op) {  // log(1 + x)
  DType d = ex.type(op.args[0]).dtype;
  done(ex, op, ex.node("Log", {ex.node("Add", {in(ex, op, 0), ex.scalar(d, 1)}).output(0)}));
}
void expm1(Exporter& ex, const Op& op) {  // exp(x) - 1
  DType d = ex.type(op.args[0]).dtype;
  done(ex, op, ex.node("Sub", {ex.node("Exp", {in(ex, op, 0)}).output(0), ex.scalar(d, 1)}));
}
void ne(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Not", {ex.node("Equal", {in(ex, op, 0), in(ex, op, 1)}).output(0)}));
}
void rem(Exporter& ex, const Op& op) {  // C's fmod: ONNX's Mod with fmod = 1
  onnx::NodeProto& n = ex.node("Mod", {in(ex, op, 0), in(ex, op, 1)});
  set_attr(n, "fmod", int64_t{1});
  done(ex, op, n);
}
void convert(Exporter& ex, const Op& op) {
  onnx::NodeProto& n = ex.node("Cast", {in(ex, op, 0)});
  set_attr(n, "to", int64_t{onnx_import::to_onnx_dtype(attrs_of<Prim::convert>(op.attrs).dtype)});
  done(ex, op, n);
}

// ---- reduce -----------------------------------------------------------------------------
std::vector<int64_t> axes(Exporter& ex, Var x, const std::vector<int64_t>& dims) {
  std::vector<int64_t> a;
  for (int64_t d : dims) a.push_back(axis(ex, x, d));
  return a;
}
template <Prim P>
void reduction(Exporter& ex, const Op& op) {
  const auto& dims = attrs_of<P>(op.attrs).dims;
  if (dims.empty()) return done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
  std::vector<int64_t> a = axes(ex, op.args[0], dims);
  onnx::NodeProto& n =
      P == Prim::sum ? ex.node("ReduceSum", {in(ex, op, 0), ex.ints(a)})
                     : ex.node(P == Prim::maximum ? "ReduceMax" : "ReduceMin", {in(ex, op, 0)});
  if (P != Prim::sum) set_attr(n, "axes", a);
  set_attr(n, "keepdims", int64_t{0});
  done(ex, op, n);
}
void argmax(Exporter& ex, const Op& op) {  // 0-based, plus 1
  onnx::NodeProto& n = ex.node("ArgMax", {in(ex, op, 0)});
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::argmax>(op.attrs).dim));
  set_attr(n, "keepdims", int64_t{0});
  done(ex, op, ex.node("Add", {n.output(0), ex.scalar(DType::i64, 1)}));
}
template <Prim P>
void softmax(Exporter& ex, const Op& op) {
  const auto& dims = attrs_of<P>(op.attrs).dims;
  if (dims.size() != 1) refuse("a softmax over other than one dim");
  onnx::NodeProto& n = ex.node(P == Prim::softmax ? "Softmax" : "LogSoftmax", {in(ex, op, 0)});
  set_attr(n, "axis", axis(ex, op.args[0], dims[0]));
  done(ex, op, n);
}

// ---- shape ------------------------------------------------------------------------------
// A 0 in the shape is a 0, not "copy the input's dim": allowzero.
void reshape(Exporter& ex, const Op& op) {
  const Shape& shape = ex.type(op.outs[0]).shape;
  bool zero = std::find(shape.begin(), shape.end(), 0) != shape.end();
  onnx::NodeProto& n = ex.node("Reshape", {in(ex, op, 0), ex.ints(reversed(shape))});
  if (zero) set_attr(n, "allowzero", int64_t{1});
  done(ex, op, n);
}
void broadcast_to(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Expand", {in(ex, op, 0), ex.ints(reversed(ex.type(op.outs[0]).shape))}));
}
// ytape's perm'[j] = r - perm[r - 1 - j], inverted: perm[i] = r - perm'[r - 1 - i].
void permutedims(Exporter& ex, const Op& op) {
  const auto& yperm = attrs_of<Prim::permutedims>(op.attrs).perm;
  int r = static_cast<int>(yperm.size());
  // A scalar's: ONNX's checker wants a perm of one entry or more.
  if (r == 0) return done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
  std::vector<int64_t> perm(r);
  for (int i = 0; i < r; ++i) perm[i] = r - yperm[r - 1 - i];
  onnx::NodeProto& n = ex.node("Transpose", {in(ex, op, 0)});
  set_attr(n, "perm", perm);
  done(ex, op, n);
}
// 1-based inclusive [start, stop] by step: 0-based start - 1, exclusive end stop.
void slice(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::slice>(op.attrs);
  std::vector<int64_t> starts, ends, ax;
  for (size_t d = 0; d < a.start.size(); ++d) {
    starts.push_back(a.start[d] - 1), ends.push_back(a.stop[d]);
    ax.push_back(axis(ex, op.args[0], static_cast<int64_t>(d) + 1));
  }
  done(ex, op,
       ex.node("Slice",
               {in(ex, op, 0), ex.ints(starts), ex.ints(ends), ex.ints(ax), ex.ints(a.step)}));
}
void concat(Exporter& ex, const Op& op) {
  std::vector<std::string> args;
  for (size_t i = 0; i < op.args.size(); ++i) args.push_back(in(ex, op, i));
  onnx::NodeProto& n = ex.node("Concat", args);
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::concat>(op.attrs).dim));
  done(ex, op, n);
}
// x (of ytape shape `shape`, updated) with `interior` elements `value` between each two
// along ytape dim `dim`: a unit dim before it, concatenated there with the filler, merges
// with it into n (1 + interior) elements, whose last `interior` are cut.
std::string interleave(Exporter& ex, std::string x, Shape& shape, int dim, int64_t interior,
                       DType dtype, double value) {
  int64_t n = shape[dim - 1];
  if (interior == 0 || n == 0) return x;
  Shape wide = shape;
  wide.insert(wide.begin() + (dim - 1), 1);
  x = ex.node("Reshape", {x, ex.ints(reversed(wide))}).output(0);
  Shape filler = wide;
  filler[dim - 1] = interior;
  onnx::NodeProto& joined = ex.node("Concat", {x, filled(ex, dtype, filler, value)});
  set_attr(joined, "axis", static_cast<int64_t>(wide.size()) - dim);
  shape[dim - 1] = n * (1 + interior);
  x = ex.node("Reshape", {joined.output(0), ex.ints(reversed(shape))}).output(0);
  shape[dim - 1] = (n - 1) * (1 + interior) + 1;
  int64_t ax = static_cast<int64_t>(shape.size()) - dim;
  return ex.node("Slice", {x, ex.ints({0}), ex.ints({shape[dim - 1]}), ex.ints({ax})}).output(0);
}
// An Identity node; its mark brings the primitive back, so that a model re-imported and
// differentiated again still stops the gradient there.
void stop_gradient(Exporter& ex, const Op& op) {
  done(ex, op, ex.node("Identity", {in(ex, op, 0)}));
}

void pad(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::pad>(op.attrs);
  DType d = ex.type(op.args[0]).dtype;
  Shape shape = ex.type(op.args[0]).shape;
  std::string x = in(ex, op, 0);
  for (size_t i = 0; i < a.interior.size(); ++i) {
    x = interleave(ex, x, shape, static_cast<int>(i) + 1, a.interior[i], d, a.value);
  }
  std::vector<int64_t> pads = reversed(a.lo), hi = reversed(a.hi);
  pads.insert(pads.end(), hi.begin(), hi.end());
  done(ex, op, ex.node("Pad", {x, ex.ints(pads), ex.scalar(d, a.value)}));
}

// ---- index ------------------------------------------------------------------------------
// GatherElements wants indices of the result's shape, 0-based.
void gather(Exporter& ex, const Op& op) {
  std::string idx =
      ex.node("Expand", {in(ex, op, 1), ex.ints(reversed(ex.type(op.outs[0]).shape))}).output(0);
  idx = ex.node("Sub", {idx, ex.scalar(DType::i64, 1)}).output(0);
  onnx::NodeProto& n = ex.node("GatherElements", {in(ex, op, 0), idx});
  set_attr(n, "axis", axis(ex, op.args[0], attrs_of<Prim::gather>(op.attrs).dim));
  done(ex, op, n);
}

// out = zeros, then out[..., idx, ...] += y: ScatterElements adding (opset 16) onto zeros,
// its indices 0-based and of y's shape.
std::string scatter_added(Exporter& ex, const std::string& y, const Type& yt, std::string idx,
                          const Shape& out, int64_t axis) {
  idx = ex.node("Expand", {idx, ex.ints(reversed(yt.shape))}).output(0);
  idx = ex.node("Sub", {idx, ex.scalar(DType::i64, 1)}).output(0);
  onnx::NodeProto& n = ex.node("ScatterElements", {filled(ex, yt.dtype, out, 0), idx, y});
  set_attr(n, "axis", axis);
  set_attr(n, "reduction", std::string("add"));
  return n.output(0);
}
void scatter_add(Exporter& ex, const Op& op) {
  const Type& yt = ex.type(op.args[0]);
  int64_t a = axis(ex, op.args[0], attrs_of<Prim::scatter_add>(op.attrs).dim);
  ex.name(op.outs[0],
          scatter_added(ex, in(ex, op, 0), yt, in(ex, op, 1), ex.type(op.outs[0]).shape, a));
}

// ---- linalg -----------------------------------------------------------------------------
// C' = op(B)' op(A)', the tape's tensors being ONNX's transposed matrices.
void matmul(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::matmul>(op.attrs);
  int r = rank(ex, op.args[0]);
  if (r == 2) {
    onnx::NodeProto& n = ex.node("Gemm", {in(ex, op, 1), in(ex, op, 0)});
    set_attr(n, "transA", int64_t{a.transpose_b}), set_attr(n, "transB", int64_t{a.transpose_a});
    return done(ex, op, n);
  }
  std::vector<int64_t> swap(r);
  for (int i = 0; i < r; ++i) swap[i] = i;
  std::swap(swap[r - 1], swap[r - 2]);
  auto maybe_swapped = [&](size_t i, bool t) {
    if (!t) return in(ex, op, i);
    onnx::NodeProto& n = ex.node("Transpose", {in(ex, op, i)});
    set_attr(n, "perm", swap);
    return n.output(0);
  };
  done(ex, op,
       ex.node("MatMul", {maybe_swapped(1, a.transpose_b), maybe_swapped(0, a.transpose_a)}));
}

// ---- conv and pool -----------------------------------------------------------------------
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p) {
  return {p[2], p[0], p[3], p[1]};
}

void conv2d(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::conv2d>(op.attrs);
  onnx::NodeProto& n = ex.node("Conv", {in(ex, op, 0), in(ex, op, 1)});
  set_attr(n, "strides", reversed(a.stride));
  set_attr(n, "pads", onnx_pads(a.pad));
  set_attr(n, "dilations", reversed(a.dilation));
  set_attr(n, "group", a.groups);
  done(ex, op, n);
}
// ConvTranspose of dy with weights w (ytape (kw, kh, cin/groups, cout)); its output padding
// makes up what the stride left over: shape - (s (in - 1) + (k - 1) d + 1 - pads).
template <typename A>
void transposed_conv(Exporter& ex, const Op& op, const std::string& w, const Shape& ws, const A& a,
                     int64_t groups) {
  const Shape dy = ex.type(op.args[0]).shape;
  std::vector<int64_t> extra(2);
  for (int d = 0; d < 2; ++d) {
    extra[d] = a.shape[d] - (a.stride[d] * (dy[d] - 1) + (ws[d] - 1) * a.dilation[d] + 1 -
                             a.pad[2 * d] - a.pad[2 * d + 1]);
  }
  onnx::NodeProto& n = ex.node("ConvTranspose", {in(ex, op, 0), w});
  set_attr(n, "strides", reversed(a.stride));
  set_attr(n, "pads", onnx_pads(a.pad));
  set_attr(n, "dilations", reversed(a.dilation));
  set_attr(n, "group", groups);
  set_attr(n, "output_padding", reversed(extra));
  done(ex, op, n);
}
// The gradient of conv2d for its input is ConvTranspose over the same weights.
void conv2d_backward_input(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::conv2d_backward_input>(op.attrs);
  transposed_conv(ex, op, in(ex, op, 1), ex.type(op.args[1]).shape, a, a.groups);
}
// Average pooling (padding counted) is a depthwise conv with weights 1/(kw kh); its
// gradient the ConvTranspose of those weights.
void avg_pool2d_backward(Exporter& ex, const Op& op) {
  const auto p = attrs_of<Prim::avg_pool2d_backward>(op.attrs);
  const Type& dy = ex.type(op.args[0]);
  Shape ws = {p.window[0], p.window[1], 1, dy.shape[2]};
  std::string w =
      ex.constant(holding(dy.dtype, ws, 1.0 / static_cast<double>(p.window[0] * p.window[1])));
  struct {
    std::vector<int64_t> shape, stride, pad, dilation;
  } a{p.shape, p.stride, p.pad, {1, 1}};
  transposed_conv(ex, op, w, ws, a, dy.shape[2]);
}
// dW[m, c, i, j] = Σ dy[n, m, oh, ow] · x[n, c, oh s + i d, ow s + j d] (x padded) is a
// Conv over x with dy as the filter, batch and channels swapped, stride and dilation
// swapped. Per group, x's (N, g, C/g, H, W) becomes (C/g, g N, H, W) so that group k of the
// Conv reads group k's channels; the result (C/g, M, kH', kW') may run past the kernel
// where the stride left rows over, and is cut to (M, C/g, kH, kW).
std::string transposed(Exporter& ex, const std::string& v, const std::vector<int64_t>& perm) {
  onnx::NodeProto& n = ex.node("Transpose", {v});
  set_attr(n, "perm", perm);
  return n.output(0);
}
void conv2d_backward_filter(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::conv2d_backward_filter>(op.attrs);
  const Shape x = ex.type(op.args[0]).shape;  // (w, h, c, n)
  int64_t g = a.groups, cg = x[2] / g;
  std::string xs =
      ex.node("Reshape", {in(ex, op, 0), ex.ints({x[3], g, cg, x[1], x[0]})}).output(0);
  xs = transposed(ex, xs, {2, 1, 0, 3, 4});
  xs = ex.node("Reshape", {xs, ex.ints({cg, g * x[3], x[1], x[0]})}).output(0);
  onnx::NodeProto& n = ex.node("Conv", {xs, transposed(ex, in(ex, op, 1), {1, 0, 2, 3})});
  set_attr(n, "strides", reversed(a.dilation));
  set_attr(n, "pads", onnx_pads(a.pad));
  set_attr(n, "dilations", reversed(a.stride));
  set_attr(n, "group", g);
  std::string cut = ex.node("Slice", {n.output(0), ex.ints({0, 0}),
                                      ex.ints({a.shape[1], a.shape[0]}), ex.ints({2, 3})})
                        .output(0);
  ex.name(op.outs[0], transposed(ex, cut, {1, 0, 2, 3}));
}
template <Prim P>
void pool(Exporter& ex, const Op& op) {
  const auto a = attrs_of<P>(op.attrs);
  onnx::NodeProto& n = ex.node(P == Prim::avg_pool2d ? "AveragePool" : "MaxPool", {in(ex, op, 0)});
  set_attr(n, "kernel_shape", reversed(a.window));
  set_attr(n, "strides", reversed(a.stride));
  set_attr(n, "pads", onnx_pads(a.pad));
  if (P == Prim::avg_pool2d) set_attr(n, "count_include_pad", int64_t{1});
  done(ex, op, n);
}

// ONNX's indices count over the whole tensor, row-major: ((n C + c) H + h) W + w; ytape's
// within the plane, 1-based, (w + h W) + 1. The difference, per (c, n), as a constant.
std::string plane_offsets(Exporter& ex, const Shape& image) {
  Tensor t(Type{DType::i64, {1, 1, image[2], image[3]}});
  for (int64_t k = 0; k < t.size(); ++k) t.data<int64_t>()[k] = k * image[0] * image[1] - 1;
  return ex.constant(t);
}
void max_pool2d_with_indices(Exporter& ex, const Op& op) {
  pool<Prim::max_pool2d_with_indices>(ex, op);
  onnx::NodeProto& n = ex.graph().mutable_node()->at(ex.graph().node_size() - 1);
  n.add_output(ex.fresh());
  std::string offsets = plane_offsets(ex, ex.type(op.args[0]).shape);
  ex.name(op.outs[1], ex.node("Sub", {n.output(1), offsets}).output(0));
}
// dx = zeros, then each dy added where its index points, plane by plane.
void max_pool2d_backward(Exporter& ex, const Op& op) {
  const Type& dy = ex.type(op.args[0]);
  const Shape& x = attrs_of<Prim::max_pool2d_backward>(op.attrs).shape;
  Shape planes = {dy.shape[0] * dy.shape[1], dy.shape[2], dy.shape[3]};
  auto flat = [&](size_t i) {
    return ex.node("Reshape", {in(ex, op, i), ex.ints(reversed(planes))}).output(0);
  };
  std::string dx =
      scatter_added(ex, flat(0), Type{dy.dtype, planes}, flat(1), {x[0] * x[1], x[2], x[3]}, 2);
  done(ex, op, ex.node("Reshape", {dx, ex.ints(reversed(x))}));
}

// ---- norm -------------------------------------------------------------------------------
// Training form in plain ops, as ytape computes it: statistics over every axis but the
// channel axis (ONNX's 1), mean = E[x], invstd = 1/sqrt(E[(x - mean)²] + eps). ONNX's
// BatchNormalization in training mode would need running statistics, which ytape lacks.
struct BatchStats {
  std::string centered, invstd;  // x - mean, and 1/sqrt(var + eps) kept as (1, C, 1, ...)
  std::string mean;              // kept as (1, C, 1, ...)
};
std::vector<int64_t> non_channel_axes(Exporter& ex, Var x) {
  std::vector<int64_t> a = {0};
  for (int i = 2; i < rank(ex, x); ++i) a.push_back(i);
  return a;
}
std::string reduce_mean(Exporter& ex, const std::string& v, const std::vector<int64_t>& a) {
  onnx::NodeProto& n = ex.node("ReduceMean", {v});
  set_attr(n, "axes", a);
  return n.output(0);
}
BatchStats batch_stats(Exporter& ex, const Op& op, double eps) {
  DType d = ex.type(op.args[0]).dtype;
  std::vector<int64_t> a = non_channel_axes(ex, op.args[0]);
  BatchStats s;
  s.mean = reduce_mean(ex, in(ex, op, 0), a);
  s.centered = ex.node("Sub", {in(ex, op, 0), s.mean}).output(0);
  std::string var = reduce_mean(ex, ex.node("Mul", {s.centered, s.centered}).output(0), a);
  std::string sd = ex.node("Sqrt", {ex.node("Add", {var, ex.scalar(d, eps)}).output(0)}).output(0);
  s.invstd = ex.node("Reciprocal", {sd}).output(0);
  return s;
}
// A (C,) vector as (1, C, 1, ...), to broadcast over x, and back.
std::string kept(Exporter& ex, Var x, const std::string& v) {
  std::vector<int64_t> shape(rank(ex, x), 1);
  shape[1] = ex.type(x).shape[rank(ex, x) - 2];
  return ex.node("Reshape", {v, ex.ints(shape)}).output(0);
}
std::string channel_vector(Exporter& ex, Var x, const std::string& v) {
  return ex.node("Reshape", {v, ex.ints({ex.type(x).shape[rank(ex, x) - 2]})}).output(0);
}
// y = (x - mean) · invstd · scale + bias
std::string normalized(Exporter& ex, const Op& op, const BatchStats& s) {
  Var x = op.args[0];
  std::string xhat = ex.node("Mul", {s.centered, s.invstd}).output(0);
  std::string scaled = ex.node("Mul", {xhat, kept(ex, x, in(ex, op, 1))}).output(0);
  return ex.node("Add", {scaled, kept(ex, x, in(ex, op, 2))}).output(0);
}
void batchnorm(Exporter& ex, const Op& op) {
  BatchStats s = batch_stats(ex, op, attrs_of<Prim::batchnorm>(op.attrs).eps);
  ex.name(op.outs[0], normalized(ex, op, s));
}
void batchnorm_with_stats(Exporter& ex, const Op& op) {
  BatchStats s = batch_stats(ex, op, attrs_of<Prim::batchnorm_with_stats>(op.attrs).eps);
  ex.name(op.outs[0], normalized(ex, op, s));
  ex.name(op.outs[1], channel_vector(ex, op.args[0], s.mean));
  ex.name(op.outs[2], channel_vector(ex, op.args[0], s.invstd));
}
// With xhat = (x - mean) · invstd over M elements per channel: dbias = Σdy,
// dscale = Σ dy · xhat, dx = scale · invstd · (dy - dbias/M - xhat · dscale/M).
void batchnorm_backward(Exporter& ex, const Op& op) {
  Var x = op.args[1];
  DType d = ex.type(x).dtype;
  std::string axes = ex.ints(non_channel_axes(ex, x)), dy = in(ex, op, 0);
  auto sum = [&](const std::string& v) { return ex.node("ReduceSum", {v, axes}).output(0); };
  auto mul = [&](const std::string& a, const std::string& b) {
    return ex.node("Mul", {a, b}).output(0);
  };
  std::string invstd = kept(ex, x, in(ex, op, 4));
  std::string xhat =
      mul(ex.node("Sub", {in(ex, op, 1), kept(ex, x, in(ex, op, 3))}).output(0), invstd);
  std::string dbias = sum(dy), dscale = sum(mul(dy, xhat));
  double count =
      static_cast<double>(ex.type(x).size()) / static_cast<double>(ex.type(op.args[2]).size());
  std::string per = ex.scalar(d, 1 / count);
  std::string inner =
      ex.node("Sub", {ex.node("Sub", {dy, mul(dbias, per)}).output(0), mul(xhat, mul(dscale, per))})
          .output(0);
  ex.name(op.outs[0], mul(mul(kept(ex, x, in(ex, op, 2)), invstd), inner));
  ex.name(op.outs[1], channel_vector(ex, x, dscale));
  ex.name(op.outs[2], channel_vector(ex, x, dbias));
}

// ---- creation ---------------------------------------------------------------------------
void fill(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::fill>(op.attrs);
  ex.name(op.outs[0], filled(ex, a.dtype, a.shape, a.value));
}
// iota: Range(1, n + 1) along the dim, in f32 for f16 (Range has no half), reshaped to
// that axis and expanded to the shape.
void iota(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::iota>(op.attrs);
  int64_t n = a.shape[a.dim - 1];
  DType range = a.dtype == DType::f16 ? DType::f32 : a.dtype;
  std::string x =
      ex.node("Range", {ex.scalar(range, 1), ex.scalar(range, static_cast<double>(n) + 1),
                        ex.scalar(range, 1)})
          .output(0);
  if (a.dtype != range) {
    onnx::NodeProto& c = ex.node("Cast", {x});
    set_attr(c, "to", int64_t{onnx_import::to_onnx_dtype(a.dtype)});
    x = c.output(0);
  }
  Shape along(a.shape.size(), 1);
  along[a.dim - 1] = n;
  x = ex.node("Reshape", {x, ex.ints(reversed(along))}).output(0);
  done(ex, op, ex.node("Expand", {x, ex.ints(reversed(a.shape))}));
}

// RandomUniform (in [0, 1)) and RandomNormal (standard): ONNX's runtimes draw other
// numbers of the same distribution; the seed, rounded to a float, keeps their draws
// repeatable, and the mark keeps it exact for ytape.
// A number is drawn as one element and reshaped: an attribute's empty list of ints does
// not survive protobuf (it reads as no list), so `shape` cannot say [].
template <Prim P>
void random(Exporter& ex, const Op& op) {
  const auto a = attrs_of<P>(op.attrs);
  bool number = a.shape.empty();
  onnx::NodeProto& n = ex.node(P == Prim::rand ? "RandomUniform" : "RandomNormal", {});
  set_attr(n, "dtype", int64_t{onnx_import::to_onnx_dtype(a.dtype)});
  set_attr(n, "shape", number ? std::vector<int64_t>{1} : reversed(a.shape));
  set_attr(n, "seed", static_cast<float>(a.seed));
  if (!number) return done(ex, op, n);
  std::string drawn = n.output(0);  // n may move when the next nodes are added
  done(ex, op, ex.node("Reshape", {drawn, ex.ints({})}));
}

const std::map<Prim, Rule>& rules() {
  static const std::map<Prim, Rule> table = [] {
    std::map<Prim, Rule> r;
    for (const auto& [p, name] : simple_names()) r[p] = simple;
    r[Prim::log1p] = log1p;
    r[Prim::expm1] = expm1;
    r[Prim::ne] = ne;
    r[Prim::rem] = rem;
    r[Prim::convert] = convert;
    r[Prim::sum] = reduction<Prim::sum>;
    r[Prim::maximum] = reduction<Prim::maximum>;
    r[Prim::minimum] = reduction<Prim::minimum>;
    r[Prim::argmax] = argmax;
    r[Prim::softmax] = softmax<Prim::softmax>;
    r[Prim::log_softmax] = softmax<Prim::log_softmax>;
    r[Prim::reshape] = reshape;
    r[Prim::broadcast_to] = broadcast_to;
    r[Prim::permutedims] = permutedims;
    r[Prim::slice] = slice;
    r[Prim::concat] = concat;
    r[Prim::pad] = pad;
    r[Prim::stop_gradient] = stop_gradient;
    r[Prim::gather] = gather;
    r[Prim::matmul] = matmul;
    r[Prim::conv2d] = conv2d;
    r[Prim::conv2d_backward_input] = conv2d_backward_input;
    r[Prim::conv2d_backward_filter] = conv2d_backward_filter;
    r[Prim::max_pool2d] = pool<Prim::max_pool2d>;
    r[Prim::max_pool2d_with_indices] = max_pool2d_with_indices;
    r[Prim::max_pool2d_backward] = max_pool2d_backward;
    r[Prim::scatter_add] = scatter_add;
    r[Prim::avg_pool2d] = pool<Prim::avg_pool2d>;
    r[Prim::avg_pool2d_backward] = avg_pool2d_backward;
    r[Prim::batchnorm] = batchnorm;
    r[Prim::batchnorm_with_stats] = batchnorm_with_stats;
    r[Prim::batchnorm_backward] = batchnorm_backward;
    r[Prim::fill] = fill;
    r[Prim::iota] = iota;
    r[Prim::rand] = random<Prim::rand>;
    r[Prim::randn] = random<Prim::randn>;
    return r;
  }();
  return table;
}

}  // namespace

onnx::TensorProto tensor_proto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_import::to_onnx_dtype(t.dtype()));
  for (auto d = t.shape().rbegin(); d != t.shape().rend(); ++d) p.add_dims(*d);
  p.set_raw_data(std::string(static_cast<const char*>(t.raw()), static_cast<size_t>(t.bytes())));
  return p;
}

const std::string& Exporter::name(Var v) {
  if (names_[v.id].empty()) names_[v.id] = fmt::format("%{}", v.id + 1);
  return names_[v.id];
}

std::string Exporter::fresh() {
  return fmt::format("%t{}", ++fresh_);
}

onnx::NodeProto& Exporter::node(const std::string& op_type, std::vector<std::string> inputs,
                                std::string out) {
  onnx::NodeProto* n = g_.add_node();
  n->set_op_type(op_type);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(out.empty() ? fresh() : out);
  return *n;
}

std::string Exporter::constant(const Tensor& t) {
  onnx::NodeProto& n = node("Constant", {});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *a->mutable_t() = tensor_proto(t, "");
  return n.output(0);
}

std::string Exporter::ints(const std::vector<int64_t>& v) {
  Tensor t(Type{DType::i64, {static_cast<int64_t>(v.size())}});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return constant(t);
}

std::string Exporter::scalar(DType dtype, double v) {
  return constant(holding(dtype, {}, v));
}

void Exporter::export_op(const Op& op) {
  if (op.kind == OpKind::constant) {
    Tensor t = Tensor::of_bytes(type(op.outs[0]), op.value);
    return name(op.outs[0], constant(t));
  }
  auto rule = rules().find(op.prim);
  if (rule == rules().end()) refuse(fmt::format("{} has no ONNX form here", prim_name(op.prim)));
  const int first = g_.node_size();
  rule->second(*this, op);
  // A namesake node imports back as the primitive; any other form is marked with it.
  if (rule->second == simple) return;
  onnx_marks::Mark m{op.prim, op.attrs, {}, {}, g_.node_size() - first, {}};
  for (Var a : op.args) m.args.push_back(name(a));
  for (Var o : op.outs) m.outs.push_back(name(o));
  if (m.nodes < 1) internal_error("the export of {} wrote no node", prim_name(op.prim));
  m.digest = onnx_marks::group_digest(g_, first, m.nodes);
  g_.mutable_node(first)->set_doc_string(onnx_marks::mark_text(m));
}

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(v);
}

}  // namespace ytape::onnx_export
