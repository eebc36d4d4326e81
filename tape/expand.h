// Expansions of the fused primitives into the primitives they fuse: each is the fused
// primitive's definition, written with the Builder. Second derivatives, forward mode and
// the ONNX export go through them where the fused form has no rule of its own; the
// kernels are checked against them.
#pragma once

#include <span>
#include <vector>

#include "tape/builder.h"

namespace ytape {

/// attention(q, k, v, mask) -> (out, lse) in primitives: s = kᵀq (a matmul per slice),
/// -inf where the mask is false, p = softmax(s; dims=[1]), out = v p, and
/// lse = m + log Σ e^(s - m) over the keys (m their maximum). A query that sees no key has
/// a NaN output here, and a NaN lse where the kernel gives -inf.
std::vector<Var> expand_attention(Builder& b, const Op& op, std::span<const Var> args);

/// attention_backward(q, k, v, mask, out, lse, dout) -> (dq, dk, dv) in primitives: with
/// p = e^(s - lse) and D = Σ dout ⊙ out per query, ds = p ⊙ (vᵀ dout - D), dq = k ds,
/// dk = q dsᵀ, dv = dout pᵀ.
std::vector<Var> expand_attention_backward(Builder& b, const Op& op, std::span<const Var> args);

}  // namespace ytape
