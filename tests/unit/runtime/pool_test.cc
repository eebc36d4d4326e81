// Pool kernels against naive references that walk each window in column-major order.
#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "kernel_harness.h"
#include "tape/error.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::check_equal;
using testing::make_tensor;
using testing::random_tensor;
using testing::run_op;
using testing::run_op1;
using testing::to_doubles;

struct PoolCase {
  Shape x;  // (W, H, C, N)
  std::vector<int64_t> window, stride, pad{0, 0, 0, 0};

  int64_t out_dim(int d) const {
    return (x[d] + pad[2 * d] + pad[2 * d + 1] - window[d]) / stride[d] + 1;
  }
  Shape y_shape() const { return {out_dim(0), out_dim(1), x[2], x[3]}; }
  Attrs attrs() const { return {{"window", window}, {"stride", stride}, {"pad", pad}}; }
};

// Calls f(y_index, plane_offset, position) for every pixel of x inside each window, in
// column-major window order; position is the 0-based index within the (W, H) plane.
template <typename F>
void for_each_window_pixel(const PoolCase& c, F f) {
  int64_t W = c.x[0], H = c.x[1], planes = c.x[2] * c.x[3];
  int64_t ow_n = c.out_dim(0), oh_n = c.out_dim(1);
  for (int64_t p = 0; p < planes; ++p)
    for (int64_t oh = 0; oh < oh_n; ++oh)
      for (int64_t ow = 0; ow < ow_n; ++ow)
        for (int64_t j = 0; j < c.window[1]; ++j)
          for (int64_t i = 0; i < c.window[0]; ++i) {
            int64_t w = ow * c.stride[0] + i - c.pad[0], h = oh * c.stride[1] + j - c.pad[2];
            if (w < 0 || w >= W || h < 0 || h >= H) continue;
            f(ow + ow_n * (oh + oh_n * p), p * W * H, w + W * h);
          }
}

struct MaxRef {
  std::vector<double> y, idx;
};

// The first maximum of each window; padding is skipped, a NaN wins.
MaxRef max_reference(const PoolCase& c, const std::vector<double>& x) {
  MaxRef r;
  size_t size = static_cast<size_t>(num_elements(c.y_shape()));
  r.y.assign(size, -std::numeric_limits<double>::infinity());
  r.idx.assign(size, 0);
  for_each_window_pixel(c, [&](int64_t yi, int64_t plane, int64_t pos) {
    double v = x[plane + pos];
    bool first = r.idx[yi] == 0;
    if (first || v > r.y[yi] || (std::isnan(v) && !std::isnan(r.y[yi]))) {
      r.y[yi] = v;
      r.idx[yi] = pos + 1;
    }
  });
  return r;
}

std::vector<PoolCase> cases() {
  return {
      {{6, 5, 2, 1}, {2, 2}, {2, 2}},
      {{7, 6, 3, 2}, {3, 3}, {2, 2}, {1, 1, 1, 1}},     // ResNet's stem pool
      {{9, 7, 2, 2}, {3, 2}, {2, 1}, {1, 0, 0, 1}},     // rectangular, asymmetric pad
      {{8, 8, 2, 1}, {2, 3}, {3, 2}, {1, 1, 2, 0}},     // stride larger than the window
      {{5, 4, 3, 1}, {5, 4}, {1, 1}},                   // one global window
      {{40, 36, 12, 1}, {3, 3}, {2, 2}, {1, 1, 1, 1}},  // large enough for threads
      // Windows wider than the image: only the part inside it is read.
      {{4, 3, 2, 1}, {40, 1}, {1, 1}, {39, 0, 0, 0}},
      {{5, 4, 3, 1}, {9, 7}, {3, 5}, {8, 0, 6, 6}},
      {{3, 3, 2, 1}, {3, 3}, {1000, 1000}, {2, 2, 2, 2}},  // strides past the padded image
      // Windows side by side (the tiled kernel): many chunks of outputs, threads, a part
      // of the image no window reads.
      {{8, 8, 32, 5}, {2, 2}, {2, 2}},
      {{11, 7, 5, 3}, {3, 2}, {3, 2}},
  };
}

TEST_CASE("max_pool2d and max_pool2d_with_indices match the reference") {
  uint64_t seed = 200;
  for (const PoolCase& c : cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape_str(c.x));
      CAPTURE(shape_str(c.window));
      CAPTURE(shape_str(c.pad));
      CAPTURE(dtype_name(dtype));
      // Negative values, so that padding read as zero would win; few distinct values, so
      // that ties are common and the first maximum must be chosen.
      std::vector<double> values = to_doubles(random_tensor({DType::i64, c.x}, ++seed, -4, -1));
      Tensor x = make_tensor({dtype, c.x}, values);
      MaxRef ref = max_reference(c, values);
      std::vector<Tensor> outs = run_op(Prim::max_pool2d_with_indices, {x}, c.attrs());
      check_equal(outs[0], ref.y);
      check_equal(outs[1], ref.idx);
      check_equal(run_op1(Prim::max_pool2d, {x}, c.attrs()), ref.y);
    }
  }
}

