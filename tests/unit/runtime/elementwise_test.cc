// Elementwise kernels against scalar references computed in long double, on broadcasting
// layouts, special values and shapes large enough to use threads.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
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

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();
constexpr double kInf = std::numeric_limits<double>::infinity();

// Relative tolerance of a correctly rounded-or-nearly library function, per dtype.
double math_rtol(DType d) {
  return d == DType::f32 ? 4e-7 : 4e-16;
}

// Offset into a tensor of `in` shape of the element that broadcasts to linear position i
// of `out` shape.
int64_t broadcast_offset(const Shape& in, const Shape& out, int64_t i) {
  int64_t offset = 0, stride = 1;
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t id = i % out[d];
    i /= out[d];
    if (d < in.size()) {
      if (in[d] != 1) offset += id * stride;
      stride *= in[d];
    }
  }
  return offset;
}

// The broadcast shape by Julia's rule (the test inputs are compatible).
Shape broadcast_shape(const Shape& a, const Shape& b) {
  Shape out(std::max(a.size(), b.size()), 1);
  for (size_t d = 0; d < out.size(); ++d) {
    int64_t x = d < a.size() ? a[d] : 1, y = d < b.size() ? b[d] : 1;
    out[d] = x == 1 ? y : x;
  }
  return out;
}

// Rounding to the nearest integer, ties to the even one, written out.
long double round_half_even(long double x) {
  long double below = std::floor(x), rest = x - below;
  if (rest != 0.5L) return rest < 0.5L ? below : below + 1;
  return std::fmod(below, 2.0L) == 0 ? below : below + 1;
}

struct Unary {
  Prim prim;
  long double (*ref)(long double);
  double lo, hi;
  double rtol_times = 1;  ///< of math_rtol: a formula of several roundings
};

const Unary kUnary[] = {
    {Prim::neg, [](long double x) { return -x; }, -3, 3},
    {Prim::abs, [](long double x) { return std::fabs(x); }, -3, 3},
    {Prim::sign, [](long double x) { return x > 0   ? 1.0L
                                            : x < 0 ? -1.0L
                                                    : 0.0L; }, -3, 3},
    {Prim::relu, [](long double x) { return x > 0 ? x : 0.0L; }, -3, 3},
    {Prim::exp, [](long double x) { return std::exp(x); }, -5, 5},
    {Prim::log, [](long double x) { return std::log(x); }, 0.01, 5},
    {Prim::log1p, [](long double x) { return std::log1p(x); }, -0.9, 3},
    {Prim::expm1, [](long double x) { return std::expm1(x); }, -3, 3},
    {Prim::sqrt, [](long double x) { return std::sqrt(x); }, 0, 5},
    {Prim::sin, [](long double x) { return std::sin(x); }, -4, 4},
    {Prim::cos, [](long double x) { return std::cos(x); }, -4, 4},
    {Prim::tan, [](long double x) { return std::tan(x); }, -1.4, 1.4},
    {Prim::tanh, [](long double x) { return std::tanh(x); }, -4, 4},
    {Prim::sigmoid, [](long double x) { return 1 / (1 + std::exp(-x)); }, -30, 30},
    {Prim::softplus, [](long double x) { return std::log1p(std::exp(x)); }, -30, 30},
    // Seven roundings, and 1 + tanh cancels for negative x (to 0.045 at x = -2).
    {Prim::gelu,
     [](long double x) {
       return 0.5L * x * (1 + std::tanh(0.7978845608028654L * (x + 0.044715L * x * x * x)));
     },
     -2, 4, 16},
    {Prim::erf, [](long double x) { return std::erf(x); }, -4, 4},
    {Prim::asin, [](long double x) { return std::asin(x); }, -1, 1},
    {Prim::acos, [](long double x) { return std::acos(x); }, -1, 1},
    {Prim::atan, [](long double x) { return std::atan(x); }, -30, 30},
    {Prim::floor, [](long double x) { return std::floor(x); }, -30, 30},
    {Prim::ceil, [](long double x) { return std::ceil(x); }, -30, 30},
    {Prim::round, [](long double x) { return round_half_even(x); }, -30, 30},
};

