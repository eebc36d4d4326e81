// Fused ("flash") attention on the CPU, forward and backward, f32 and f64: a blocked online
// softmax, as FlashAttention does on GPUs. Per slice, a block of queries meets the key
// blocks one after another; the scores of one block pair live in a small scratch tile, and
// each query keeps a running maximum m, sum l and output accumulator, rescaled when m
// grows. The tq x tk score matrix is never written whole, and neither is P in the backward,
// which recomputes it blockwise from the forward's log-sum-exp.
#pragma once

#include <cstdint>

namespace ytape::kernels {

/// Sizes of one attention call. Tensors are column-major (the first index varies fastest).
/// Every size is at least 1.
struct AttentionDims {
  int64_t d;      ///< features of each query and key
  int64_t dv;     ///< features of each value and of each output
  int64_t tq;     ///< queries
  int64_t tk;     ///< keys (and values)
  int64_t batch;  ///< independent slices (heads times batch)
};

/// q (d, tq, batch), k (d, tk, batch), v (dv, tk, batch), mask (tk, tq) shared by every slice
/// (mask[j + tk*i]: query i sees key j), out (dv, tq, batch), lse (tq, batch).
/// S[j,i,b] = Σ_c k[c,j,b] q[c,i,b] where mask[j + tk*i], -inf where not;
/// P[:,i,b] = softmax over j of S[:,i,b]; out[:,i,b] = Σ_j P[j,i,b] v[:,j,b];
/// lse[i + tq*b] = log Σ_j e^S[j,i,b] (computed as m + log Σ e^(S-m), m the max).
/// A query that sees no key: its output is NaN and its lse -inf (softmax of all -inf is
/// NaN, as the unfused ops give).
/// `mask` is never null (an all-true mask where there is none). Blocks of keys that a
/// block of queries does not see at all (above a causal mask's diagonal) are skipped.
/// Slices and blocks of queries are split between threads (runtime/parallel.h); each
/// output's sums run in one fixed order, so the bits do not depend on the thread count.
/// Under GCC the loops are built for AVX-512, AVX2 and the baseline (YTAPE_ROW_TARGETS)
/// with fused multiply-adds where the instruction set has them, so the bits may differ
/// between processors.
template <class T>
void attention_forward(const T* q, const T* k, const T* v, const bool* mask, T* out, T* lse,
                       const AttentionDims& n);

/// The gradient: given dout (dv, tq, batch) and the forward's out and lse, writes
/// dq (d, tq, batch), dk (d, tk, batch), dv (dv, tk, batch) (overwritten, not accumulated).
/// With P recomputed blockwise as e^(S - lse): D_i = Σ_c dout[c,i] out[c,i];
/// dP[j,i] = Σ_c v[c,j] dout[c,i]; dS = P ⊙ (dP - D_i); dq[:,i] = Σ_j dS[j,i] k[:,j];
/// dk[:,j] = Σ_i dS[j,i] q[:,i]; dv[:,j] = Σ_i P[j,i] dout[:,i].
/// Masked pairs contribute nothing. A query that sees no key (lse -inf, out NaN) has
/// dq = 0 and adds nothing to dk and dv, whatever its dout.
/// Slices are split between threads; the bits do not depend on the thread count.
template <class T>
void attention_backward(const T* q, const T* k, const T* v, const bool* mask, const T* out,
                        const T* lse, const T* dout, T* dq, T* dk, T* dv, const AttentionDims& n);

}  // namespace ytape::kernels