TEST_CASE("a window of 2^30 columns over 4 reads the 4, as one of 4 columns does") {
  // Padded by 2^30 - 1, output column j reads columns 1..j of x: as a window of 4 padded
  // by 3 does. Seconds of work per output if the kernels walked the whole window.
  constexpr int64_t k = int64_t{1} << 30;
  PoolCase huge{{4, 4, 3, 2}, {k, 1}, {1, 1}, {k - 1, 0, 0, 0}};
  PoolCase small{{4, 4, 3, 2}, {4, 1}, {1, 1}, {3, 0, 0, 0}};
  for (DType dtype : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(dtype));
    Tensor x = random_tensor({dtype, huge.x}, 11);
    std::vector<Tensor> want = run_op(Prim::max_pool2d_with_indices, {x}, small.attrs());
    std::vector<Tensor> got = run_op(Prim::max_pool2d_with_indices, {x}, huge.attrs());
    check_equal(got[0], to_doubles(want[0]));
    check_equal(got[1], to_doubles(want[1]));
    // The average divides by the window's size, padding included.
    std::vector<double> avg = to_doubles(run_op1(Prim::avg_pool2d, {x}, small.attrs()));
    for (double& v : avg) v = v * 4 / static_cast<double>(k);
    check_close(run_op1(Prim::avg_pool2d, {x}, huge.attrs()), avg, 1e-6, 1e-15);
    Tensor dy = random_tensor(want[0].type(), 12);
    Attrs backward = huge.attrs();
    backward.set("shape", huge.x);
    Attrs small_backward = small.attrs();
    small_backward.set("shape", small.x);
    std::vector<double> dx = to_doubles(run_op1(Prim::avg_pool2d_backward, {dy}, small_backward));
    for (double& v : dx) v = v * 4 / static_cast<double>(k);
    check_close(run_op1(Prim::avg_pool2d_backward, {dy}, backward), dx, 1e-6, 1e-15);
  }
}

TEST_CASE("max pooling propagates NaN and picks the first NaN") {
  PoolCase c{{4, 2, 1, 1}, {2, 2}, {2, 2}};
  constexpr double nan = std::numeric_limits<double>::quiet_NaN();
  Tensor x = make_tensor({DType::f32, c.x}, {1, nan, 5, 6, nan, 2, 7, nan});
  std::vector<Tensor> outs = run_op(Prim::max_pool2d_with_indices, {x}, c.attrs());
  check_equal(outs[0], {nan, nan});
  check_equal(outs[1], {2, 8});
}

TEST_CASE("max_pool2d_backward adds each gradient at its index") {
  uint64_t seed = 300;
  for (const PoolCase& c : cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape_str(c.x));
      CAPTURE(dtype_name(dtype));
      // Indices of a real forward pass, where overlapping windows share maxima.
      Tensor x = random_tensor({dtype, c.x}, ++seed);
      Tensor idx = run_op(Prim::max_pool2d_with_indices, {x}, c.attrs())[1];
      Tensor dy = random_tensor({dtype, c.y_shape()}, ++seed);
      std::vector<double> want(static_cast<size_t>(x.size()));
      std::vector<double> g = to_doubles(dy), k = to_doubles(idx);
      int64_t plane = c.x[0] * c.x[1], out_plane = c.y_shape()[0] * c.y_shape()[1];
      for (size_t o = 0; o < g.size(); ++o) {
        want[static_cast<size_t>(o / out_plane * plane + static_cast<int64_t>(k[o]) - 1)] += g[o];
      }
      Tensor dx = run_op1(Prim::max_pool2d_backward, {dy, idx}, {{"shape", c.x}});
      check_close(dx, want, 1e-6, 1e-6);
    }
  }
}

TEST_CASE("max_pool2d_backward rejects an index outside the plane") {
  Tensor dy = make_tensor({DType::f32, {1, 1, 1, 1}}, {1});
  Tensor idx = make_tensor({DType::i64, {1, 1, 1, 1}}, {7});
  CHECK_THROWS_AS(run_op1(Prim::max_pool2d_backward, {dy, idx}, {{"shape", Shape{2, 3, 1, 1}}}),
                  UserError);
}

TEST_CASE("avg_pool2d and its gradient match the reference, padding counted as zeros") {
  uint64_t seed = 400;
  for (const PoolCase& c : cases()) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape_str(c.x));
      CAPTURE(dtype_name(dtype));
      Tensor x = random_tensor({dtype, c.x}, ++seed);
      Tensor dy = random_tensor({dtype, c.y_shape()}, ++seed);
      std::vector<double> xs = to_doubles(x), gs = to_doubles(dy);
      std::vector<double> y(gs.size()), dx(xs.size());
      double size = static_cast<double>(c.window[0] * c.window[1]);
      for_each_window_pixel(c, [&](int64_t yi, int64_t plane, int64_t pos) {
        y[yi] += xs[plane + pos] / size;
        dx[plane + pos] += gs[yi] / size;
      });
      double tol = dtype == DType::f32 ? 1e-6 : 1e-14;
      check_close(run_op1(Prim::avg_pool2d, {x}, c.attrs()), y, tol, tol);
      Attrs backward = c.attrs();
      backward.set("shape", c.x);
      check_close(run_op1(Prim::avg_pool2d_backward, {dy}, backward), dx, tol, tol);
    }
  }
}

}  // namespace

}  // namespace ytape
