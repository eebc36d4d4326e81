// Shape kernels against references that map every output multi-index to its source by
// the definitions in docs/primitives.md. Every dtype, exact comparison.
#include <doctest/doctest.h>

#include <algorithm>
#include <numeric>

#include "kernel_harness.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using testing::check_equal;
using testing::random_tensor;
using testing::ravel;
using testing::run_op1;
using testing::to_doubles;
using testing::unravel;

const DType kAll[] = {DType::f32, DType::f64, DType::i64, DType::boolean};

// Runs the shape tests with more threads than cores, so large cases split.
struct Threads {
  int saved = num_threads();
  Threads() { set_num_threads(4); }
  ~Threads() { set_num_threads(saved); }
};

// The reference of an op that moves elements: out[i] = x[source(out multi-index)], or
// `fill` where source returns -1.
template <typename F>
std::vector<double> moved(const Tensor& x, const Shape& out, F source, double fill = 0) {
  std::vector<double> xv = to_doubles(x), want(num_elements(out));
  for (size_t i = 0; i < want.size(); ++i) {
    int64_t s = source(unravel(out, static_cast<int64_t>(i)));
    want[i] = s < 0 ? fill : xv[s];
  }
  return want;
}

TEST_CASE("reshape keeps the column-major order") {
  for (DType dtype : kAll) {
    Tensor x = random_tensor({dtype, {3, 4, 2}}, 1, -9, 9);
    for (const Shape& s : {Shape{24}, Shape{2, 12}, Shape{4, 1, 6}, Shape{2, 3, 2, 2}}) {
      check_equal(run_op1(Prim::reshape, {x}, {{"shape", s}}), to_doubles(x));
    }
  }
  Tensor s = random_tensor({DType::f64, {}}, 2);
  check_equal(run_op1(Prim::reshape, {s}, {{"shape", Shape{1, 1}}}), to_doubles(s));
  Tensor e = random_tensor({DType::f32, {0, 3}}, 3);
  check_equal(run_op1(Prim::reshape, {e}, {{"shape", Shape{3, 0}}}), {});
}

TEST_CASE("stop_gradient is its argument, in every dtype") {
  for (DType dtype : kAll) {
    Tensor x = random_tensor({dtype, {3, 4, 2}}, 4, -9, 9);
    check_equal(run_op1(Prim::stop_gradient, {x}), to_doubles(x));
  }
}

TEST_CASE("permutedims: out.shape[i] = x.shape[perm[i]]") {
  Threads threads;
  const Shape shapes[] = {{2, 3, 4}, {1, 5, 1}, {3, 0, 2}, {2, 3, 1, 4}, {60, 70, 9}};
  uint64_t seed = 10;
  for (const Shape& xs : shapes) {
    std::vector<int64_t> perm(xs.size());
    std::iota(perm.begin(), perm.end(), 1);
    do {
      for (DType dtype : kAll) {
        CAPTURE(type_str({dtype, xs}));
        INFO("perm=" << shape_str(perm));
        Tensor x = random_tensor({dtype, xs}, ++seed, -9, 9);
        Shape out(xs.size());
        for (size_t d = 0; d < xs.size(); ++d) out[d] = xs[perm[d] - 1];
        std::vector<double> want = moved(x, out, [&](const std::vector<int64_t>& j) {
          std::vector<int64_t> k(xs.size());
          for (size_t d = 0; d < xs.size(); ++d) k[perm[d] - 1] = j[d];
          return ravel(xs, k);
        });
        check_equal(run_op1(Prim::permutedims, {x}, {{"perm", perm}}), want);
      }
    } while (std::next_permutation(perm.begin(), perm.end()));
  }
  // A large transpose, split across threads.
  Tensor m = random_tensor({DType::f32, {300, 257}}, 99);
  std::vector<double> want = moved(m, {257, 300}, [](const std::vector<int64_t>& j) {
    return ravel({300, 257}, {j[1], j[0]});
  });
  check_equal(run_op1(Prim::permutedims, {m}, {{"perm", Shape{2, 1}}}), want);
}

TEST_CASE("broadcast_to repeats size-1 dims and adds trailing ones") {
  Threads threads;
  const std::pair<Shape, Shape> cases[] = {
      {{}, {}},
      {{}, {3, 2}},
      {{3}, {3, 4}},
      {{1, 4}, {3, 4}},
      {{3, 1}, {3, 4, 2}},
      {{1, 1}, {2, 0}},
      {{2, 1, 3}, {2, 5, 3, 2}},
      {{1}, {300, 257}},
      {{300, 1}, {300, 257}},
      {{1, 257}, {300, 257}},
  };
  uint64_t seed = 200;
  for (const auto& bound : cases) {
    const auto& xs = std::get<0>(bound);
    const auto& out = std::get<1>(bound);
    for (DType dtype : kAll) {
      CAPTURE(type_str({dtype, xs}));
      CAPTURE(shape_str(out));
      Tensor x = random_tensor({dtype, xs}, ++seed, -9, 9);
      std::vector<double> want = moved(x, out, [&](std::vector<int64_t> j) {
        for (size_t d = 0; d < j.size(); ++d) {
          if (d >= xs.size() || xs[d] == 1) j[d] = 0;
        }
        return ravel(xs, j);
      });
      check_equal(run_op1(Prim::broadcast_to, {x}, {{"shape", out}}), want);
    }
  }
}

struct SliceCase {
  Shape x;
  std::vector<int64_t> start, stop, step;
};

