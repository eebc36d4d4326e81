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

enum class ConvKind { forward, backward_input, backward_filter };

/// The convolution of `kind` in f32, from the op's two arguments to its output, in the op's
/// order: conv2d (x, w) -> y, conv2d_backward_input (dy, w) -> dx, conv2d_backward_filter
/// (x, dy) -> dw. Returns false, having written nothing, when oneDNN has no kernel for the
/// geometry (the caller falls back to its own). `scratchpad` is work memory of
/// `scratchpad_bytes` (64-byte aligned) for the primitive; where it is null or smaller than
/// conv_scratchpad_bytes (planned at another thread count), a buffer of the calling
/// thread's serves.
bool convolve(ConvKind kind, const ConvGeom& g, ConvLayouts l, const float* a, const float* b,
              float* out, void* scratchpad = nullptr, int64_t scratchpad_bytes = 0);

/// The bytes of work memory oneDNN's convolution of `kind` for `g` in `l` needs; 0 when
/// it needs none or has no kernel for the geometry.
int64_t conv_scratchpad_bytes(ConvKind kind, const ConvGeom& g, ConvLayouts l);

/// The name of oneDNN's implementation of the convolution of `kind` for `g` with images in
/// `l`, as "jit:avx512_core", or "" when oneDNN has none.
std::string conv_impl(ConvKind kind, const ConvGeom& g, ConvLayouts l);

}  // namespace ytape::onednn
