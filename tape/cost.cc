#include "tape/cost.h"

#include <algorithm>

namespace ytape {

namespace {

// Multiply-adds of a convolution: every output element of dy-shaped `out` sums over a
// (kw, kh, cin/groups) window of the weight `w`. The kernels compute the taps that fall in
// the padding too (as zeros of the im2col matrix, or oneDNN's), and the weight is a tensor
// of the tape, so no attribute inflates the work beyond what this counts.
double conv_flops(const Type& out, const Shape& w) {
  return 2.0 * static_cast<double>(out.size()) *
         (static_cast<double>(w[0]) * static_cast<double>(w[1]) * static_cast<double>(w[2]));
}

// The elements of an input of `in` that the windows of `out` outputs read along one axis,
// each `window` wide, `stride` apart, from `-pad`: only those inside the input, which is
// all the pooling kernels visit, however wide the window (runtime/kernels/pool.cc).
double axis_reads(int64_t in, int64_t out, int64_t window, int64_t stride, int64_t pad) {
  double total = 0;
  for (int64_t o = 0; o < out; ++o) {
    int64_t start = o * stride - pad;  // within 2^50: the shape rule bounds each term
    total += static_cast<double>(
        std::max<int64_t>(0, std::min(start + window, in) - std::max<int64_t>(start, 0)));
  }
  return total;
}

// Elements of x (W, H, C, N) read by pooling it into y (W', H', C, N) with `attrs` of any
// pooling op that has a window: one comparison or addition each.
template <class PoolAttrs>
double pool_reads(const Shape& x, const Shape& y, const PoolAttrs& attrs) {
  double planes = static_cast<double>(x[2]) * static_cast<double>(x[3]);
  return planes * axis_reads(x[0], y[0], attrs.window[0], attrs.stride[0], attrs.pad[0]) *
         axis_reads(x[1], y[1], attrs.window[1], attrs.stride[1], attrs.pad[2]);
}

// Elements of every output of `op`: the cost of elementwise and data-movement ops.
double output_elements(const Tape& t, const Op& op) {
  double n = 0;
  for (Var o : op.outs) n += static_cast<double>(t.type(o).size());
  return n;
}

}  // namespace

double op_flops(const Tape& t, const Op& op) {
  if (op.kind != OpKind::call) return 0;
  auto shape = [&](Var v) -> const Shape& { return t.type(v).shape; };
  switch (op.prim) {
    case Prim::matmul: {
      const Type& a = t.type(op.args[0]);
      int64_t k = attrs_of<Prim::matmul>(op.attrs).transpose_a ? a.shape[0] : a.shape[1];
      return 2.0 * static_cast<double>(t.type(op.outs[0]).size()) * static_cast<double>(k);
    }
    case Prim::conv2d:
      return conv_flops(t.type(op.outs[0]), shape(op.args[1]));
    case Prim::conv2d_backward_input:  // the transposed convolution of dy with w
      return conv_flops(t.type(op.args[0]), shape(op.args[1]));
    case Prim::conv2d_backward_filter:
      return conv_flops(t.type(op.args[1]), attrs_of<Prim::conv2d_backward_filter>(op.attrs).shape);
    case Prim::max_pool2d:
      return pool_reads(shape(op.args[0]), shape(op.outs[0]), attrs_of<Prim::max_pool2d>(op.attrs));
    case Prim::max_pool2d_with_indices:
      return pool_reads(shape(op.args[0]), shape(op.outs[0]),
                        attrs_of<Prim::max_pool2d_with_indices>(op.attrs));
    case Prim::avg_pool2d:
      return pool_reads(shape(op.args[0]), shape(op.outs[0]), attrs_of<Prim::avg_pool2d>(op.attrs));
    case Prim::avg_pool2d_backward: {  // dx = 0, then each dy spread over its window
      const auto attrs = attrs_of<Prim::avg_pool2d_backward>(op.attrs);
      return output_elements(t, op) + pool_reads(attrs.shape, shape(op.args[0]), attrs);
    }
    case Prim::max_pool2d_backward:  // dx = 0, then each dy added at its index
      return output_elements(t, op) + static_cast<double>(t.type(op.args[0]).size());
    default:
      return output_elements(t, op);
  }
}

double tape_flops(const Tape& t) {
  double total = 0;
  for (const Op& op : t.ops) total += op_flops(t, op);
  return total;
}

}  // namespace ytape
