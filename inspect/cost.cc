#include "inspect/cost.h"

namespace ytape {

namespace {

// Multiply-adds of a convolution: every output element of dy-shaped `out` sums over a
// (kw, kh, cin/groups) window of the weight `w`.
double conv_flops(const Type& out, const Shape& w) {
  return 2.0 * static_cast<double>(out.size()) * static_cast<double>(w[0] * w[1] * w[2]);
}

}  // namespace

double op_flops(const Tape& t, const Op& op) {
  if (op.kind != OpKind::call) return 0;
  switch (op.prim) {
    case Prim::matmul: {
      const Type& a = t.type(op.args[0]);
      int64_t k = attrs_of<Prim::matmul>(op.attrs).transpose_a ? a.shape[0] : a.shape[1];
      return 2.0 * static_cast<double>(t.type(op.outs[0]).size()) * static_cast<double>(k);
    }
    case Prim::conv2d:
      return conv_flops(t.type(op.outs[0]), t.type(op.args[1]).shape);
    case Prim::conv2d_backward_input:  // the transposed convolution of dy with w
      return conv_flops(t.type(op.args[0]), t.type(op.args[1]).shape);
    case Prim::conv2d_backward_filter:
      return conv_flops(t.type(op.args[1]), attrs_of<Prim::conv2d_backward_filter>(op.attrs).shape);
    default: {
      double n = 0;
      for (Var o : op.outs) n += static_cast<double>(t.type(o).size());
      return n;
    }
  }
}

double tape_flops(const Tape& t) {
  double total = 0;
  for (const Op& op : t.ops) total += op_flops(t, op);
  return total;
}

}  // namespace ytape
