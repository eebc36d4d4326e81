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

/// How a convolution is computed: oneDNN's direct kernels, or its Winograd F(4x4, 3x3)
/// ones, faster on 3x3 stride-1 layers with large images but needing 8-46 MB of work
/// memory at ResNet-18's shapes (the executor takes them where that fits its plan, see
/// KernelCall::variant). Winograd rounds differently from a plain sum, within f32's.
enum class ConvAlgorithm { direct, winograd };

/// Throws UserError (runtime/address_space.h) when a limit on the address space leaves too
/// little for oneDNN to write the code of `what`: its code generator crashes where it
/// cannot map it.
void require_code_room(const char* what);

/// The blocked image layout oneDNN's direct convolutions choose on this processor (c16
/// with AVX-512, c8 with AVX2).
Layout preferred_image_layout();

/// Whether oneDNN's Winograd kernels are faster than its direct ones at `g` (measured on
/// AVX-512, the only instruction set oneDNN has them for).
bool winograd_faster(const ConvGeom& g);

/// The convolution of `kind` in f32, from the op's two arguments to its output, in the op's
/// order: conv2d (x, w) -> y, conv2d_backward_input (dy, w) -> dx, conv2d_backward_filter
/// (x, dy) -> dw. Returns false, having written nothing, when oneDNN has no kernel for the
/// geometry (the caller falls back to its own). `scratchpad` is work memory of
/// `scratchpad_bytes` (64-byte aligned) for the primitive; where it is null or smaller than
/// conv_scratchpad_bytes (planned at another thread count), a buffer of the calling
/// thread's serves.
/// `algorithm` is a wish: where oneDNN has no Winograd kernel the direct one runs.
bool convolve(ConvKind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm,
              const float* a, const float* b, float* out, void* scratchpad = nullptr,
              int64_t scratchpad_bytes = 0);

/// The bytes of work memory oneDNN's convolution of `kind` for `g` in `l` with `algorithm`
/// needs; 0 when it needs none or has no kernel for the geometry; -1 when it has no
/// Winograd kernel asked for.
int64_t conv_scratchpad_bytes(ConvKind kind, const ConvGeom& g, ConvLayouts l,
                              ConvAlgorithm algorithm);

/// The name of oneDNN's implementation of the convolution of `kind` for `g` with images in
/// `l` and `algorithm` (as convolve chooses), as "jit:avx512_core", or "" when oneDNN has none.
std::string conv_impl(ConvKind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm);

/// Column-major C = op(A) op(B) + beta C, C of m x n with leading dimension ldc, op(A)
/// m x k and op(B) k x n (transposed where asked), all sizes positive; on oneDNN's GEMM,
/// threaded on the OpenMP threads at ytape's thread count. beta 0 does not read C.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float* c, int64_t ldc, float beta = 0);
/// gemm with beta 0 on the calling thread alone: for a thread of a parallel loop.
void gemm_here(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
               int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc);

}  // namespace ytape::onednn
