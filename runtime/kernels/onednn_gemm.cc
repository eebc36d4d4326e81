// oneDNN's GEMM for the fast f32 matmul.
//
// OpenBLAS (held to its AVX2 kernels on these machines, docs/benchmarks.md) runs its
// threads in a pool of its own, beside the OpenMP threads of oneDNN and ytape's kernels. OpenMP's
// threads spin for a while after each parallel region, so an OpenBLAS call right after a
// convolution found the other core busy: ResNet-18's three f32 products took 4.4 ms of a
// 46 ms batch-1 step at 0.7 GFLOP/s (0.33 ms when OpenMP did not spin). oneDNN's GEMM runs
// on the same OpenMP threads, with AVX-512 where the processor has it.
#include <omp.h>

#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>

#include "runtime/address_space.h"
#include "runtime/kernels/dense.h"
#include "runtime/kernels/onednn.h"
#include "runtime/parallel.h"

namespace ytape::onednn {

// The address space oneDNN may map beyond what the process holds as it writes a kernel's
// code (a few hundred kB) and its bookkeeping, with room to spare.
void require_code_room(const char* what) {
  require_address_space(32ull << 20, what);
}

namespace {

// oneDNN writes its GEMM's code at the first call, inside its threads.
void gemm_ready() {
  static std::once_flag once;
  std::call_once(once, [] { require_code_room("oneDNN's matrix product kernels"); });
}

}  // namespace

void gemm(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
          const float* b, int64_t ldb, float* c, int64_t ldc, float beta) {
  gemm_ready();
  if (omp_get_max_threads() != num_threads()) omp_set_num_threads(num_threads());
  // Column-major C = op(A) op(B) is row-major C^T = op(B)^T op(A)^T over the same memory.
  dnnl_status_t status = dnnl_sgemm(trans_b ? 'T' : 'N', trans_a ? 'T' : 'N', n, m, k, 1.0f, b, ldb,
                                    a, lda, beta, c, ldc);
  // Where oneDNN refuses the sizes, OpenBLAS computes the product (as --kernels reference).
  if (status != dnnl_success)
    dense::gemm(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, beta, c, ldc);
}

void gemm_here(bool trans_a, bool trans_b, int64_t m, int64_t n, int64_t k, const float* a,
               int64_t lda, const float* b, int64_t ldb, float* c, int64_t ldc) {
  // Inside a parallel region OpenMP does not nest: oneDNN's GEMM runs on this thread.
  gemm_ready();
  dnnl_status_t status = dnnl_sgemm(trans_b ? 'T' : 'N', trans_a ? 'T' : 'N', n, m, k, 1.0f, b, ldb,
                                    a, lda, 0.0f, c, ldc);
  if (status != dnnl_success)
    dense::gemm(trans_a, trans_b, m, n, k, 1.0f, a, lda, b, ldb, 0.0f, c, ldc);
}

}  // namespace ytape::onednn