const Shape kUnaryShapes[] = {{}, {1}, {7}, {0}, {3, 0, 2}, {4, 5, 3}, {300, 257}};

TEST_CASE("unary kernels match long double references") {
  uint64_t seed = 1;
  for (const Unary& op : kUnary) {
    for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
      if (!prim_info(op.prim).accepts(dtype)) continue;
      for (const Shape& shape : kUnaryShapes) {
        CAPTURE(prim_name(op.prim));
        CAPTURE(type_str({dtype, shape}));
        Tensor x = random_tensor({dtype, shape}, ++seed, op.lo, op.hi);
        std::vector<double> want;
        for (double v : to_doubles(x)) want.push_back(static_cast<double>(op.ref(v)));
        double rtol = dtype == DType::i64 ? 0 : math_rtol(dtype) * op.rtol_times;
        check_close(run_op1(op.prim, {x}), want, rtol, 1e-300);
      }
    }
  }
}

TEST_CASE("every unary elementwise primitive has a reference above") {
  for (Prim p : all_prims()) {
    if (!prim_info(p).elementwise() || prim_info(p).arity != 1 || p == Prim::convert) continue;
    INFO("primitive ", prim_name(p), ": add its reference to kUnary");
    CHECK(std::any_of(std::begin(kUnary), std::end(kUnary),
                      [&](const Unary& op) { return op.prim == p; }));
  }
}

TEST_CASE("unary kernels on special values") {
  const std::vector<double> x = {kNaN, kInf, -kInf, 0.0, -0.0, 1000, -1000, 0.25, -700};
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dtype));
    Tensor t = make_tensor({dtype, {9}}, x);
    // exp(-700) is a normal double but underflows in f32.
    const double tiny = dtype == DType::f32 ? 0 : std::exp(-700.0);
    const double rtol = math_rtol(dtype);
    check_equal(run_op1(Prim::neg, {t}), {kNaN, -kInf, kInf, -0.0, 0.0, -1000, 1000, -0.25, 700});
    check_equal(run_op1(Prim::abs, {t}), {kNaN, kInf, kInf, 0, 0, 1000, 1000, 0.25, 700});
    check_equal(run_op1(Prim::sign, {t}), {kNaN, 1, -1, 0, 0, 1, -1, 1, -1});
    check_equal(run_op1(Prim::relu, {t}), {kNaN, kInf, 0, 0, 0, 1000, 0, 0.25, 0});
    check_close(run_op1(Prim::exp, {t}), {kNaN, kInf, 0, 1, 1, kInf, 0, std::exp(0.25), tiny}, rtol,
                0);
    check_close(run_op1(Prim::sigmoid, {t}),
                {kNaN, 1, 0, 0.5, 0.5, 1, 0, 1 / (1 + std::exp(-0.25)), tiny}, rtol, 0);
    // Stable softplus: x for large x, exp(x) for very negative x, never inf or NaN.
    const double l2 = std::log(2.0);
    check_close(run_op1(Prim::softplus, {t}),
                {kNaN, kInf, 0, l2, l2, 1000, 0, std::log1p(std::exp(0.25)), tiny}, rtol, 0);
  }
  // relu and sign keep the sign bit of zero.
  Tensor z = run_op1(Prim::relu, {make_tensor({DType::f64, {}}, {-0.0})});
  CHECK(std::signbit(z.data<double>()[0]));
}

