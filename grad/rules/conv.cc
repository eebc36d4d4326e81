// VJP rules of convolution. conv2d is bilinear in (x, w), and so are its two backward
// ops: each VJP is another of the three ops with the same stride, pad, dilation, groups.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// The geometry attributes (stride, pad, dilation, groups) and the result shape `shape`.
Attrs conv_attrs(const RuleArgs& r, const Shape& shape) {
  return with_attr(without_attr(r.op.attrs, "shape"), "shape", shape);
}
Attrs conv2d_attrs(const RuleArgs& r) {
  return without_attr(r.op.attrs, "shape");
}

// y = conv2d(x, w): dx = backward_input(g, w), dw = backward_filter(x, g)
Dx conv2d_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0], w = r.args[1], g = *r.cots[0];
  Dx dx(2);
  if (r.need[0]) {
    dx[0] = b.call1(Prim::conv2d_backward_input, {g, w}, conv_attrs(r, b.type(x).shape));
  }
  if (r.need[1]) {
    dx[1] = b.call1(Prim::conv2d_backward_filter, {x, g}, conv_attrs(r, b.type(w).shape));
  }
  return dx;
}

// z = backward_input(dy, w): d(dy) = conv2d(g, w), dw = backward_filter(g, dy)
Dx backward_input_vjp(Builder& b, const RuleArgs& r) {
  Var dy = r.args[0], w = r.args[1], g = *r.cots[0];
  Dx dx(2);
  if (r.need[0]) dx[0] = b.call1(Prim::conv2d, {g, w}, conv2d_attrs(r));
  if (r.need[1]) {
    dx[1] = b.call1(Prim::conv2d_backward_filter, {g, dy}, conv_attrs(r, b.type(w).shape));
  }
  return dx;
}

// z = backward_filter(x, dy): dx = backward_input(dy, g), d(dy) = conv2d(x, g)
Dx backward_filter_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0], dy = r.args[1], g = *r.cots[0];
  Dx dx(2);
  if (r.need[0]) {
    dx[0] = b.call1(Prim::conv2d_backward_input, {dy, g}, conv_attrs(r, b.type(x).shape));
  }
  if (r.need[1]) dx[1] = b.call1(Prim::conv2d, {x, g}, conv2d_attrs(r));
  return dx;
}

}  // namespace

void register_conv_rules(RuleTable& t) {
  t.set(Prim::conv2d, conv2d_vjp);
  t.set(Prim::conv2d_backward_input, backward_input_vjp);
  t.set(Prim::conv2d_backward_filter, backward_filter_vjp);
}

}  // namespace ytape::grad
