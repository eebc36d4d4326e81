// VJP rules of convolution. conv2d is bilinear in (x, w), and so are its two backward
// ops: each VJP is another of the three ops with the same stride, pad, dilation, groups.
#include "grad/rules.h"

namespace ytape::grad {

namespace {

using Dx = std::vector<Cotangent>;

// The attributes of conv op Q with the geometry (stride, pad, dilation, groups) of `a`,
// those of any of the three ops, and, for the two gradients, the result shape `shape`.
template <Prim Q, class From>
AttrsOf<Q> geometry(const From& a, const Shape& shape = {}) {
  AttrsOf<Q> out;
  if constexpr (Q != Prim::conv2d) out.shape = shape;
  out.stride = a.stride;
  out.pad = a.pad;
  out.dilation = a.dilation;
  out.groups = a.groups;
  return out;
}

// y = conv2d(x, w): dx = backward_input(g, w), dw = backward_filter(x, g)
Dx conv2d_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0], w = r.args[1], g = *r.cots[0];
  const auto a = attrs_of<Prim::conv2d>(r.op.attrs);
  Dx dx(2);
  if (r.need[0]) {
    dx[0] =
        b.conv2d_backward_input(g, w, geometry<Prim::conv2d_backward_input>(a, b.type(x).shape));
  }
  if (r.need[1]) {
    dx[1] =
        b.conv2d_backward_filter(x, g, geometry<Prim::conv2d_backward_filter>(a, b.type(w).shape));
  }
  return dx;
}

// z = backward_input(dy, w): d(dy) = conv2d(g, w), dw = backward_filter(g, dy)
Dx backward_input_vjp(Builder& b, const RuleArgs& r) {
  Var dy = r.args[0], w = r.args[1], g = *r.cots[0];
  const auto a = attrs_of<Prim::conv2d_backward_input>(r.op.attrs);
  Dx dx(2);
  if (r.need[0]) dx[0] = b.conv2d(g, w, geometry<Prim::conv2d>(a));
  if (r.need[1]) {
    dx[1] =
        b.conv2d_backward_filter(g, dy, geometry<Prim::conv2d_backward_filter>(a, b.type(w).shape));
  }
  return dx;
}

// z = backward_filter(x, dy): dx = backward_input(dy, g), d(dy) = conv2d(x, g)
Dx backward_filter_vjp(Builder& b, const RuleArgs& r) {
  Var x = r.args[0], dy = r.args[1], g = *r.cots[0];
  const auto a = attrs_of<Prim::conv2d_backward_filter>(r.op.attrs);
  Dx dx(2);
  if (r.need[0]) {
    dx[0] =
        b.conv2d_backward_input(dy, g, geometry<Prim::conv2d_backward_input>(a, b.type(x).shape));
  }
  if (r.need[1]) dx[1] = b.conv2d(x, g, geometry<Prim::conv2d>(a));
  return dx;
}

}  // namespace

void register_conv_rules(RuleTable& t) {
  t.set(Prim::conv2d, conv2d_vjp);
  t.set(Prim::conv2d_backward_input, backward_input_vjp);
  t.set(Prim::conv2d_backward_filter, backward_filter_vjp);
}

}  // namespace ytape::grad
