#include "tape/cost.h"

#include <algorithm>

#include "tape/error.h"
#include "tape/op_attrs.h"

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

const Shape& shape_of(const Tape& t, Var v) {
  return t.type(v).shape;
}

double matmul_flops(const Tape& t, const Op& op) {
  const Type& a = t.type(op.args[0]);
  int64_t k = attrs_of<Prim::matmul>(op.attrs).transpose_a ? a.shape[0] : a.shape[1];
  return 2.0 * static_cast<double>(t.type(op.outs[0]).size()) * static_cast<double>(k);
}

// Attention's multiply-adds as the unfused ops compute them, every pair of a query and a key
// counted, masked or not; the scores its backward computes again are not counted, as
// rematerialization's are not.
double attention_flops(const Tape& t, const Op& op) {
  const Shape& q = shape_of(t, op.args[0]);
  const Shape& v = shape_of(t, op.args[2]);
  double pairs = static_cast<double>(t.type(op.args[3]).size());
  for (size_t i = 2; i < q.size(); ++i) pairs *= static_cast<double>(q[i]);
  // Forward, 2(d + dv) per pair: kᵀq's and v's products; backward, twice that: dq and dk
  // (d each), dv and the weights' cotangent (dv each).
  double per_pair = 2.0 * static_cast<double>(q[0] + v[0]);
  return (op.prim == Prim::attention ? 1 : 2) * per_pair * pairs;
}

// Each convolution reads its output side (dy for the gradients) and its weight (or the
// weight's shape, for the filter gradient) from a different place.
double convolution_flops(const Tape& t, const Op& op) {
  switch (op.prim) {
    case Prim::conv2d:
      return conv_flops(t.type(op.outs[0]), shape_of(t, op.args[1]));
    case Prim::conv2d_backward_input:  // the transposed convolution of dy with w
      return conv_flops(t.type(op.args[0]), shape_of(t, op.args[1]));
    case Prim::conv2d_backward_filter:
      return conv_flops(t.type(op.args[1]), attrs_of<Prim::conv2d_backward_filter>(op.attrs).shape);
    default:
      internal_error("{} has no convolution cost", prim_name(op.prim));
  }
}

// A pooling of x into y; each primitive's window attributes are its own struct.
double window_flops(const Tape& t, const Op& op) {
  const Shape& x = shape_of(t, op.args[0]);
  const Shape& y = shape_of(t, op.outs[0]);
  switch (op.prim) {
    case Prim::max_pool2d:
      return pool_reads(x, y, attrs_of<Prim::max_pool2d>(op.attrs));
    case Prim::max_pool2d_with_indices:
      return pool_reads(x, y, attrs_of<Prim::max_pool2d_with_indices>(op.attrs));
    case Prim::avg_pool2d:
      return pool_reads(x, y, attrs_of<Prim::avg_pool2d>(op.attrs));
    default:
      internal_error("{} has no pooling cost", prim_name(op.prim));
  }
}

// A scan's body once per trip; a cond's costliest branch; a while_loop's condition and
// body once (a trip: how many it takes is known only when it runs); a custom_rule's body.
double region_flops(const Op& op) {
  switch (op.prim) {
    case Prim::scan:
      return tape_flops(op.regions.at(0)) *
             static_cast<double>(attrs_of<Prim::scan>(op.attrs).length);
    case Prim::cond: {
      double most = 0;
      for (const Tape& r : op.regions) most = std::max(most, tape_flops(r));
      return most;
    }
    case Prim::while_loop:
      return tape_flops(op.regions.at(0)) + tape_flops(op.regions.at(1));
    case Prim::custom_rule:
      return tape_flops(op.regions.at(0));
    default:
      internal_error("{} has no region cost", prim_name(op.prim));
  }
}

}  // namespace

double op_flops(const Tape& t, const Op& op) {
  if (op.kind != OpKind::call) return 0;
  switch (prim_info(op.prim).cost) {
    case Cost::elements:
      return output_elements(t, op);
    case Cost::reads:
      return static_cast<double>(t.type(op.args[0]).size());
    case Cost::region:
      return region_flops(op);
    case Cost::matmul:
      return matmul_flops(t, op);
    case Cost::attention:
      return attention_flops(t, op);
    case Cost::conv:
      return convolution_flops(t, op);
    case Cost::window:
      return window_flops(t, op);
    case Cost::window_backward: {  // avg_pool2d_backward: dy, the window attributes
      const auto attrs = attrs_of<Prim::avg_pool2d_backward>(op.attrs);
      return output_elements(t, op) + pool_reads(attrs.shape, shape_of(t, op.args[0]), attrs);
    }
    case Cost::index_backward:  // max_pool2d_backward: dy and its indices
      return output_elements(t, op) + static_cast<double>(t.type(op.args[0]).size());
  }
  internal_error("no cost for {}", prim_name(op.prim));
}

double tape_flops(const Tape& t) {
  double total = 0;
  for (const Op& op : t.ops) total += op_flops(t, op);
  return total;
}

}  // namespace ytape