TEST_CASE("asin, acos and atan at the ends of their domains and beyond") {
  const long double pi = 3.141592653589793238462643383279502884L;
  const std::vector<double> x = {1, -1, 0.0, -0.0, 1.5, -2, kInf, -kInf, kNaN};
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dtype));
    Tensor t = make_tensor({dtype, {9}}, x);
    const double rtol = math_rtol(dtype), h = static_cast<double>(pi / 2);
    const auto p = static_cast<double>(pi);
    // Outside [-1, 1] asin and acos are NaN; atan reaches +-pi/2 at the infinities.
    check_close(run_op1(Prim::asin, {t}), {h, -h, 0, -0.0, kNaN, kNaN, kNaN, kNaN, kNaN}, rtol, 0);
    check_close(run_op1(Prim::acos, {t}), {0, p, h, h, kNaN, kNaN, kNaN, kNaN, kNaN}, rtol, 0);
    check_close(
        run_op1(Prim::atan, {t}),
        {static_cast<double>(pi / 4), static_cast<double>(-pi / 4), 0, -0.0,
         static_cast<double>(std::atan(1.5L)), static_cast<double>(std::atan(-2.0L)), h, -h, kNaN},
        rtol, 0);
  }
  // asin and atan keep the sign bit of zero, as C's.
  for (Prim p : {Prim::asin, Prim::atan}) {
    Tensor z = run_op1(p, {make_tensor({DType::f64, {}}, {-0.0})});
    CHECK(std::signbit(z.data<double>()[0]));
  }
}

TEST_CASE("floor, ceil and round on ties, huge values and special values") {
  // 1e30 lies beyond i64 and 2^60 + 2^8 beyond f32's mantissa: integers that rounding keeps.
  const std::vector<double> x = {0.5,  1.5,  2.5,  -0.5,  -1.5, -2.5,  2.4999,
                                 -0.0, kNaN, kInf, -kInf, 1e30, -1e30, 0x1p60 + 0x1p8};
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dtype));
    Tensor t = make_tensor({dtype, {static_cast<int64_t>(x.size())}}, x);
    std::vector<double> floor, ceil, round;
    for (double v : to_doubles(t)) {
      floor.push_back(std::floor(v)), ceil.push_back(std::ceil(v));
      round.push_back(static_cast<double>(round_half_even(v)));
    }
    check_equal(run_op1(Prim::floor, {t}), floor);
    check_equal(run_op1(Prim::ceil, {t}), ceil);
    check_equal(run_op1(Prim::round, {t}), round);
    check_equal(run_op1(Prim::round, {make_tensor({dtype, {4}}, {0.5, 1.5, 2.5, -2.5})}),
                {0, 2, 2, -2});
  }
  // Ties of f64 beyond f32's range of exact halves: 2^52 + 0.5 does not exist, 2^51 + 0.5 does.
  check_equal(run_op1(Prim::round, {make_tensor({DType::f64, {2}}, {0x1p51 + 0.5, 0x1p51 + 1.5})}),
              {0x1p51, 0x1p51 + 2});
}

TEST_CASE("i64 negation and abs wrap at the minimum") {
  const double lowest = static_cast<double>(std::numeric_limits<int64_t>::min());
  Tensor x = make_tensor({DType::i64, {2}}, {lowest, -5});
  check_equal(run_op1(Prim::neg, {x}), {lowest, 5});
  check_equal(run_op1(Prim::abs, {x}), {lowest, 5});
}

struct Binary {
  Prim prim;
  long double (*ref)(long double, long double);
  double lo, hi;  // range of both arguments
};

const std::vector<DType> kAll = {DType::f32, DType::f64, DType::i64, DType::boolean};

// The dtypes the row of `p` in ops.def takes, f16 aside (it runs as f32, runtime/lower_f16.h).
std::vector<DType> dtypes_taken(Prim p) {
  std::vector<DType> taken;
  for (DType d : kAll) {
    if (prim_info(p).accepts(d)) taken.push_back(d);
  }
  return taken;
}

