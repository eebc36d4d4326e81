// Reduction kernels against references that visit every element with explicit
// multi-index arithmetic and accumulate in long double.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>
#include <functional>
#include <limits>

#include "kernel_harness.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::check_equal;
using testing::make_tensor;
using testing::random_tensor;
using testing::run_op1;
using testing::to_doubles;
using testing::unravel;

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Position, in the result of reducing `shape` over `dims`, of x's element i: the
// multi-index of i with the reduced dims left out.
int64_t group_of(const Shape& shape, const std::vector<int64_t>& dims, int64_t i) {
  int64_t g = 0, stride = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    const int64_t index = i % shape[d];
    i /= shape[d];
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d + 1)) != dims.end()) continue;
    g += index * stride;
    stride *= shape[d];
  }
  return g;
}

int64_t groups(const Shape& shape, const std::vector<int64_t>& dims) {
  int64_t n = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    if (std::find(dims.begin(), dims.end(), static_cast<int64_t>(d + 1)) == dims.end()) {
      n *= shape[d];
    }
  }
  return n;
}

using Combine = std::function<long double(long double, long double)>;

std::vector<long double> reduce_ref(const std::vector<double>& x, const Shape& shape,
                                    const std::vector<int64_t>& dims, long double init,
                                    const Combine& combine) {
  std::vector<long double> acc(groups(shape, dims), init);
  for (size_t i = 0; i < x.size(); ++i) {
    long double& a = acc[group_of(shape, dims, static_cast<int64_t>(i))];
    a = combine(a, x[i]);
  }
  return acc;
}

long double max_ref(long double a, long double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::max(a, b);
}
long double min_ref(long double a, long double b) {
  return std::isnan(a) || std::isnan(b) ? NAN : std::min(a, b);
}

// Every subset of the dims of small shapes (in both orders where there are two), and the
// layouts the kernel treats specially: batch-norm sums, wide rows, threads.
std::vector<std::pair<Shape, std::vector<int64_t>>> reduce_cases() {
  std::vector<std::pair<Shape, std::vector<int64_t>>> cases;
  for (const Shape& s : {Shape{}, Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{4, 1, 3},
                         Shape{1, 5}, Shape{0, 3}, Shape{3, 0, 2}, Shape{2, 3, 1, 5}}) {
    for (int mask = 0; mask < (1 << s.size()); ++mask) {
      std::vector<int64_t> dims;
      for (size_t d = 0; d < s.size(); ++d) {
        if (mask & (1 << d)) dims.push_back(static_cast<int64_t>(d + 1));
      }
      cases.push_back({s, dims});
      if (dims.size() == 2) cases.push_back({s, {dims[1], dims[0]}});
    }
  }
  const std::pair<Shape, std::vector<int64_t>> large[] = {
      {{7, 6, 5, 4}, {1, 2, 4}}, {{32, 32, 16, 8}, {1, 2, 4}},
      {{300, 257}, {1}},         {{300, 257}, {2}},
      {{300, 257}, {1, 2}},      {{70001}, {1}},
      {{2, 40000}, {2}},         {{600, 3, 2}, {2}},
      {{5, 300, 40}, {1, 3}},    {{1000, 3, 50}, {2}},
      {{3, 20000}, {1}},
  };
  cases.insert(cases.end(), std::begin(large), std::end(large));
  return cases;
}

// Σ|x| per group bounds the rounding error of any summation order.
double sum_tolerance(const std::vector<double>& x, const Shape& shape,
                     const std::vector<int64_t>& dims, DType dtype) {
  std::vector<long double> mag =
      reduce_ref(x, shape, dims, 0, [](long double a, long double b) { return a + std::fabs(b); });
  long double worst = 0;
  for (long double m : mag) worst = std::max(worst, m);
  return static_cast<double>(worst) * (dtype == DType::f32 ? 1e-12 : 1e-14);
}

std::vector<double> as_double(const std::vector<long double>& v) {
  return std::vector<double>(v.begin(), v.end());
}

