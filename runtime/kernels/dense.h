// Helpers shared by the dense kernel families (linalg, conv, pool, norm): BLAS calls,
// float-dtype dispatch, per-thread scratch memory and loop geometry.
#pragma once

#include <cblas.h>

#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <memory>
#include <new>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/parallel.h"

namespace ytape::dense {

/// A kernel that dispatches on the dtype of the first output: F for f32, D for f64.
template <Kernel F, Kernel D>
void float_kernel(const KernelCall& call) {
  (call.outs[0]->dtype() == DType::f64 ? D : F)(call);
}

/// Column-major C = alpha * op(A) * op(B) + beta * C, with op(A) of size (m, k) and op(B)
/// of size (k, n), through OpenBLAS (GEMV for a single row or column). Empty products are
/// handled here: k == 0 gives C = beta * C. beta == 0 overwrites C without reading it (NaN
/// garbage in C does not leak). May use the scratch slot kGemmScratch.
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc);
void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc);

/// The scratch slot that gemm uses; kernels take slot 0.
inline constexpr int kGemmScratch = 1;

/// A buffer of at least `n` elements owned by the calling thread, reused by the next call
/// on the same thread with the same `Slot` (the contents are not kept). A kernel that needs
/// two buffers at once takes them from two slots.
/// The buffer is aligned to 64 bytes: oneDNN's kernels store whole cache lines there
/// (Winograd's with non-temporal stores, which fault on anything less).
template <typename T, int Slot = 0>
T* scratch(int64_t n) {
  thread_local std::unique_ptr<T[], decltype(&std::free)> buffer(nullptr, &std::free);
  thread_local int64_t size = 0;
  if (size < n) {
    buffer.reset();
    size_t bytes = (static_cast<size_t>(n) * sizeof(T) + 63) / 64 * 64;
    buffer.reset(static_cast<T*>(std::aligned_alloc(64, bytes)));
    if (buffer == nullptr) throw std::bad_alloc();
    std::memset(buffer.get(), 0, bytes);
    size = n;
  }
  return buffer.get();
}

/// 16 bytes of T as one GCC/Clang vector (one SSE register, the x86-64 baseline), with
/// integers of T's size in as many lanes. It serves the loops that the compiler does not
/// vectorize by itself: sums (which it may not reorder without -ffast-math) and selects
/// (which it turns into branches). Without AVX, GCC lowers compares and selects on wider
/// vectors to scalar code.
template <typename T>
struct Simd {
  using Int = std::conditional_t<sizeof(T) == 4, int32_t, int64_t>;
  typedef T Vec __attribute__((vector_size(16)));
  typedef Int IntVec __attribute__((vector_size(16)));
  static constexpr int kWidth = 16 / sizeof(T);

  /// Every lane x (bit for bit: -0 stays -0).
  static Vec splat(T x) {
    Vec v;
    for (int l = 0; l < kWidth; ++l) v[l] = x;
    return v;
  }
  template <typename V, typename E>
  static void load(V& v, const E* p) {
    std::memcpy(&v, p, sizeof v);
  }
  template <typename V, typename E>
  static void store(E* p, const V& v) {
    std::memcpy(p, &v, sizeof v);
  }
};

/// Runs body(begin, end) over [0, n) in parallel when the whole loop does enough work to
/// pay for waking the threads; `work_per_item` is a rough cost of one item in elements.
template <typename Body>
void parallel_work(int64_t n, int64_t work_per_item, const Body& body) {
  constexpr int64_t kMinParallelWork = 16384;
  int64_t grain = kMinParallelWork / std::max<int64_t>(work_per_item, 1) + 1;
  parallel_for(n, grain, body);
}

/// Outputs o in [lo, hi) of a sliding window whose input position is o * stride + offset,
/// restricted to positions inside [0, size): the part of a row that reads real input.
struct Span1 {
  int64_t lo, hi;
};
inline Span1 valid_outputs(int64_t size, int64_t outs, int64_t stride, int64_t offset) {
  int64_t lo = offset >= 0 ? 0 : (-offset + stride - 1) / stride;
  int64_t hi = size - offset <= 0 ? 0 : (size - 1 - offset) / stride + 1;
  lo = std::min(lo, outs);
  hi = std::clamp(hi, lo, outs);
  return {lo, hi};
}

}  // namespace ytape::dense
