// The geometry of a 2-d convolution, shared by the conv family's kernels (im2col + BLAS in
// conv.cc, oneDNN in onednn_conv.cc).
#pragma once

#include <cstdint>

#include "runtime/tensor.h"
#include "tape/op_attrs.h"

namespace ytape {

/// One convolution's sizes. x is (in_w, in_h, in_c, batch), w (k_w, k_h, in_c/groups,
/// out_c), y (out_w, out_h, out_c, batch), all column-major (WHCN).
struct ConvGeom {
  int64_t in_w, in_h, in_c, batch;
  int64_t k_w, k_h, out_c;
  int64_t out_w, out_h;
  int64_t stride_w, stride_h, dil_w, dil_h;
  int64_t pad_w, pad_h, pad_w_hi, pad_h_hi;  // pad_w and pad_h are the low sides
  int64_t groups;
  /// A 1x1 kernel at stride 1 without padding reads each pixel once, in place: the image
  /// itself is the im2col matrix, and the gradient's col2im is the identity.
  bool direct;

  int64_t in_plane() const { return in_w * in_h; }
  int64_t out_plane() const { return out_w * out_h; }
  int64_t taps() const { return k_w * k_h; }
  int64_t col_size() const { return in_c * taps() * out_plane(); }
  int64_t group_k() const { return taps() * (in_c / groups); }  ///< im2col columns per group
  int64_t group_out() const { return out_c / groups; }
};

/// The stride, pad, dilation and groups that conv2d and its two gradients share.
struct ConvAttrs {
  std::vector<int64_t> stride, pad, dilation;
  int64_t groups;
  /// From the attributes of any of the three ops.
  template <class A>
  ConvAttrs(const A& a) : stride(a.stride), pad(a.pad), dilation(a.dilation), groups(a.groups) {}
};

/// The geometry of a conv op from its attributes and its tensors' types, which the
/// executor has checked against the shape rule: x the image, w the weights, y the output
/// (or the output's gradient).
ConvGeom conv_geom(const ConvAttrs& attrs, const Type& x, const Type& w, const Type& y);
/// The same from the tensors.
ConvGeom conv_geom(const ConvAttrs& attrs, const Tensor& x, const Tensor& w, const Tensor& y);

}  // namespace ytape
