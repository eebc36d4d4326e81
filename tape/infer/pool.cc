// Inference rules of the pool family: max and average pooling over the (W, H) plane of WHCN
// images, max pooling's variant that also returns the chosen positions, and the gradients.
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// The output (W', H', C, N) of pooling x (W, H, C, N) with the window, stride and pad
// attributes of any pooling op. Each pad must be smaller than the window along its axis
// (ONNX's rule, which ONNX Runtime enforces; PyTorch's, pad <= window / 2, is stricter than
// ONNX's ceil_mode needs), so that every window holds at least one element of x; and the
// window must fit in the padded x. Strides may exceed the padded x (one window).
template <class PoolAttrs>
Shape pool_output(const Type& x, const PoolAttrs& attrs) {
  require_rank(x, 4, "x (W, H, C, N)");
  const std::vector<int64_t>& window = attrs.window;
  const std::vector<int64_t>& stride = attrs.stride;
  const std::vector<int64_t>& pad = attrs.pad;
  require_length(window, 2, "window");
  require_each_at_least(window, 1, "window");
  require_length(stride, 2, "stride");
  require_each_at_least(stride, 1, "stride");
  require_length(pad, 4, "pad");
  require_each_at_least(pad, 0, "pad");
  Shape out = x.shape;
  for (int i = 0; i < 2; ++i) {
    const char* axis = i == 0 ? "W" : "H";
    int64_t lo = pad[2 * i], hi = pad[2 * i + 1];
    if (lo >= window[i] || hi >= window[i]) {
      user_error(
          "pad={} must be smaller than window={} on each side (along {}); pad x with a pad op "
          "for windows of padding",
          shape_str(pad), shape_str(window), axis);
    }
    // With both pads under the window, no window lies in the padding alone.
    out[i] = window_positions(x.shape[i], lo, hi, window[i], 1, stride[i]);
    if (out[i] == 0) {
      user_error("window={} does not fit in x {} with pad={} (along {})", shape_str(window),
                 type_str(x), shape_str(pad), axis);
    }
  }
  require_sane(out, "the result");
  return out;
}

// max_pool2d, avg_pool2d.
template <Prim P>
std::vector<Type> pool(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_float(a[0], "x");
  return one(a[0].dtype, pool_output(a[0], attrs_of<P>(attrs)));
}

std::vector<Type> max_pool_with_indices(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_float(a[0], "x");
  Shape out = pool_output(a[0], attrs_of<Prim::max_pool2d_with_indices>(attrs));
  return {Type{a[0].dtype, out}, Type{DType::i64, out}};
}

// max_pool2d_backward(dy, idx; shape): each dy is added at its index in x's (W, H) plane.
std::vector<Type> max_pool_backward(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Type& dy = a[0];
  const Type& idx = a[1];
  require_float(dy, "dy");
  if (idx.dtype != DType::i64) user_error("idx must be i64, got {}", type_str(idx));
  require_rank(dy, 4, "dy (W', H', C, N)");
  if (idx.shape != dy.shape) {
    user_error("dy {} and idx {} must have one shape", type_str(dy), type_str(idx));
  }
  Type x = shape_attr_type(dy.dtype, attrs_of<Prim::max_pool2d_backward>(attrs).shape, 4);
  if (x.shape[2] != dy.shape[2] || x.shape[3] != dy.shape[3]) {
    user_error("shape={} must have the C and N of dy {}", shape_str(x.shape), type_str(dy));
  }
  return {x};
}

std::vector<Type> avg_pool_backward(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Type& dy = a[0];
  require_float(dy, "dy");
  const auto at = attrs_of<Prim::avg_pool2d_backward>(attrs);
  Type x = shape_attr_type(dy.dtype, at.shape, 4);
  Shape expected = pool_output(x, at);
  if (dy.shape != expected) {
    user_error("dy {} must have shape {}, the output of avg_pool2d for x {}", type_str(dy),
               shape_str(expected), shape_str(x.shape));
  }
  return {x};
}

}  // namespace

void register_pool_infer(InferTable& t) {
  t.set(Prim::max_pool2d, pool<Prim::max_pool2d>);
  t.set(Prim::max_pool2d_with_indices, max_pool_with_indices);
  t.set(Prim::max_pool2d_backward, max_pool_backward);
  t.set(Prim::avg_pool2d, pool<Prim::avg_pool2d>);
  t.set(Prim::avg_pool2d_backward, avg_pool_backward);
}

}  // namespace ytape
