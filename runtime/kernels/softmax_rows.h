// Softmax and log-softmax over contiguous rows of f32 values, vectorized (the fast kernels
// of softmax and log_softmax over the first dim: attention's scores, a classifier's
// logits). Compiled without fused multiply-adds and for every instruction set alike, as
// the elementwise rows are, so that each gives the same bits.
#pragma once

#include <cstdint>

namespace ytape::kernels {

/// y = softmax (or, with `log`, log_softmax) of each of `rows` rows of `n` contiguous
/// values of x, rows one after another: e^(x - m) / Σ e^(x - m), or (x - m) - log Σ e^(x
/// - m), with m the row's maximum. Each row's sum runs in f64 in one fixed order (16
/// partial sums, then the rest), so the bits do not depend on how the rows are split
/// between threads.
/// y may be x.
void softmax_rows(const float* x, float* y, int64_t n, int64_t rows, bool log);

}  // namespace ytape::kernels
