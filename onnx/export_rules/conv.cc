// Export rules of the conv family: conv2d is ONNX's Conv; its gradients are a ConvTranspose
// and a Conv with the roles of the tensors swapped.
#include "onnx/export_rules.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

void conv2d(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::conv2d>(op.attrs);
  onnx::NodeProto& n = ex.node("Conv", {in(ex, op, 0), in(ex, op, 1)});
  set_attr(n, "strides", reversed(a.stride));
  set_attr(n, "pads", onnx_pads(a.pad));
  set_attr(n, "dilations", reversed(a.dilation));
  set_attr(n, "group", a.groups);
  done(ex, op, n);
}
// The gradient of conv2d for its input is ConvTranspose over the same weights.
void conv2d_backward_input(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::conv2d_backward_input>(op.attrs);
  transposed_conv(ex, op, in(ex, op, 1), ex.type(op.args[1]).shape,
                  {a.shape, a.stride, a.pad, a.dilation}, a.groups);
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

}  // namespace

std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p) {
  return {p[2], p[0], p[3], p[1]};
}

// The output padding is what the stride left over: shape - (s (in - 1) + (k - 1) d + 1 - pads).
void transposed_conv(Exporter& ex, const Op& op, const std::string& w, const Shape& ws,
                     const ConvGeometry& a, int64_t groups) {
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

void register_conv_export(ExportTable& t) {
  t.set(Prim::conv2d, conv2d);
  t.set(Prim::conv2d_backward_input, conv2d_backward_input);
  t.set(Prim::conv2d_backward_filter, conv2d_backward_filter);
}

}  // namespace ytape::onnx_export
