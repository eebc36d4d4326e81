// matmul against a triple loop over the definition, with every transpose flag and batch
// dims, in both kernel sets (oneDNN's GEMM for f32 in the fast one, OpenBLAS's otherwise).
#include <doctest/doctest.h>

#include <cmath>
#include <utility>
#include <vector>

#include "kernel_harness.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::random_tensor;
using testing::run_op1;
using testing::to_doubles;

struct MatmulCase {
  int64_t m, k, n;
  Shape batch;
  bool ta = false, tb = false;
};

// Shape of an operand of logical size (rows, cols), stored transposed when `t`.
Shape operand(int64_t rows, int64_t cols, bool t, const Shape& batch) {
  Shape s = t ? Shape{cols, rows} : Shape{rows, cols};
  s.insert(s.end(), batch.begin(), batch.end());
  return s;
}

std::vector<double> reference(const MatmulCase& c, const std::vector<double>& a,
                              const std::vector<double>& b) {
  int64_t batch = num_elements(c.batch);
  std::vector<double> out(static_cast<size_t>(c.m * c.n * batch));
  for (int64_t p = 0; p < batch; ++p)
    for (int64_t j = 0; j < c.n; ++j)
      for (int64_t i = 0; i < c.m; ++i) {
        double s = 0;
        for (int64_t l = 0; l < c.k; ++l) {
          // A[i, l] and B[l, j], read through the stored (possibly transposed) layout.
          double av = a[p * c.m * c.k + (c.ta ? l + c.k * i : i + c.m * l)];
          double bv = b[p * c.k * c.n + (c.tb ? j + c.n * l : l + c.k * j)];
          s += av * bv;
        }
        out[p * c.m * c.n + i + c.m * j] = s;
      }
  return out;
}

TEST_CASE("matmul matches the reference for every transpose flag and batch dims") {
  // Products of a row or a column (matrix-vector), of few rows and many columns (computed
  // transposed), with an empty inner dim (giving zeros), and ResNet-18's last layer at
  // batch 1 (its weight gradient an outer product); A^T B with few columns, computed as
  // (B^T A)^T, as in an LSTM's backward, with tiles of the transposition cut at the edges.
  std::vector<MatmulCase> shapes = {{3, 4, 5, {}},       {6, 1, 2, {}},      {4, 3, 2, {3}},
                                    {5, 6, 4, {2, 3}},   {40, 33, 37, {}},   {1, 7, 1, {}},
                                    {5, 3, 1, {2}},      {1, 4, 6, {}},      {3, 5, 20, {2}},
                                    {2, 0, 3, {}},       {1000, 512, 1, {}}, {512, 1, 1000, {}},
                                    {256, 1024, 32, {}}, {70, 50, 33, {2}}};
  uint64_t seed = 700;
  for (MatmulCase c : shapes) {
    for (int flags = 0; flags < 4; ++flags) {
      c.ta = flags & 1, c.tb = flags & 2;
      for (const auto& bound : {std::pair{DType::f32, KernelSet::fast},
                                {DType::f32, KernelSet::reference},
                                {DType::f64, KernelSet::fast}}) {
        const auto& dtype = std::get<0>(bound);
        const auto& set = std::get<1>(bound);
        CAPTURE(c.m);
        CAPTURE(c.k);
        CAPTURE(c.n);
        CAPTURE(shape_str(c.batch));
        CAPTURE(c.ta);
        CAPTURE(c.tb);
        CAPTURE(dtype_name(dtype));
        CAPTURE(static_cast<int>(set));
        Tensor a = random_tensor({dtype, operand(c.m, c.k, c.ta, c.batch)}, ++seed);
        Tensor b = random_tensor({dtype, operand(c.k, c.n, c.tb, c.batch)}, ++seed);
        Tensor out =
            run_op1(Prim::matmul, {a, b}, {{"transpose_a", c.ta}, {"transpose_b", c.tb}}, set);
        // Sums of k products drift as sqrt(k) roundings.
        double tol = (dtype == DType::f32 ? 2e-5 : 1e-13) * std::max(1.0, std::sqrt(c.k / 64.0));
        check_close(out, reference(c, to_doubles(a), to_doubles(b)), tol, tol);
      }
    }
  }
}

}  // namespace

}  // namespace ytape