TEST_CASE("sum, maximum and minimum match references over every dims subset") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 1;
  for (const auto& bound : reduce_cases()) {
    const auto& shape = std::get<0>(bound);
    const auto& dims = std::get<1>(bound);
    for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
      CAPTURE(type_str({dtype, shape}));
      INFO("dims=" << shape_str(dims));
      Tensor x = random_tensor({dtype, shape}, ++seed, -4, 4);
      std::vector<double> xv = to_doubles(x);
      const bool is_int = dtype == DType::i64;
      // The identities of maximum and minimum: -inf and inf, or the i64 limits.
      const long double lowest = is_int ? std::numeric_limits<int64_t>::min()
                                        : -std::numeric_limits<long double>::infinity();
      const long double highest = is_int ? std::numeric_limits<int64_t>::max()
                                         : std::numeric_limits<long double>::infinity();
      Attrs attrs{{"dims", dims}};
      auto plus = [](long double a, long double b) { return a + b; };
      const double rtol = is_int ? 0 : dtype == DType::f32 ? 0x1p-23 : 1e-15;
      check_close(run_op1(Prim::sum, {x}, attrs), as_double(reduce_ref(xv, shape, dims, 0, plus)),
                  rtol, is_int ? 0 : sum_tolerance(xv, shape, dims, dtype));
      check_equal(run_op1(Prim::maximum, {x}, attrs),
                  as_double(reduce_ref(xv, shape, dims, lowest, max_ref)));
      check_equal(run_op1(Prim::minimum, {x}, attrs),
                  as_double(reduce_ref(xv, shape, dims, highest, min_ref)));
    }
  }
  set_num_threads(saved);
}

TEST_CASE("maximum and minimum propagate NaN per group; sums of infinities") {
  for (DType dtype : {DType::f32, DType::f64}) {
    // Columns: a NaN first, a NaN last, infinities, plain numbers.
    Tensor x = make_tensor({dtype, {3, 4}}, {kNaN, 1, 2, 1, 2, kNaN, kInf, -kInf, 0, 5, 6, -7});
    Attrs rows{{"dims", std::vector<int64_t>{1}}};
    check_equal(run_op1(Prim::maximum, {x}, rows), {kNaN, kNaN, kInf, 6});
    check_equal(run_op1(Prim::minimum, {x}, rows), {kNaN, kNaN, -kInf, -7});
    check_equal(run_op1(Prim::sum, {x}, rows), {kNaN, kNaN, kNaN, 4});
    Attrs all{{"dims", std::vector<int64_t>{1, 2}}};
    check_equal(run_op1(Prim::maximum, {x}, all), {kNaN});
    // A NaN in a long contiguous run, past the vector lanes.
    std::vector<double> v(1000, 1.0);
    v[997] = kNaN;
    Tensor y = make_tensor({dtype, {1000}}, v);
    Attrs one{{"dims", std::vector<int64_t>{1}}};
    check_equal(run_op1(Prim::maximum, {y}, one), {kNaN});
    check_equal(run_op1(Prim::minimum, {y}, one), {kNaN});
  }
}

TEST_CASE("f32 sums are accurate over long runs") {
  // 0.1 is inexact in f32; a naive f32 running sum of 10^6 copies drifts by ~1%.
  Tensor x = make_tensor({DType::f32, {1000, 1000}}, std::vector<double>(1000000, 0.1));
  double exact = 1000000.0 * static_cast<float>(0.1);
  check_close(run_op1(Prim::sum, {x}, {{"dims", std::vector<int64_t>{1, 2}}}), {exact}, 1e-7, 0);
  check_close(run_op1(Prim::sum, {x}, {{"dims", std::vector<int64_t>{2}}}),
              std::vector<double>(1000, exact / 1000), 1e-7, 0);
  // 128 columns over 10^4 rows: the rows summed in parts, added in order.
  Tensor y = make_tensor({DType::f32, {128, 10000}}, std::vector<double>(1280000, 0.1));
  check_close(run_op1(Prim::sum, {y}, {{"dims", std::vector<int64_t>{2}}}),
              std::vector<double>(128, 10000.0 * static_cast<float>(0.1)), 1e-7, 0);
}

