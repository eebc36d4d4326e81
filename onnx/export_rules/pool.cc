// Export rules of the pool family: the poolings are ONNX's MaxPool and AveragePool (padding
// counted, as ytape's); their gradients a scatter and a transposed convolution.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

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
  std::string indices = flat(1), grads = flat(0);  // in this order, as before
  std::string dx =
      scatter_added(ex, grads, Type{dy.dtype, planes}, indices, {x[0] * x[1], x[2], x[3]}, 2);
  done(ex, op, ex.node("Reshape", {dx, ex.ints(reversed(x))}));
}

// Average pooling (padding counted) is a depthwise conv with weights 1/(kw kh); its
// gradient the ConvTranspose of those weights.
void avg_pool2d_backward(Exporter& ex, const Op& op) {
  const auto p = attrs_of<Prim::avg_pool2d_backward>(op.attrs);
  const Type& dy = ex.type(op.args[0]);
  Shape ws = {p.window[0], p.window[1], 1, dy.shape[2]};
  std::string w =
      ex.constant(holding(dy.dtype, ws, 1.0 / static_cast<double>(p.window[0] * p.window[1])));
  transposed_conv(ex, op, w, ws, {p.shape, p.stride, p.pad, {1, 1}}, dy.shape[2]);
}

}  // namespace

void register_pool_export(ExportTable& t) {
  t.set(Prim::max_pool2d, pool<Prim::max_pool2d>);
  t.set(Prim::max_pool2d_with_indices, max_pool2d_with_indices);
  t.set(Prim::max_pool2d_backward, max_pool2d_backward);
  t.set(Prim::avg_pool2d, pool<Prim::avg_pool2d>);
  t.set(Prim::avg_pool2d_backward, avg_pool2d_backward);
}

}  // namespace ytape::onnx_export
