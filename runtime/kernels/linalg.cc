// Kernels of the linalg family: matmul over OpenBLAS, and the gemm wrapper the other
// dense families share.
#include <climits>

#include "runtime/kernels/dense.h"

namespace ytape {

namespace dense {

namespace {

// OpenBLAS takes 32-bit sizes; a larger one would wrap silently.
blasint blas_size(int64_t n) {
  if (n > INT_MAX) user_error("matrix dimension {} is too large for BLAS", n);
  return static_cast<blasint>(n);
}

CBLAS_TRANSPOSE trans(bool t) { return t ? CblasTrans : CblasNoTrans; }

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

// C = op(A) op(B) with beta = 0. OpenBLAS threads a product of few rows and many columns
// poorly (49 x 512, a ResNet layer at 7x7, runs at two thirds of the speed of its
// transpose), so such a C is computed as C^T = op(B)^T op(A)^T and transposed.
template <typename T, typename Gemm>
void gemm_oriented(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const T* a,
                   int64_t lda, const T* b, int64_t ldb, T* c, int64_t ldc, Gemm blas) {
  if (m >= 128 || 4 * m > n) {
    blas(trans(trans_a), trans(trans_b), m, n, k, a, lda, b, ldb, c, ldc);
    return;
  }
  T* ct = scratch<T, kGemmSlot>(m * n);
  blas(trans(!trans_b), trans(!trans_a), n, m, k, b, ldb, a, lda, ct, n);
  for (int64_t j = 0; j < n; ++j) {
    for (int64_t i = 0; i < m; ++i) c[i + ldc * j] = ct[j + n * i];
  }
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, float alpha,
          const float* a, int64_t lda, const float* b, int64_t ldb, float beta, float* c,
          int64_t ldc) {
  if (gemm_degenerate(m, n, k, beta, c, ldc)) return;
  auto blas = [&](CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, int64_t m_, int64_t n_, int64_t k_,
                  const float* a_, int64_t lda_, const float* b_, int64_t ldb_, float* c_,
                  int64_t ldc_) {
    cblas_sgemm(CblasColMajor, ta, tb, blas_size(m_), blas_size(n_), blas_size(k_), alpha, a_,
                blas_size(lda_), b_, blas_size(ldb_), beta, c_, blas_size(ldc_));
  };
  if (beta != 0) return blas(trans(trans_a), trans(trans_b), m, n, k, a, lda, b, ldb, c, ldc);
  gemm_oriented(trans_a, trans_b, m, n, k, a, lda, b, ldb, c, ldc, blas);
}

}  // namespace dense

namespace {

// out[:, :, k] = A[:, :, k] * B[:, :, k], one GEMM per batch element; OpenBLAS threads each.
template <typename T>
void matmul(const KernelCall& call) {
  const Tensor& a = *call.args[0];
  const Tensor& b = *call.args[1];
  Tensor& out = *call.outs[0];
  bool ta = call.op.attrs.get_bool("transpose_a");
  bool tb = call.op.attrs.get_bool("transpose_b");
  int64_t m = out.dim(1), n = out.dim(2), k = ta ? a.dim(1) : a.dim(2);
  int64_t batch = 1;
  for (int d = 3; d <= out.rank(); ++d) batch *= out.dim(d);
  // A leading dimension must be at least 1 even for an empty matrix.
  int64_t lda = std::max<int64_t>(a.dim(1), 1), ldb = std::max<int64_t>(b.dim(1), 1);
  const T* pa = a.data<T>();
  const T* pb = b.data<T>();
  T* pc = out.data<T>();
  for (int64_t i = 0; i < batch; ++i) {
    dense::gemm(ta, tb, m, n, k, T(1), pa + i * a.dim(1) * a.dim(2), lda,
                pb + i * b.dim(1) * b.dim(2), ldb, T(0), pc + i * m * n,
                std::max<int64_t>(m, 1));
  }
}

}  // namespace

void register_linalg_kernels(KernelTable& t) {
  t.set(Prim::matmul, dense::float_kernel<matmul<float>, matmul<double>>);
}

}  // namespace ytape