// The first maximum along dim (1-based); the first NaN wins.
std::vector<double> argmax_ref(const std::vector<double>& x, const Shape& shape, int64_t dim) {
  std::vector<double> best(groups(shape, {dim}), kNaN), at(best.size(), 0);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t g = group_of(shape, {dim}, static_cast<int64_t>(i));
    int64_t pos = unravel(shape, static_cast<int64_t>(i))[dim - 1] + 1;
    bool done = at[g] != 0 && std::isnan(best[g]);
    if (!done && (at[g] == 0 || std::isnan(x[i]) || x[i] > best[g])) {
      best[g] = x[i];
      at[g] = static_cast<double>(pos);
    }
  }
  return at;
}

TEST_CASE("argmax gives the first maximum") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 300;
  for (const Shape& shape : {Shape{5}, Shape{3, 4}, Shape{2, 3, 4}, Shape{1, 5}, Shape{4, 1},
                             Shape{0, 3}, Shape{300, 257}, Shape{3, 30000}}) {
    for (int64_t dim = 1; dim <= static_cast<int64_t>(shape.size()); ++dim) {
      if (shape[dim - 1] == 0) continue;
      for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
        CAPTURE(type_str({dtype, shape}));
        CAPTURE(dim);
        // A small integer range makes ties, which the first position must win.
        Tensor x = random_tensor({dtype, shape}, ++seed, -3, 3);
        if (dtype != DType::i64)
          x = make_tensor(x.type(), [&] {
            std::vector<double> v = to_doubles(x);
            for (double& e : v) e = std::round(e);
            return v;
          }());
        check_equal(run_op1(Prim::argmax, {x}, {{"dim", dim}}),
                    argmax_ref(to_doubles(x), shape, dim));
      }
    }
  }
  set_num_threads(saved);
  Tensor n = make_tensor({DType::f64, {4, 2}}, {1, kNaN, 3, kNaN, -kInf, -kInf, -kInf, 2});
  check_equal(run_op1(Prim::argmax, {n}, {{"dim", int64_t{1}}}), {2, 4});
}

TEST_CASE("softmax and log_softmax match references and stay finite") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 700;
  for (const auto& bound : reduce_cases()) {
    const auto& shape = std::get<0>(bound);
    const auto& dims = std::get<1>(bound);
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(type_str({dtype, shape}));
      INFO("dims=" << shape_str(dims));
      // Large offsets would overflow a naive exp.
      Tensor x = random_tensor({dtype, shape}, ++seed, 80, 100);
      std::vector<double> xv = to_doubles(x);
      std::vector<long double> m = reduce_ref(xv, shape, dims, -INFINITY, max_ref);
      std::vector<long double> s(m.size(), 0);
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t g = group_of(shape, dims, static_cast<int64_t>(i));
        s[g] += std::exp(xv[i] - m[g]);
      }
      std::vector<double> soft(xv.size()), logsoft(xv.size());
      for (size_t i = 0; i < xv.size(); ++i) {
        int64_t g = group_of(shape, dims, static_cast<int64_t>(i));
        soft[i] = static_cast<double>(std::exp(xv[i] - m[g]) / s[g]);
        logsoft[i] = static_cast<double>(xv[i] - m[g] - std::log(s[g]));
      }
      const double rtol = dtype == DType::f32 ? 2e-6 : 1e-12;
      Attrs attrs{{"dims", dims}};
      check_close(run_op1(Prim::softmax, {x}, attrs), soft, rtol, 0);
      check_close(run_op1(Prim::log_softmax, {x}, attrs), logsoft, rtol, rtol);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("softmax of extreme values") {
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor x = make_tensor({dtype, {3, 2}}, {1e30, 0, -1e30, kNaN, 1, 2});
    Attrs attrs{{"dims", std::vector<int64_t>{1}}};
    check_equal(run_op1(Prim::softmax, {x}, attrs), {1, 0, 0, kNaN, kNaN, kNaN});
    std::vector<double> v = to_doubles(x);  // 1e30 rounded to the dtype
    check_equal(run_op1(Prim::log_softmax, {x}, attrs),
                {0, v[1] - v[0], v[2] - v[0], kNaN, kNaN, kNaN});
  }
}

}  // namespace

}  // namespace ytape
