// 3-d convolution and pooling over (W, H, D, C, N) volumes, composed of the 2-d primitives:
// the depth slices a window reads are moved into the batch dim of a 2-d op, one per depth
// tap, and the taps combined elementwise. They have no primitive of their own, so that the
// gradient, the optimizer, the runtime and the ONNX exporter handle them through the 2-d
// ops' rules, unchanged. The tracer (its `Composite.` builtins, which Flux's layers call) and
// the ONNX importer (rank-5 Conv, ConvTranspose, MaxPool, AveragePool) both build them here.
#pragma once

#include <cstdint>
#include <vector>

#include "tape/builder.h"

namespace ytape {

/// Where a composed op puts its primitives: a Builder (BuilderSink), the ONNX importer
/// (which folds ops on known values) or the tracer (which evaluates ops on concrete values
/// and records the others). A Var here is a handle that the sink gives meaning to.
class OpSink {
 public:
  virtual ~OpSink() = default;
  /// Applies the primitive `p`, which has one output, and returns that output.
  virtual Var call(Prim p, VarList args, const Attrs& attrs) = 0;
  /// The type of `v`.
  virtual Type type(Var v) const = 0;

  template <Prim P>
  Var op(VarList args, const AttrsOf<P>& attrs = {}) {
    return call(P, std::move(args), attrs.to_attrs());
  }
};

/// A Builder as an OpSink: the ops go straight onto its tape.
class BuilderSink final : public OpSink {
 public:
  explicit BuilderSink(Builder& b) : b_(b) {}
  Var call(Prim p, VarList args, const Attrs& attrs) override {
    return b_.call1(p, std::move(args), attrs);
  }
  Type type(Var v) const override { return b_.type(v); }

 private:
  Builder& b_;
};

/// The geometry of a 3-d convolution: stride and dilation [w, h, d], pad [w_lo, w_hi, h_lo,
/// h_hi, d_lo, d_hi], as the 2-d primitives' with one more dim.
struct Conv3dAttrs {
  std::vector<int64_t> stride{1, 1, 1};
  std::vector<int64_t> pad{0, 0, 0, 0, 0, 0};
  std::vector<int64_t> dilation{1, 1, 1};
  int64_t groups = 1;
};

/// The window of a 3-d pooling: window and stride [w, h, d], pad as Conv3dAttrs'.
struct Pool3dAttrs {
  std::vector<int64_t> window;
  std::vector<int64_t> stride;
  std::vector<int64_t> pad{0, 0, 0, 0, 0, 0};
};

/// The cross-correlation of x (W, H, D, C, N) with w (kw, kh, kd, C/groups, Cout), both of
/// one float dtype: y (W', H', D', Cout, N), each size as conv2d's. Built as, for each depth
/// tap t, a conv2d of the depth slices t * dilation, t * dilation + stride, ... of the
/// depth-padded x (D' of them, moved into the batch dim) with w[:, :, t, :, :], summed over
/// t. A bad shape or attribute is a UserError that names conv3d.
Var conv3d(OpSink& s, Var x, Var w, const Conv3dAttrs& a);

/// The transpose of conv3d with respect to its input (ONNX's and Flux's ConvTranspose): dy
/// (W', H', D', Cout, N), the output of conv3d for an input of `shape` (W, H, D, C, N) and
/// w, mapped to `shape`. Built as, for each depth tap t, a conv2d_backward_input with
/// w[:, :, t, :, :] whose D' results are spread back to the depth positions conv3d read them
/// from (a pad with interior stride - 1), summed over t; the depth padding is cut off at
/// the end.
Var conv3d_backward_input(OpSink& s, Var dy, Var w, const std::vector<int64_t>& shape,
                          const Conv3dAttrs& a);

/// Max pooling of x (W, H, D, C, N): the max_pool2d of every depth slice, then the
/// elementwise maximum over each depth window (depth padding is -inf, never chosen). As
/// max_pool2d, every window must hold an element of x, not only padding.
Var max_pool3d(OpSink& s, Var x, const Pool3dAttrs& a);

/// Mean pooling of x (W, H, D, C, N): the avg_pool2d of every depth slice, summed over each
/// depth window and divided by its depth. Padding counts as zeros in the sum and in the
/// divisor, which is the window's size, as avg_pool2d's and NNlib's meanpool's.
Var avg_pool3d(OpSink& s, Var x, const Pool3dAttrs& a);

}  // namespace ytape
