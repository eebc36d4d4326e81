// gather and scatter_add against references written from their definitions, and their
// errors for indices out of range.
#include <doctest/doctest.h>

#include <cmath>

#include "kernel_harness.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using testing::check_equal;
using testing::make_tensor;
using testing::random_tensor;
using testing::ravel;
using testing::run_op1;
using testing::to_doubles;
using testing::unravel;

struct Case {
  Shape data;  // gather's x, scatter_add's result
  Shape idx;
  int64_t dim;
};

// Labels, embeddings, full index tensors, partial broadcasting, empty dims, threads.
const Case kCases[] = {
    {{5}, {3}, 1},
    {{5}, {0}, 1},
    {{4, 3}, {1, 3}, 1},   // labels
    {{6, 10}, {1, 7}, 2},  // embeddings
    {{4, 3}, {4, 3}, 1},
    {{4, 3}, {4, 5}, 2},
    {{4, 3, 5}, {1, 7, 1}, 2},
    {{4, 3, 5}, {4, 2, 1}, 2},  // idx not broadcast before dim: single-element runs
    {{4, 3, 5}, {1, 3, 5}, 3},
    {{2, 0, 3}, {1, 0, 2}, 3},
    {{64, 1000}, {1, 2000}, 2},  // large embedding lookup
    {{300, 257}, {300, 257}, 1},
    // idx along dim only, which gather and scatter_add walk by rows: single elements over
    // many outer slabs (a kernel's flip), and runs, both in threads.
    {{9, 20000}, {9, 1}, 1},
    {{3, 4, 3000}, {1, 4, 1}, 2},
    {{6, 3, 2}, {1, 1, 5}, 3},
};

// The position in `data` that element j of the walked side (gather's output, scatter's y)
// maps to, with idx broadcast where its dims are 1.
int64_t source(const Case& c, const Shape& walked, const std::vector<double>& idx, int64_t i) {
  std::vector<int64_t> j = unravel(walked, i), k = j;
  for (size_t d = 0; d < k.size(); ++d) {
    if (c.idx[d] == 1) k[d] = 0;
  }
  j[c.dim - 1] = static_cast<int64_t>(idx[ravel(c.idx, k)]) - 1;
  return ravel(c.data, j);
}

Shape walked_shape(const Case& c) {
  Shape s = c.data;
  s[c.dim - 1] = c.idx[c.dim - 1];
  return s;
}

TEST_CASE("gather reads x at the indexed position along dim") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 1;
  for (const Case& c : kCases) {
    for (DType dtype : {DType::f32, DType::f64, DType::f16, DType::i64, DType::boolean}) {
      CAPTURE(type_str({dtype, c.data}));
      CAPTURE(shape_str(c.idx));
      CAPTURE(c.dim);
      Tensor x = random_tensor({dtype, c.data}, ++seed, -9, 9);
      Tensor idx =
          random_tensor({DType::i64, c.idx}, ++seed, 1, static_cast<double>(c.data[c.dim - 1]));
      std::vector<double> xv = to_doubles(x), iv = to_doubles(idx);
      Shape out = walked_shape(c);
      std::vector<double> want(num_elements(out));
      for (size_t i = 0; i < want.size(); ++i)
        want[i] = xv[source(c, out, iv, static_cast<int64_t>(i))];
      check_equal(run_op1(Prim::gather, {x, idx}, {{"dim", c.dim}}), want);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("scatter_add adds y where gather would read") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 100;
  for (const Case& c : kCases) {
    for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
      CAPTURE(type_str({dtype, c.data}));
      CAPTURE(shape_str(c.idx));
      CAPTURE(c.dim);
      Shape ys = walked_shape(c);
      // Small integers keep every float sum exact, whatever the order of the additions.
      Tensor y = random_tensor({dtype, ys}, ++seed, -9, 9);
      if (dtype != DType::i64) {
        std::vector<double> v = to_doubles(y);
        for (double& e : v) e = std::round(e);
        y = make_tensor(y.type(), v);
      }
      const int64_t size = c.data[c.dim - 1];
      Tensor idx = random_tensor({DType::i64, c.idx}, ++seed, 1, static_cast<double>(size));
      std::vector<double> yv = to_doubles(y), iv = to_doubles(idx);
      std::vector<double> want(num_elements(c.data), 0);
      for (size_t i = 0; i < yv.size(); ++i)
        want[source(c, ys, iv, static_cast<int64_t>(i))] += yv[i];
      check_equal(run_op1(Prim::scatter_add, {y, idx}, {{"dim", c.dim}, {"size", size}}), want);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("indices out of range are user errors naming the index and the range") {
  Tensor x = random_tensor({DType::f32, {4, 3}}, 7);
  Tensor idx = make_tensor({DType::i64, {1, 3}}, {2, 5, 0});
  CHECK_THROWS_WITH_AS(run_op1(Prim::gather, {x, idx}, {{"dim", int64_t{1}}}),
                       "gather: idx i64[1,3] holds 5 at [1,2], outside 1..4 (the size of x "
                       "f32[4,3] at dim=1)",
                       UserError);
  Tensor neg = make_tensor({DType::i64, {1, 3}}, {1, 1, -1});
  CHECK_THROWS_WITH_AS(run_op1(Prim::gather, {x, neg}, {{"dim", int64_t{1}}}),
                       "gather: idx i64[1,3] holds -1 at [1,3], outside 1..4 (the size of x "
                       "f32[4,3] at dim=1)",
                       UserError);
  Tensor y = random_tensor({DType::f64, {1, 3}}, 8);
  CHECK_THROWS_WITH_AS(
      run_op1(Prim::scatter_add, {y, idx}, {{"dim", int64_t{1}}, {"size", int64_t{4}}}),
      "scatter_add: idx i64[1,3] holds 5 at [1,2], outside 1..4 (size=4 at dim=1)", UserError);
  // An empty dim has no valid index at all.
  Tensor e = random_tensor({DType::f32, {0, 3}}, 9);
  Tensor one = make_tensor({DType::i64, {1, 1}}, {1});
  CHECK_THROWS_AS(run_op1(Prim::gather, {e, one}, {{"dim", int64_t{1}}}), UserError);
}

}  // namespace

}  // namespace ytape
