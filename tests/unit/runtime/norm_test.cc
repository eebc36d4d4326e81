// Batch norm kernels against references computed per channel in double, straight from the
// formulas in docs/primitives.md.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernel_harness.h"
#include "runtime/kernels/kernel.h"
#include "tape/builder.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::make_tensor;
using testing::random_tensor;
using testing::run_op;
using testing::run_op1;
using testing::to_doubles;

constexpr double kEps = 1e-5;

// The channel of linear position i: the channel dim is the second to last.
int64_t channel_of(const Shape& shape, int64_t i) {
  int64_t inner = 1;
  for (size_t d = 0; d + 2 < shape.size(); ++d) inner *= shape[d];
  return i / inner % shape[shape.size() - 2];
}

struct Ref {
  std::vector<double> y, mean, invstd;
};

Ref forward_reference(const Shape& shape, const std::vector<double>& x,
                      const std::vector<double>& scale, const std::vector<double>& bias) {
  size_t channels = scale.size();
  std::vector<double> sum(channels), count(channels), sq(channels);
  for (size_t i = 0; i < x.size(); ++i) {
    sum[channel_of(shape, i)] += x[i];
    count[channel_of(shape, i)] += 1;
  }
  Ref r{std::vector<double>(x.size()), std::vector<double>(channels),
        std::vector<double>(channels)};
  for (size_t c = 0; c < channels; ++c) r.mean[c] = sum[c] / count[c];
  for (size_t i = 0; i < x.size(); ++i) {
    double d = x[i] - r.mean[channel_of(shape, i)];
    sq[channel_of(shape, i)] += d * d;
  }
  for (size_t c = 0; c < channels; ++c) r.invstd[c] = 1 / std::sqrt(sq[c] / count[c] + kEps);
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = channel_of(shape, i);
    r.y[i] = (x[i] - r.mean[c]) * r.invstd[c] * scale[c] + bias[c];
  }
  return r;
}

struct GradRef {
  std::vector<double> dx, dscale, dbias;
};

GradRef backward_reference(const Shape& shape, const std::vector<double>& dy,
                           const std::vector<double>& x, const std::vector<double>& scale,
                           const std::vector<double>& mean, const std::vector<double>& invstd) {
  size_t channels = scale.size();
  GradRef r{std::vector<double>(x.size()), std::vector<double>(channels),
            std::vector<double>(channels)};
  std::vector<double> count(channels);
  auto xhat = [&](size_t i) {
    int64_t c = channel_of(shape, i);
    return (x[i] - mean[c]) * invstd[c];
  };
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = channel_of(shape, i);
    r.dbias[c] += dy[i];
    r.dscale[c] += dy[i] * xhat(i);
    count[c] += 1;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    int64_t c = channel_of(shape, i);
    double m = count[c];
    r.dx[i] = scale[c] * invstd[c] * (dy[i] - r.dbias[c] / m - xhat(i) * r.dscale[c] / m);
  }
  return r;
}

std::vector<Shape> shapes() {
  return {
      {5, 4, 3, 2},     // WHCN
      {7, 3, 2},        // (L, C, N)
      {6, 4},           // (C, N)
      {1, 1, 5, 3},     // one pixel per image
      {30, 30, 16, 2},  // large enough for threads
      {13, 11, 3, 1},   // rows not a multiple of the vector lanes
  };
}

TEST_CASE("batchnorm and batchnorm_with_stats match the reference") {
  uint64_t seed = 500;
  for (const Shape& shape : shapes()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape_str(shape));
      CAPTURE(dtype_name(dtype));
      Shape c{shape[shape.size() - 2]};
      Tensor x = random_tensor({dtype, shape}, ++seed);
      Tensor scale = random_tensor({dtype, c}, ++seed);
      Tensor bias = random_tensor({dtype, c}, ++seed);
      Ref ref = forward_reference(shape, to_doubles(x), to_doubles(scale), to_doubles(bias));
      double tol = dtype == DType::f32 ? 2e-5 : 1e-12;
      check_close(run_op1(Prim::batchnorm, {x, scale, bias}), ref.y, tol, tol);
      std::vector<Tensor> outs = run_op(Prim::batchnorm_with_stats, {x, scale, bias});
      check_close(outs[0], ref.y, tol, tol);
      check_close(outs[1], ref.mean, tol, tol);
      check_close(outs[2], ref.invstd, tol, tol);
    }
  }
}

