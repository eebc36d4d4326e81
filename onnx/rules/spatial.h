// The attributes that ONNX's convolution and pooling ops share (kernel_shape, strides,
// dilations, pads, auto_pad), in the primitives' form: [w, h] lists and pads
// [w_lo, w_hi, h_lo, h_hi], and [w, h, d] and [w_lo, w_hi, h_lo, h_hi, d_lo, d_hi] for 3-d
// ops (tape/spatial3d.h). A 1-d op is a 2-d one of height 1.
#pragma once

#include "onnx/importer.h"
#include "tape/spatial3d.h"

namespace ytape::onnx_import {

struct Window {
  std::vector<int64_t> kernel, stride, dilation, pad;
};

/// The window of `node` over an input of ONNX spatial sizes `in` ([D, H, W], [H, W] or [W])
/// with the ONNX kernel sizes `kernel`. UnsupportedError for more than three spatial dims.
Window window_of(const Node& node, const Shape& in, const std::vector<int64_t>& kernel);

/// The spatial sizes of an ONNX (N, C, spatial...) image or (M, C, kernel...) weight shape;
/// a UserError when it has fewer than three dims.
Shape spatial_of(const Node& node, const Shape& onnx_shape);

/// UnsupportedError when a 3-d op's kernel or window is more than kMaxTaps deep: each of
/// its depth taps is a 2-d op of the tape (tape/spatial3d.h).
void check_depth_taps(const Node& node, int64_t depth);

/// `x` (ytape (W, C, N) or (W, H, C, N)) as a 2-d image; (W, H, D, C, N) as it is.
Var as_image(Importer& im, Var x);
/// The image `y` back in the rank `rank` of the op's input (a 1-d op's result loses the
/// height again).
Var from_image(Importer& im, Var y, int rank);

/// The convolution of `x` by `w` as the Conv-like `node`'s attributes (kernel_shape,
/// strides, dilations, pads, auto_pad, group) say, in `x`'s rank; no bias.
Var convolve(Importer& im, const Node& node, Var x, Var w);
/// `y` (an image, its channels the tape's second to last dim) plus `bias` per channel.
Var add_channel_bias(Importer& im, Var y, Var bias);

/// The importer as an OpSink: the ops of the composed 3-d ops fold where their arguments
/// are known, as the importer's own.
class ImporterSink final : public OpSink {
 public:
  explicit ImporterSink(Importer& im) : im_(im) {}
  Var call(Prim p, VarList args, const Attrs& attrs) override {
    return im_.emit(p, std::move(args), attrs);
  }
  Type type(Var v) const override { return im_.type(v); }

 private:
  Importer& im_;
};

}  // namespace ytape::onnx_import