const Binary kBinary[] = {
    {Prim::add, [](long double a, long double b) { return a + b; }, -5, 5},
    {Prim::sub, [](long double a, long double b) { return a - b; }, -5, 5},
    {Prim::mul, [](long double a, long double b) { return a * b; }, -5, 5},
    {Prim::div, [](long double a, long double b) { return a / b; }, 0.5, 5},
    {Prim::pow, [](long double a, long double b) { return std::pow(a, b); }, 0.1, 3},
    {Prim::rem, [](long double a, long double b) { return std::fmod(a, b); }, -5, 5},
    {Prim::max, [](long double a, long double b) { return a > b ? a : b; }, -5, 5},
    {Prim::min, [](long double a, long double b) { return a < b ? a : b; }, -5, 5},
    {Prim::eq, [](long double a, long double b) { return (long double)(a == b); }, -2, 2},
    {Prim::ne, [](long double a, long double b) { return (long double)(a != b); }, -2, 2},
    {Prim::lt, [](long double a, long double b) { return (long double)(a < b); }, -2, 2},
    {Prim::le, [](long double a, long double b) { return (long double)(a <= b); }, -2, 2},
    {Prim::gt, [](long double a, long double b) { return (long double)(a > b); }, -2, 2},
    {Prim::ge, [](long double a, long double b) { return (long double)(a >= b); }, -2, 2},
};

// Every layout the driver distinguishes: same shape, one-element sides, size-1 dims,
// different ranks, empty dims.
const std::pair<Shape, Shape> kBinaryShapes[] = {
    {{}, {}},
    {{}, {3, 4}},
    {{3, 4}, {}},
    {{5}, {5}},
    {{1}, {2, 3}},
    {{3, 4}, {3, 4}},
    {{3, 1}, {1, 4}},
    {{3, 4, 2}, {3}},
    {{1, 4, 2}, {3, 4, 1}},
    {{2, 3}, {2, 3, 1, 1}},
    {{0, 3}, {1, 3}},
    {{4, 0}, {4, 1}},
    {{7, 1, 5}, {1, 6, 5}},
    {{3, 1, 4, 1, 5}, {3, 2, 1, 2, 5}},
    {{1, 1, 3}, {2, 2, 1}},
};

// Large enough for threads: contiguous, scalar, and broadcast rows.
const std::pair<Shape, Shape> kLargeShapes[] = {
    {{300, 257}, {300, 257}}, {{}, {300, 257}},     {{200, 1, 40}, {1, 30, 40}},
    {{200, 300}, {200}},      {{1, 40000}, {3, 1}},
};

void check_binary(const Binary& op, DType dtype, const Shape& sa, const Shape& sb, uint64_t seed) {
  CAPTURE(prim_name(op.prim));
  CAPTURE(type_str({dtype, sa}));
  CAPTURE(type_str({dtype, sb}));
  // Integer draws in a small range make ties, so eq and max see equal values too.
  double lo = dtype == DType::f32 || dtype == DType::f64 ? op.lo : -3;
  Tensor a = random_tensor({dtype, sa}, seed, lo, op.hi);
  Tensor b = random_tensor({dtype, sb}, seed + 1000, lo, op.hi);
  Shape so = broadcast_shape(sa, sb);
  std::vector<double> av = to_doubles(a), bv = to_doubles(b), want(num_elements(so));
  for (size_t i = 0; i < want.size(); ++i) {
    long double x = av[broadcast_offset(sa, so, i)], y = bv[broadcast_offset(sb, so, i)];
    want[i] = static_cast<double>(op.ref(x, y));
  }
  // Arithmetic is correctly rounded (within an ulp of the rounded reference), pow within a
  // few ulps; comparisons, max, min and integers are exact.
  double rtol = 0;
  if (dtype == DType::f32 || dtype == DType::f64) {
    if (op.prim == Prim::pow) rtol = math_rtol(dtype);
    if (op.prim == Prim::add || op.prim == Prim::sub || op.prim == Prim::mul ||
        op.prim == Prim::div) {
      rtol = dtype == DType::f32 ? 0x1p-23 : 0x1p-52;
    }
  }
  check_close(run_op1(op.prim, {a, b}), want, rtol, 0);
}