TEST_CASE("batchnorm statistics stay exact for f32 data far from zero") {
  // A one-pass E[x^2] - E[x]^2 in f32 would lose every digit of this variance.
  Shape shape{64, 64, 2, 1};
  std::vector<double> values = to_doubles(random_tensor({DType::f64, shape}, 7, -1, 1));
  for (double& v : values) v = static_cast<float>(1e4 + v);
  Tensor x = make_tensor({DType::f32, shape}, values);
  Tensor ones = make_tensor({DType::f32, {2}}, {1, 1});
  Tensor zeros = make_tensor({DType::f32, {2}}, {0, 0});
  Ref ref = forward_reference(shape, values, {1, 1}, {0, 0});
  std::vector<Tensor> outs = run_op(Prim::batchnorm_with_stats, {x, ones, zeros});
  check_close(outs[2], ref.invstd, 1e-6, 0);
}

TEST_CASE("batchnorm may write its output over x") {
  // The kernel table allows it in place; the executor then passes one buffer twice.
  Shape shape{9, 7, 4, 2};
  Tensor x = random_tensor({DType::f32, shape}, 11);
  Tensor scale = random_tensor({DType::f32, {4}}, 12);
  Tensor bias = random_tensor({DType::f32, {4}}, 13);
  std::vector<double> want = to_doubles(run_op1(Prim::batchnorm, {x, scale, bias}));
  REQUIRE(kernel_table().in_place[static_cast<int>(Prim::batchnorm)]);
  Builder b("in_place");
  Var vx = b.input("x", x.type()), vs = b.input("scale", scale.type());
  Var vb = b.input("bias", bias.type());
  b.call(Prim::batchnorm, {vx, vs, vb});
  Tape tape = b.finish();
  const Tensor* args[] = {&x, &scale, &bias};
  Tensor* outs[] = {&x};
  kernel_table().kernels[static_cast<int>(Prim::batchnorm)](
      KernelCall{tape.ops.back(), args, outs});
  check_close(x, want, 0, 0);
}

TEST_CASE("batchnorm_backward matches the reference formula") {
  uint64_t seed = 600;
  for (const Shape& shape : shapes()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape_str(shape));
      CAPTURE(dtype_name(dtype));
      Shape c{shape[shape.size() - 2]};
      Tensor x = random_tensor({dtype, shape}, ++seed);
      Tensor scale = random_tensor({dtype, c}, ++seed);
      Tensor bias = random_tensor({dtype, c}, ++seed);
      Tensor dy = random_tensor({dtype, shape}, ++seed);
      std::vector<Tensor> stats = run_op(Prim::batchnorm_with_stats, {x, scale, bias});
      GradRef ref = backward_reference(shape, to_doubles(dy), to_doubles(x), to_doubles(scale),
                                       to_doubles(stats[1]), to_doubles(stats[2]));
      std::vector<Tensor> outs =
          run_op(Prim::batchnorm_backward, {dy, x, scale, stats[1], stats[2]});
      double tol = dtype == DType::f32 ? 1e-4 : 1e-11;
      check_close(outs[0], ref.dx, tol, tol);
      check_close(outs[1], ref.dscale, tol, tol);
      check_close(outs[2], ref.dbias, tol, tol);
    }
  }
}

TEST_CASE("batchnorm_backward's dx is the gradient of batchnorm (finite differences)") {
  // <dy, (bn(x + h v) - bn(x - h v)) / 2h> must equal <dx, v>, in f64.
  Shape shape{4, 3, 3, 2};
  Tensor x = random_tensor({DType::f64, shape}, 1);
  Tensor v = random_tensor({DType::f64, shape}, 2);
  Tensor dy = random_tensor({DType::f64, shape}, 3);
  Tensor scale = random_tensor({DType::f64, {3}}, 4);
  Tensor bias = random_tensor({DType::f64, {3}}, 5);
  double h = 1e-5;
  std::vector<double> xs = to_doubles(x), vs = to_doubles(v), plus = xs, minus = xs;
  for (size_t i = 0; i < xs.size(); ++i) plus[i] += h * vs[i], minus[i] -= h * vs[i];
  std::vector<double> yp =
      to_doubles(run_op1(Prim::batchnorm, {make_tensor(x.type(), plus), scale, bias}));
  std::vector<double> ym =
      to_doubles(run_op1(Prim::batchnorm, {make_tensor(x.type(), minus), scale, bias}));
  std::vector<double> g = to_doubles(dy);
  double numeric = 0;
  for (size_t i = 0; i < g.size(); ++i) numeric += g[i] * (yp[i] - ym[i]) / (2 * h);
  std::vector<Tensor> stats = run_op(Prim::batchnorm_with_stats, {x, scale, bias});
  std::vector<double> dx =
      to_doubles(run_op(Prim::batchnorm_backward, {dy, x, scale, stats[1], stats[2]})[0]);
  double analytic = 0;
  for (size_t i = 0; i < dx.size(); ++i) analytic += dx[i] * vs[i];
  CHECK(analytic == doctest::Approx(numeric).epsilon(1e-7));
}

}  // namespace

}  // namespace ytape
