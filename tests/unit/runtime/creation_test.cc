// Creation kernels: fill and iota against index arithmetic, rand and randn against a
// stateful SplitMix64 written here, and their statistics and thread independence.
#include <doctest/doctest.h>

#include <cmath>

#include "kernel_harness.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::check_equal;
using testing::run_op1;
using testing::to_doubles;
using testing::unravel;

// The textbook SplitMix64 generator: each call advances the state and mixes it.
struct SplitMix64 {
  uint64_t state;
  uint64_t next() {
    uint64_t z = (state += 0x9e3779b97f4a7c15u);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
    return z ^ (z >> 31);
  }
};

Attrs creation_attrs(DType dtype, Shape shape, int64_t seed) {
  return {{"dtype", dtype}, {"shape", std::move(shape)}, {"seed", seed}};
}

TEST_CASE("fill writes the value in every dtype") {
  for (DType dtype : {DType::f32, DType::f64, DType::i64, DType::boolean}) {
    for (const Shape& shape : {Shape{}, Shape{0}, Shape{3, 4}, Shape{300, 200}}) {
      CAPTURE(type_str({dtype, shape}));
      double v = dtype == DType::boolean ? 1 : dtype == DType::i64 ? -7 : 2.5;
      Tensor t = run_op1(Prim::fill, {}, {{"value", v}, {"dtype", dtype}, {"shape", shape}});
      check_equal(t, std::vector<double>(num_elements(shape), v));
    }
  }
  Tensor f =
      run_op1(Prim::fill, {}, {{"value", 0.0}, {"dtype", DType::boolean}, {"shape", Shape{5}}});
  check_equal(f, {0, 0, 0, 0, 0});
}

TEST_CASE("iota gives the 1-based position along dim") {
  const Shape shapes[] = {{5}, {0}, {3, 4}, {2, 3, 4}, {2, 0, 3}, {1, 1, 7}, {400, 3, 50}};
  int saved = num_threads();
  set_num_threads(4);
  for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
    for (const Shape& shape : shapes) {
      for (int64_t dim = 1; dim <= static_cast<int64_t>(shape.size()); ++dim) {
        CAPTURE(type_str({dtype, shape}));
        CAPTURE(dim);
        std::vector<double> want(num_elements(shape));
        for (size_t i = 0; i < want.size(); ++i) {
          want[i] = static_cast<double>(unravel(shape, static_cast<int64_t>(i))[dim - 1] + 1);
        }
        Tensor t = run_op1(Prim::iota, {}, {{"dtype", dtype}, {"shape", shape}, {"dim", dim}});
        check_equal(t, want);
      }
    }
  }
  set_num_threads(saved);
}

TEST_CASE("rand is the SplitMix64 stream of its seed") {
  // 1073 elements: the vector loops of the kernel and their remainders.
  for (int64_t seed : {int64_t{0}, int64_t{1}, int64_t{42}, int64_t{-3}}) {
    CAPTURE(seed);
    Tensor d = run_op1(Prim::rand, {}, creation_attrs(DType::f64, {37, 29}, seed));
    Tensor f = run_op1(Prim::rand, {}, creation_attrs(DType::f32, {37, 29}, seed));
    SplitMix64 g{static_cast<uint64_t>(seed)};
    std::vector<double> want_d, want_f;
    for (int i = 0; i < 37 * 29; ++i) {
      uint64_t bits = g.next();
      want_d.push_back(std::ldexp(static_cast<double>(bits >> 11), -53));
      want_f.push_back(std::ldexp(static_cast<double>(bits >> 40), -24));
    }
    check_equal(d, want_d);
    check_equal(f, want_f);
  }
}

TEST_CASE("randn is Box-Muller on consecutive pairs of the stream") {
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor t = run_op1(Prim::randn, {}, creation_attrs(dtype, {3, 3}, 7));
    SplitMix64 g{7};
    std::vector<double> want;
    for (int i = 0; i < 9; ++i) {
      long double u1 = std::ldexp(static_cast<long double>(g.next() >> 11), -53);
      long double u2 = std::ldexp(static_cast<long double>(g.next() >> 11), -53);
      long double pi = 3.141592653589793238462643383279L;
      want.push_back(static_cast<double>(std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * pi * u2)));
    }
    check_close(t, want, dtype == DType::f32 ? 1e-6 : 1e-13, 1e-13);
  }
}

TEST_CASE("rand and randn have the right statistics and ignore threads") {
  const Shape shape = {250, 400};
  for (Prim p : {Prim::rand, Prim::randn}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(prim_name(p));
      CAPTURE(dtype_name(dtype));
      int saved = num_threads();
      set_num_threads(1);
      Tensor one = run_op1(p, {}, creation_attrs(dtype, shape, 123));
      set_num_threads(4);
      Tensor four = run_op1(p, {}, creation_attrs(dtype, shape, 123));
      set_num_threads(saved);
      std::vector<double> v = to_doubles(one);
      check_equal(four, v);
      long double sum = 0, sq = 0;
      double lo = v[0], hi = v[0];
      for (double x : v) {
        sum += x;
        sq += static_cast<long double>(x) * x;
        lo = std::min(lo, x);
        hi = std::max(hi, x);
      }
      double n = static_cast<double>(v.size());
      double mean = static_cast<double>(sum / n);
      double var = static_cast<double>(sq / n) - mean * mean;
      if (p == Prim::rand) {
        CHECK(lo >= 0);
        CHECK(hi < 1);
        CHECK(mean == doctest::Approx(0.5).epsilon(0.01));
        CHECK(var == doctest::Approx(1.0 / 12).epsilon(0.02));
      } else {
        CHECK(std::abs(mean) < 0.01);
        CHECK(var == doctest::Approx(1.0).epsilon(0.02));
        CHECK(hi > 3.5);
        CHECK(lo < -3.5);
      }
      // Another seed gives other numbers.
      Tensor other = run_op1(p, {}, creation_attrs(dtype, shape, 124));
      CHECK(to_doubles(other) != v);
    }
  }
}

}  // namespace

}  // namespace ytape
