// Inference rules of the conv family: conv2d (WHCN images, (kw, kh, cin/groups, cout)
// weights) and its gradients with respect to the input and the filter, which take the
// shape of what they differentiate as an attribute.
#include "tape/infer.h"
#include "tape/infer/common.h"
#include "tape/strings.h"

namespace ytape {

namespace {

using namespace shapes;

// conv2d's output (W', H', Cout, N) for x and w of one float dtype, with the geometry
// (stride, pad, dilation, groups) of any of the three convolution ops.
template <class ConvAttrs>
Shape conv_output(const Type& x, const Type& w, const ConvAttrs& attrs) {
  require_rank(x, 4, "x (W, H, C, N)");
  require_rank(w, 4, "w (kw, kh, cin/groups, cout)");
  const std::vector<int64_t>& stride = attrs.stride;
  const std::vector<int64_t>& pad = attrs.pad;
  const std::vector<int64_t>& dilation = attrs.dilation;
  const int64_t groups = attrs.groups;
  require_length(stride, 2, "stride");
  require_each_at_least(stride, 1, "stride");
  require_length(pad, 4, "pad");
  require_each_at_least(pad, 0, "pad");
  require_length(dilation, 2, "dilation");
  require_each_at_least(dilation, 1, "dilation");
  if (groups < 1) user_error("groups={} must be positive", groups);
  if (attrs.algorithm != "auto" && attrs.algorithm != "direct" && attrs.algorithm != "winograd") {
    user_error("algorithm=\"{}\" is not auto, direct or winograd", printable(attrs.algorithm));
  }
  int64_t cin = x.shape[2], cout = w.shape[3];
  if (cin % groups != 0) {
    user_error("groups={} does not divide the {} channels of x {}", groups, cin, type_str(x));
  }
  if (cout % groups != 0) {
    user_error("groups={} does not divide the {} output channels of w {}", groups, cout,
               type_str(w));
  }
  if (w.shape[2] != cin / groups) {
    user_error("w {} takes {} channels per group, but x {} has {} per group (groups={})",
               type_str(w), w.shape[2], type_str(x), cin / groups, groups);
  }
  if (w.shape[0] < 1 || w.shape[1] < 1) user_error("the kernel of w {} is empty", type_str(w));
  Shape out{0, 0, cout, x.shape[3]};
  for (int i = 0; i < 2; ++i) {
    out[i] = window_positions(x.shape[i], pad[2 * i], pad[2 * i + 1], w.shape[i], dilation[i],
                              stride[i]);
    if (out[i] == 0) {
      user_error("the kernel of w {} with dilation={} does not fit in x {} with pad={} (along {})",
                 type_str(w), shape_str(dilation), type_str(x), shape_str(pad), i == 0 ? "W" : "H");
    }
  }
  require_sane(out, "the result");
  return out;
}

std::vector<Type> conv2d(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_same_dtype(a);
  require_float(a[0], "the arguments");
  return one(a[0].dtype, conv_output(a[0], a[1], attrs_of<Prim::conv2d>(attrs)));
}

void require_dy(const Type& dy, const Shape& expected, const Type& x, const Type& w) {
  if (dy.shape != expected) {
    user_error("dy {} must have shape {}, the output of conv2d for x {} and w {}", type_str(dy),
               shape_str(expected), shape_str(x.shape), shape_str(w.shape));
  }
}

// conv2d_backward_input(dy, w; shape): the gradient with respect to x of `shape`.
std::vector<Type> backward_input(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_same_dtype(a);
  require_float(a[0], "the arguments");
  const Type& dy = a[0];
  const Type& w = a[1];
  const auto at = attrs_of<Prim::conv2d_backward_input>(attrs);
  Type x = shape_attr_type(dy.dtype, at.shape, 4);
  require_dy(dy, conv_output(x, w, at), x, w);
  return {x};
}

// conv2d_backward_filter(x, dy; shape): the gradient with respect to w of `shape`.
std::vector<Type> backward_filter(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_same_dtype(a);
  require_float(a[0], "the arguments");
  const Type& x = a[0];
  const Type& dy = a[1];
  const auto at = attrs_of<Prim::conv2d_backward_filter>(attrs);
  Type w = shape_attr_type(x.dtype, at.shape, 4);
  require_dy(dy, conv_output(x, w, at), x, w);
  return {w};
}

}  // namespace

void register_conv_infer(InferTable& t) {
  t.set(Prim::conv2d, conv2d);
  t.set(Prim::conv2d_backward_input, backward_input);
  t.set(Prim::conv2d_backward_filter, backward_filter);
}

}  // namespace ytape
