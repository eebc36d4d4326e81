// Attention as ONNX models write it (MatMul, a scale, a Where or none, Softmax, MatMul),
// recognized at import so that the tape has the attention primitive: one fused kernel
// that never writes the scores whole, and a backward that keeps out and lse, not them.
#pragma once

#include <optional>

#include "tape/tape.h"

namespace ytape::onnx_import {

/// `t` with each scaled-dot-product attention written out as exporters write it made one
/// attention op, or nothing if there is none. Recognized, in ytape's layout (ONNX's dims
/// reversed): out = v p where p = softmax(x; dims=[1]) is read by that product alone, and
/// x is the scores s, or select(c, s, -Inf) (c: the keys each query sees), or
/// select(c, -Inf, s) (c: those it does not: PyTorch's masked_fill), with c a bool (Tk, Tq)
/// and -Inf a one-element constant; s is q'ᵀk' as a matmul (either side transposed or not),
/// optionally divided or multiplied by a one-element constant after the product, which
/// then scales q instead. Operands that are not in the primitive's layout get a
/// permutedims, and an inverted mask an `eq(c, false)`. The fused op sums in another
/// order, so the results agree with the ops' to rounding (docs/primitives.md). The ops the
/// match leaves unused stay for dead-code elimination; top-level ops only, in one pass.
std::optional<Tape> recognize_attention(const Tape& t);

}  // namespace ytape::onnx_import