TEST_CASE("binary kernels match references on broadcasting layouts") {
  uint64_t seed = 100;
  for (const Binary& op : kBinary) {
    for (DType dtype : dtypes_taken(op.prim)) {
      for (const auto& [sa, sb] : kBinaryShapes) check_binary(op, dtype, sa, sb, ++seed);
    }
  }
}

TEST_CASE("binary kernels on large tensors use threads and agree") {
  int saved = num_threads();
  set_num_threads(4);
  uint64_t seed = 500;
  for (const Binary& op : kBinary) {
    if (op.prim != Prim::add && op.prim != Prim::mul && op.prim != Prim::lt) continue;
    for (DType dtype : dtypes_taken(op.prim)) {
      for (const auto& [sa, sb] : kLargeShapes) check_binary(op, dtype, sa, sb, ++seed);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("rem is C's fmod: exact, with x's sign, NaN where fmod has it") {
  // 1e30 rem 3 needs all of 1e30's bits (a division would round); -4 rem 2 is -0.
  const std::vector<double> x = {7.5, -7.5, 7.5, -7.5, 1e30, -4, 5, kInf, kNaN, 0.5, -0.0};
  const std::vector<double> y = {2, 2, -2, -2, 3, 2, 0, 1, 1, kInf, 3};
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dtype));
    Tensor a = make_tensor({dtype, {11}}, x), b = make_tensor({dtype, {11}}, y);
    std::vector<double> av = to_doubles(a), want;
    for (size_t i = 0; i < x.size(); ++i) {
      want.push_back(static_cast<double>(std::fmod(static_cast<long double>(av[i]), y[i])));
    }
    Tensor got = run_op1(Prim::rem, {a, b});
    check_equal(got, want);
    CHECK(std::signbit(to_doubles(got)[5]));
    CHECK(std::signbit(to_doubles(got)[10]));
  }
  check_equal(run_op1(Prim::rem, {make_tensor({DType::f64, {3}}, {7.5, -7.5, 1e30}),
                                  make_tensor({DType::f64, {}}, {2})}),
              {1.5, -1.5, 0});
}

TEST_CASE("max and min propagate NaN from either side") {
  for (DType dtype : {DType::f32, DType::f64}) {
    Tensor a = make_tensor({dtype, {5}}, {kNaN, 1, kNaN, -kInf, 2});
    Tensor b = make_tensor({dtype, {5}}, {1, kNaN, kNaN, 3, kInf});
    check_equal(run_op1(Prim::max, {a, b}), {kNaN, kNaN, kNaN, 3, kInf});
    check_equal(run_op1(Prim::min, {a, b}), {kNaN, kNaN, kNaN, -kInf, 2});
    // A broadcast NaN scalar on either side.
    Tensor n = make_tensor({dtype, {}}, {kNaN});
    check_equal(run_op1(Prim::max, {n, b}), {kNaN, kNaN, kNaN, kNaN, kNaN});
    check_equal(run_op1(Prim::min, {b, n}), {kNaN, kNaN, kNaN, kNaN, kNaN});
    check_equal(run_op1(Prim::eq, {a, a}), {0, 1, 0, 1, 1});
    check_equal(run_op1(Prim::ne, {a, a}), {1, 0, 1, 0, 0});
    check_equal(run_op1(Prim::lt, {a, b}), {0, 0, 0, 1, 1});
  }
}

TEST_CASE("i64 arithmetic wraps on overflow") {
  Tensor a({DType::i64, {}});
  a.data<int64_t>()[0] = std::numeric_limits<int64_t>::max();
  Tensor one = make_tensor({DType::i64, {}}, {1});
  Tensor r = run_op1(Prim::add, {a, one});
  CHECK(r.data<int64_t>()[0] == std::numeric_limits<int64_t>::min());
}

