// oneDNN's kernels for the dense f32 primitives (the library PyTorch's CPU convolutions
// use). oneDNN picks its instruction set (AVX-512, AVX2, ...) at run time and its own
// blocked memory layouts; these functions take and return ytape's plain layouts and
// reorder at their edges.
#pragma once

#include <string>

#include "runtime/kernels/conv.h"
#include "runtime/layout.h"

namespace ytape::onednn {

/// The layouts of a convolution's images: the input side (x, or dx) and the output side
/// (y, or dy). Weights and their gradient are always plain.
struct ConvLayouts {
  Layout in = Layout::plain, out = Layout::plain;
};

/// y = conv2d(x, w) in f32. Returns false, having written nothing, when oneDNN has no
/// kernel for the geometry (the caller falls back to its own).
bool conv2d(const ConvGeom& g, ConvLayouts l, const float* x, const float* w, float* y);
/// dx = conv2d_backward_input(dy, w); false as above.
bool conv2d_backward_input(const ConvGeom& g, ConvLayouts l, const float* dy, const float* w,
                           float* dx);
/// dw = conv2d_backward_filter(x, dy); false as above.
bool conv2d_backward_filter(const ConvGeom& g, ConvLayouts l, const float* x, const float* dy,
                            float* dw);

enum class ConvKind { forward, backward_input, backward_filter };

/// The name of oneDNN's implementation of the convolution of `kind` for `g` with images in
/// `l`, as "jit:avx512_core", or "" when oneDNN has none.
std::string conv_impl(ConvKind kind, const ConvGeom& g, ConvLayouts l);

}  // namespace ytape::onednn