TEST_CASE("slice is x[start:step:stop, ...]") {
  Threads threads;
  const SliceCase cases[] = {
      {{}, {}, {}, {}},
      {{7}, {1}, {7}, {1}},
      {{7}, {2}, {6}, {2}},
      {{7}, {3}, {2}, {1}},  // empty
      {{7}, {8}, {7}, {1}},  // empty, starting past the end
      {{5, 6}, {2, 1}, {5, 6}, {3, 2}},
      {{5, 6, 3}, {1, 2, 3}, {5, 5, 3}, {1, 1, 1}},
      {{4, 1, 3}, {1, 1, 1}, {4, 1, 3}, {4, 1, 2}},
      {{300, 257}, {2, 1}, {300, 257}, {1, 1}},
      {{600, 257}, {1, 3}, {599, 257}, {2, 1}},
  };
  uint64_t seed = 300;
  for (const SliceCase& c : cases) {
    for (DType dtype : kAll) {
      CAPTURE(type_str({dtype, c.x}));
      INFO("start=" << shape_str(c.start) << " stop=" << shape_str(c.stop)
                    << " step=" << shape_str(c.step));
      Tensor x = random_tensor({dtype, c.x}, ++seed, -9, 9);
      Shape out(c.x.size());
      for (size_t d = 0; d < out.size(); ++d) {
        out[d] = std::max<int64_t>(0, (c.stop[d] - c.start[d]) / c.step[d] + 1);
      }
      std::vector<double> want = moved(x, out, [&](std::vector<int64_t> j) {
        for (size_t d = 0; d < j.size(); ++d) j[d] = c.start[d] - 1 + j[d] * c.step[d];
        return ravel(c.x, j);
      });
      Tensor got =
          run_op1(Prim::slice, {x}, {{"start", c.start}, {"stop", c.stop}, {"step", c.step}});
      CHECK(got.shape() == out);
      check_equal(got, want);
    }
  }
}

TEST_CASE("concat joins along dim") {
  Threads threads;
  struct Case {
    std::vector<Shape> xs;
    int64_t dim;
  };
  const Case cases[] = {
      {{{3}}, 1},
      {{{3}, {4}}, 1},
      {{{2, 3}, {2, 1}, {2, 4}}, 2},
      {{{2, 3}, {5, 3}}, 1},
      {{{2, 0, 3}, {2, 2, 3}, {2, 1, 3}}, 2},
      {{{3, 2, 4}, {3, 2, 1}}, 3},
      {{{200, 100}, {200, 90}}, 2},
      {{{200, 100}, {150, 100}}, 1},
  };
  uint64_t seed = 400;
  for (const Case& c : cases) {
    for (DType dtype : kAll) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(shape_str(c.xs[0]));
      CAPTURE(c.dim);
      std::vector<Tensor> args;
      std::vector<std::vector<double>> values;
      Shape out = c.xs[0];
      out[c.dim - 1] = 0;
      for (const Shape& s : c.xs) {
        args.push_back(random_tensor({dtype, s}, ++seed, -9, 9));
        values.push_back(to_doubles(args.back()));
        out[c.dim - 1] += s[c.dim - 1];
      }
      std::vector<double> want(num_elements(out));
      for (size_t i = 0; i < want.size(); ++i) {
        std::vector<int64_t> j = unravel(out, static_cast<int64_t>(i));
        size_t k = 0;
        while (j[c.dim - 1] >= c.xs[k][c.dim - 1]) j[c.dim - 1] -= c.xs[k++][c.dim - 1];
        want[i] = values[k][ravel(c.xs[k], j)];
      }
      check_equal(run_op1(Prim::concat, args, {{"dim", c.dim}}), want);
    }
  }
}

struct PadCase {
  Shape x;
  std::vector<int64_t> lo, hi, interior;
};

TEST_CASE("pad places x between lo and hi with interior gaps") {
  Threads threads;
  const PadCase cases[] = {
      {{}, {}, {}, {}},
      {{3}, {0}, {0}, {0}},
      {{3}, {2}, {1}, {0}},
      {{3}, {1}, {2}, {2}},
      {{0}, {2}, {1}, {3}},
      {{1}, {0}, {0}, {5}},
      {{3, 4}, {1, 0}, {0, 2}, {1, 0}},
      {{2, 3, 2}, {0, 1, 1}, {1, 0, 1}, {0, 2, 1}},
      {{2, 0}, {1, 1}, {1, 1}, {0, 0}},
      {{200, 100}, {1, 1}, {1, 1}, {0, 1}},
  };
  uint64_t seed = 500;
  for (const PadCase& c : cases) {
    for (DType dtype : kAll) {
      CAPTURE(type_str({dtype, c.x}));
      INFO("lo=" << shape_str(c.lo) << " hi=" << shape_str(c.hi)
                 << " interior=" << shape_str(c.interior));
      const double value = dtype == DType::boolean ? 1 : -3;
      Tensor x = random_tensor({dtype, c.x}, ++seed, 0, 9);
      Shape out(c.x.size());
      for (size_t d = 0; d < out.size(); ++d) {
        out[d] = c.lo[d] + c.x[d] + std::max<int64_t>(c.x[d] - 1, 0) * c.interior[d] + c.hi[d];
      }
      std::vector<double> want = moved(
          x, out,
          [&](std::vector<int64_t> j) -> int64_t {
            for (size_t d = 0; d < j.size(); ++d) {
              int64_t p = j[d] - c.lo[d];
              if (p < 0 || p % (c.interior[d] + 1) != 0) return -1;
              j[d] = p / (c.interior[d] + 1);
              if (j[d] >= c.x[d]) return -1;
            }
            return ravel(c.x, j);
          },
          value);
      Attrs attrs{{"lo", c.lo}, {"hi", c.hi}, {"interior", c.interior}, {"value", value}};
      check_equal(run_op1(Prim::pad, {x}, attrs), want);
    }
  }
}

}  // namespace

}  // namespace ytape