TEST_CASE("select broadcasts its three arguments") {
  const std::vector<std::array<Shape, 3>> shapes = {
      {Shape{}, Shape{}, Shape{}},
      {Shape{4, 3}, Shape{4, 3}, Shape{4, 3}},
      {Shape{4, 1}, Shape{}, Shape{1, 3}},
      {Shape{}, Shape{4, 3}, Shape{4}},
      {Shape{2, 1, 3}, Shape{1, 5}, Shape{2, 5, 1}},
      {Shape{0, 3}, Shape{1}, Shape{0, 1}},
      {Shape{300, 257}, Shape{300, 257}, Shape{}},
      {Shape{300, 257}, Shape{}, Shape{300, 257}},
      {Shape{400, 1, 2}, Shape{1, 90}, Shape{}},
  };
  uint64_t seed = 900;
  int saved = num_threads();
  set_num_threads(4);
  for (DType dtype : kAll) {
    for (const auto& s : shapes) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(shape_str(s[0]));
      CAPTURE(shape_str(s[1]));
      CAPTURE(shape_str(s[2]));
      Tensor c = random_tensor({DType::boolean, s[0]}, ++seed);
      Tensor x = random_tensor({dtype, s[1]}, ++seed, -9, 9);
      Tensor y = random_tensor({dtype, s[2]}, ++seed, -9, 9);
      Shape so = broadcast_shape(broadcast_shape(s[0], s[1]), s[2]);
      std::vector<double> cv = to_doubles(c), xv = to_doubles(x), yv = to_doubles(y);
      std::vector<double> want(num_elements(so));
      for (size_t i = 0; i < want.size(); ++i) {
        want[i] = cv[broadcast_offset(s[0], so, i)] != 0 ? xv[broadcast_offset(s[1], so, i)]
                                                         : yv[broadcast_offset(s[2], so, i)];
      }
      check_equal(run_op1(Prim::select, {c, x, y}), want);
    }
  }
  set_num_threads(saved);
}

TEST_CASE("convert between every pair of dtypes") {
  const std::vector<double> values = {0, 1, -1, 2.75, -2.75, 0.5, 1e10, -3};
  for (DType from : kAll) {
    for (DType to : kAll) {
      CAPTURE(dtype_name(from));
      CAPTURE(dtype_name(to));
      Tensor x = make_tensor({from, {8}}, values);
      std::vector<double> want;
      for (double v : to_doubles(x)) {
        switch (to) {
          case DType::f32:
            want.push_back(static_cast<float>(v));
            break;
          case DType::f64:
            want.push_back(v);
            break;
          case DType::i64:
            want.push_back(std::trunc(v));
            break;
          case DType::boolean:
            want.push_back(v != 0);
            break;
        }
      }
      check_equal(run_op1(Prim::convert, {x}, {{"dtype", to}}), want);
    }
  }
}

TEST_CASE("convert of special floats to i64 and bool") {
  const double lo = static_cast<double>(std::numeric_limits<int64_t>::min());
  const double hi = static_cast<double>(std::numeric_limits<int64_t>::max());
  for (DType from : {DType::f32, DType::f64}) {
    Tensor x = make_tensor({from, {5}}, {kNaN, kInf, -kInf, 1e30, -0.0});
    Tensor i = run_op1(Prim::convert, {x}, {{"dtype", DType::i64}});
    CHECK(i.data<int64_t>()[0] == 0);
    CHECK(static_cast<double>(i.data<int64_t>()[1]) == hi);
    CHECK(static_cast<double>(i.data<int64_t>()[2]) == lo);
    CHECK(static_cast<double>(i.data<int64_t>()[3]) == hi);
    CHECK(i.data<int64_t>()[4] == 0);
    check_equal(run_op1(Prim::convert, {x}, {{"dtype", DType::boolean}}), {1, 1, 1, 1, 0});
  }
}

}  // namespace

}  // namespace ytape
