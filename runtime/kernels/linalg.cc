// Kernels of the linalg family: matmul over OpenBLAS, and the gemm wrapper the other
// dense families share.

#include <algorithm>
#include <climits>
#include <cstring>
#include <mutex>

#include "runtime/address_space.h"
#include "runtime/kernels/dense.h"
#include "runtime/kernels/flash_attention.h"
#include "runtime/kernels/onednn.h"
#include "runtime/parallel.h"

namespace ytape {

namespace dense {

namespace {

// OpenBLAS takes 32-bit sizes; a larger one would wrap silently.
blasint blas_size(int64_t n) {
  if (n > INT_MAX) user_error("matrix dimension {} is too large for BLAS", n);
  return static_cast<blasint>(n);
}

CBLAS_TRANSPOSE trans(bool t) {
  return t ? CblasTrans : CblasNoTrans;
}

// Degenerate products that BLAS either rejects (a leading dimension of 0) or need not see.
// Returns true when it has finished C.
template <typename T>
bool gemm_degenerate(int64_t m, int64_t n, int64_t k, T beta, T* c, int64_t ldc) {
  if (m == 0 || n == 0) return true;
  if (k != 0) return false;
  for (int64_t j = 0; j < n; ++j) {
    T* col = c + j * ldc;
    for (int64_t i = 0; i < m; ++i) col[i] = beta == T(0) ? T(0) : beta * col[i];
  }
  return true;
}

// OpenBLAS takes a 128 MB buffer (BUFFER_SIZE in its memory.c, on x86-64) at the first
// call from a thread and keeps it; when the allocation fails it retries forever, so under
// a tight `ulimit -v` that call would hang. Checked before it, then made with a 1x1 product.
void reserve_buffer() {
  require_address_space((128ull << 20) + (32ull << 20), "OpenBLAS's 128 MB buffer");
  float a = 1, b = 1, c = 0;
  cblas_sgemm(CblasColMajor, CblasNoTrans, CblasNoTrans, 1, 1, 1, 1.0f, &a, 1, &b, 1, 0.0f, &c, 1);
}

// Before every BLAS call: the buffer is reserved at the first.
void blas_ready() {
  static std::once_flag once;
  std::call_once(once, reserve_buffer);
}

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k, float alpha,
               const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
               int64_t ldc) {
  blas_ready();
  cblas_sgemm(CblasColMajor, ta, tb, blas_size(m), blas_size(n), blas_size(k), alpha, a,
              blas_size(lda), b, blas_size(ldb), beta, c, blas_size(ldc));
}

void blas_gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m, int64_t n, int64_t k,
               double alpha, const double* a, int64_t lda, const double* b, int64_t ldb,
               double beta, double* c, int64_t ldc) {
  blas_ready();
  cblas_dgemm(CblasColMajor, ta, tb, blas_size(m), blas_size(n), blas_size(k), alpha, a,
              blas_size(lda), b, blas_size(ldb), beta, c, blas_size(ldc));
}

void blas_gemv(CBLAS_TRANSPOSE ta, int64_t rows, int64_t cols, float alpha, const float* a,
               int64_t lda, const float* x, int64_t incx, float beta, float* y, int64_t incy) {
  blas_ready();
  cblas_sgemv(CblasColMajor, ta, blas_size(rows), blas_size(cols), alpha, a, blas_size(lda), x,
              blas_size(incx), beta, y, blas_size(incy));
}

void blas_gemv(CBLAS_TRANSPOSE ta, int64_t rows, int64_t cols, double alpha, const double* a,
               int64_t lda, const double* x, int64_t incx, double beta, double* y, int64_t incy) {
  blas_ready();
  cblas_dgemv(CblasColMajor, ta, blas_size(rows), blas_size(cols), alpha, a, blas_size(lda), x,
              blas_size(incx), beta, y, blas_size(incy));
}

// A product with one column (or one row) as a matrix-vector product: OpenBLAS's GEMM would
// pack it like any matrix, at half the speed of its GEMV. Returns false for other shapes.
template <typename T>
bool gemm_as_gemv(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
                  int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (n != 1 && m != 1) return false;
  // GEMV scales y by beta, and 0 * NaN would keep garbage as NaN.
  if (beta == T(0)) {
    for (int64_t j = 0; j < n; ++j) std::fill_n(c + j * ldc, m, T(0));
  }
  if (n == 1) {  // c = op(A) op(B), op(B) a column
    blas_gemv(trans(trans_a), trans_a ? k : m, trans_a ? m : k, alpha, a, lda, b, trans_b ? ldb : 1,
              beta, c, 1);
  } else {  // c^T = op(B)^T op(A)^T, op(A) a row
    blas_gemv(trans(!trans_b), trans_b ? n : k, trans_b ? k : n, alpha, b, ldb, a,
              trans_a ? 1 : lda, beta, c, ldc);
  }
  return true;
}

// OpenBLAS threads a product of few rows and many columns poorly (49 x 512, a ResNet layer
// at 7x7, runs 30% slower than its transpose), so when beta is 0 such a C is computed as
// C^T = op(B)^T op(A)^T in scratch memory and transposed into place.
template <typename T>
void gemm_impl(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, T alpha, const T* a,
               int64_t lda, const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
  if (gemm_degenerate(m, n, k, beta, c, ldc)) return;
  if (gemm_as_gemv(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc)) return;
  if (beta != T(0) || m >= 128 || 4 * m > n) {
    blas_gemm(trans(trans_a), trans(trans_b), m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
    return;
  }
  T* ct = scratch<T, kGemmScratch>(m * n);
  blas_gemm(trans(!trans_b), trans(!trans_a), n, m, k, alpha, b, ldb, a, lda, T(0), ct, n);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) c[i + ldc * j] = ct[j + n * i];
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
          int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, double alpha,
          const double* a, int64_t lda, const double* b, int64_t ldb, double beta, double* c,
          int64_t ldc) {
  gemm_impl(trans_a, trans_b, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

}  // namespace dense

namespace {

// C = a b^T of a column a (m elements, `a_step` apart) and a row b (n, `b_step` apart):
// a product with k = 1, such as a dense layer's weight gradient at batch 1. A GEMM packs
// both for nothing (oneDNN's took 1.2 ms for 512 x 1000, 20 times this loop's time).
void outer_product(int64_t m, int64_t n, const float* a, int64_t a_step, const float* b,
                   int64_t b_step, float* c, int64_t ldc) {
  parallel_for(n, std::max<int64_t>(1, 16384 / m), [&](int64_t begin, int64_t end) {
    for (int64_t j = begin; j < end; ++j) {
      float bj = b[j * b_step];
      float* col = c + j * ldc;
      for (int64_t i = 0; i < m; ++i) col[i] = a[i * a_step] * bj;
    }
  });
}

// The m x k matrix A^T of A (k x m, column-major with leading dimension lda), in `out`,
// by tiles that stay in the L1 cache.
void transpose_into(const float* a, int64_t lda, int64_t k, int64_t m, float* out) {
  constexpr int64_t kTile = 32;
  parallel_for((m + kTile - 1) / kTile, 4, [&](int64_t begin, int64_t end) {
    for (int64_t j0 = begin * kTile; j0 < std::min(end * kTile, m); j0 += kTile) {
      for (int64_t i0 = 0; i0 < k; i0 += kTile) {
        for (int64_t j = j0; j < std::min(j0 + kTile, m); ++j) {
          for (int64_t i = i0; i < std::min(i0 + kTile, k); ++i) out[j + i * m] = a[i + j * lda];
        }
      }
    }
  });
}

// y = A x (A rows x cols, column-major) or, transposed, y = A^T x, split by outputs: each
// output's sum runs in one order at any thread count, where oneDNN's and OpenBLAS's GEMV
// split the sums between threads by their number (so --threads would change the bits).
// Memory-bound: one pass over A.
void gemv_by_outputs(bool trans, int64_t rows, int64_t cols, const float* a, int64_t lda,
                     const float* x, int64_t incx, float* y, int64_t incy) {
  if (!trans) {  // y[i] += A[i, j] x[j] over j in order: columns of A, contiguous
    constexpr int64_t kBlock = 256;
    parallel_for((rows + kBlock - 1) / kBlock, std::max<int64_t>(1, 16384 / (kBlock * cols)),
                 [&](int64_t begin, int64_t end) {
                   for (int64_t r0 = begin * kBlock; r0 < std::min(end * kBlock, rows);
                        r0 += kBlock) {
                     const int64_t n = std::min(kBlock, rows - r0);
                     float acc[kBlock] = {};
                     for (int64_t j = 0; j < cols; ++j) {
                       const float* col = a + j * lda + r0;
                       const float xj = x[j * incx];
                       for (int64_t i = 0; i < n; ++i) acc[i] += col[i] * xj;
                     }
                     for (int64_t i = 0; i < n; ++i) y[(r0 + i) * incy] = acc[i];
                   }
                 });
    return;
  }
  // y[i] = A[:, i] . x, in 16 lanes combined in order.
  parallel_for(cols, std::max<int64_t>(1, 16384 / rows), [&](int64_t begin, int64_t end) {
    for (int64_t i = begin; i < end; ++i) {
      const float* col = a + i * lda;
      float lane[16] = {};
      int64_t j = 0;
      for (; j + 16 <= rows; j += 16) {
        for (int l = 0; l < 16; ++l) lane[l] += col[j + l] * x[(j + l) * incx];
      }
      float sum = 0;
      for (; j < rows; ++j) sum += col[j] * x[j * incx];
      for (float v : lane) sum += v;
      y[i * incy] = sum;
    }
  });
}

// C = op(A) op(B) on oneDNN (see onednn_gemm.cc for why), alpha 1 and beta 0 as matmul asks.
void fast_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
               int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m == 0 || n == 0 || k == 0) {
    dense::gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else if (k == 1) {
    outer_product(m, n, a, ta ? lda : 1, b, tb ? 1 : ldb, c, ldc);
  } else if (n == 1) {  // c = op(A) op(B), op(B) a column
    gemv_by_outputs(ta, ta ? k : m, ta ? m : k, a, lda, b, tb ? ldb : 1, c, 1);
  } else if (m == 1) {  // c^T = op(B)^T op(A)^T, op(A) a row
    gemv_by_outputs(!tb, tb ? n : k, tb ? k : n, b, ldb, a, ta ? 1 : lda, c, ldc);
  } else if (ta && !tb && n <= 64) {
    // oneDNN's product with A transposed and few columns ran at a fifth of its speed
    // untransposed (A^T B of 1024 x 256 by 1024 x 32, an LSTM's backward: 0.39 ms against
    // 0.07). Its transpose C^T = B^T A, with the small B transposed, is computed instead,
    // and transposed back, which costs a pass over C alone.
    thread_local std::vector<float> ct;
    ct.resize(static_cast<size_t>(m * n));
    onednn::gemm(true, false, n, m, k, b, ldb, a, lda, ct.data(), n);
    transpose_into(ct.data(), n, n, m, c);
  } else {
    onednn::gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

// One of matmul's small products side by side, on the calling thread: there oneDNN takes
// A transposed at full speed (attention's 64 x 64 x 32: 0.26 ms for 128 of them, against
// 0.63 through fast_gemm's transposed copy, which only its threaded GEMM needs).
void small_gemm(bool ta, bool tb, int64_t m, int64_t n, int64_t k, float alpha, const float* a,
                int64_t lda, const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
  if (m <= 1 || n <= 1 || k <= 1) {
    fast_gemm(ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
  } else {
    onednn::gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc);
  }
}

using FloatGemm = void (*)(bool, bool, int64_t, int64_t, int64_t, float, const float*, int64_t,
                           const float*, int64_t, float, float*, int64_t);

// A batch of products this small or smaller (in FLOPs each) runs one product per thread.
constexpr double kSmallProduct = 1 << 26;

// out[:, :, k] = A[:, :, k] * B[:, :, k], one GEMM per batch element, each threaded; with
// `Small` (not null), many small ones (attention's, one per head and sequence) run one per
// thread instead, each by Small on that thread: split between threads, 64 x 64 x 32 ran
// at 28 GFLOP/s. The choice follows the shapes alone, so the bits do not depend on the
// thread count.
template <typename T, auto Gemm, auto Small>
void matmul(const KernelCall& call) {
  const Tensor& a = *call.args[0];
  const Tensor& b = *call.args[1];
  Tensor& out = *call.outs[0];
  const auto attrs = attrs_of<Prim::matmul>(call.op.attrs);
  bool ta = attrs.transpose_a;
  bool tb = attrs.transpose_b;
  int64_t m = out.dim(1), n = out.dim(2), k = ta ? a.dim(1) : a.dim(2);
  int64_t batch = 1;
  for (int d = 3; d <= out.rank(); ++d) batch *= out.dim(d);
  // A leading dimension must be at least 1 even for an empty matrix.
  int64_t lda = std::max<int64_t>(a.dim(1), 1), ldb = std::max<int64_t>(b.dim(1), 1);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  auto product = [&](auto gemm, int64_t i) {
    gemm(ta, tb, m, n, k, T(1), pa + i * a.dim(1) * a.dim(2), lda, pb + i * b.dim(1) * b.dim(2),
         ldb, T(0), pc + i * m * n, std::max<int64_t>(m, 1));
  };
  if constexpr (Small != nullptr) {
    if (batch >= 2 && 2.0 * m * n * k <= kSmallProduct) {
      // Inside the threads' region OpenMP does not nest: each product runs on its thread.
      parallel_for(batch, 1, [&](int64_t begin, int64_t end) {
        for (int64_t i = begin; i < end; ++i) product(Small, i);
      });
      return;
    }
  }
  for (int64_t i = 0; i < batch; ++i) product(Gemm, i);
}

// Attention (flash_attention.h): the tape's slices, every dim after the first two, are
// the kernel's batch.
kernels::AttentionDims attention_dims(const KernelCall& call) {
  const Tensor &q = *call.args[0], &k = *call.args[1], &v = *call.args[2];
  int64_t slices = 1;
  for (int d = 3; d <= q.rank(); ++d) slices *= q.dim(d);
  return {.d = q.dim(1), .dv = v.dim(1), .tq = q.dim(2), .tk = k.dim(2), .batch = slices};
}

// The shape rule asks for a feature and a key at least; with no query or no slice, the
// outputs are empty but for the backward's dk and dv, zero.
bool no_queries(const KernelCall& call, const kernels::AttentionDims& n) {
  if (n.tq > 0 && n.batch > 0) return false;
  for (Tensor* o : call.outs) std::memset(o->raw(), 0, static_cast<size_t>(o->bytes()));
  return true;
}

template <typename T>
void attention(const KernelCall& call) {
  const kernels::AttentionDims n = attention_dims(call);
  if (no_queries(call, n)) return;
  const auto& a = call.args;
  kernels::attention_forward<T>(a[0]->data<T>(), a[1]->data<T>(), a[2]->data<T>(),
                                a[3]->data<bool>(), call.outs[0]->data<T>(),
                                call.outs[1]->data<T>(), n);
}

template <typename T>
void attention_gradient(const KernelCall& call) {
  const kernels::AttentionDims n = attention_dims(call);
  if (no_queries(call, n)) return;
  const auto& a = call.args;
  const auto& o = call.outs;
  kernels::attention_backward<T>(
      a[0]->data<T>(), a[1]->data<T>(), a[2]->data<T>(), a[3]->data<bool>(), a[4]->data<T>(),
      a[5]->data<T>(), a[6]->data<T>(), o[0]->data<T>(), o[1]->data<T>(), o[2]->data<T>(), n);
}

}  // namespace

void register_linalg_kernels(KernelTable& t) {
  t.set(Prim::attention, dense::float_kernel<attention<float>, attention<double>>);
  t.set(Prim::attention_backward,
        dense::float_kernel<attention_gradient<float>, attention_gradient<double>>);
  constexpr FloatGemm float_gemm =
      static_cast<FloatGemm>(dense::gemm);  // OpenBLAS's, the reference
  constexpr auto double_gemm =
      static_cast<void (*)(bool, bool, int64_t, int64_t, int64_t, double, const double*, int64_t,
                           const double*, int64_t, double, double*, int64_t)>(dense::gemm);
  if (t.kernels_set == KernelSet::fast) {
    t.set(Prim::matmul, dense::float_kernel<matmul<float, fast_gemm, small_gemm>,
                                            matmul<double, double_gemm, nullptr>>);
  } else {
    t.set(Prim::matmul, dense::float_kernel<matmul<float, float_gemm, nullptr>,
                                            matmul<double, double_gemm, nullptr>>);
  }
}

}  // namespace ytape
