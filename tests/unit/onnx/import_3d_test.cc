// Rank-5 (N, C, D, H, W) Conv, ConvTranspose, MaxPool and AveragePool, which the importer
// composes of the 2-d primitives (tape/spatial3d.h), against naive row-major references
// written from ONNX's definitions.
#include <doctest/doctest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <limits>

#include "model.h"

namespace ytape::onnx_test {

namespace {

using Dims = std::array<int64_t, 5>;  // ONNX (N, C, D, H, W)

int64_t count(const Dims& d) {
  return d[0] * d[1] * d[2] * d[3] * d[4];
}
int64_t at(const Dims& d, int64_t n, int64_t c, int64_t z, int64_t y, int64_t x) {
  return (((n * d[1] + c) * d[2] + z) * d[3] + y) * d[4] + x;
}
std::vector<int64_t> vec(const Dims& d) {
  return {d.begin(), d.end()};
}

std::vector<float> ramp(int64_t n, float scale) {
  std::vector<float> v(static_cast<size_t>(n));
  for (int64_t i = 0; i < n; ++i) v[i] = std::sin(static_cast<float>(i) * scale) + 0.1f;
  return v;
}

void check_near(const std::vector<float>& got, const std::vector<double>& want) {
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < got.size(); ++i) {
    CAPTURE(i);
    CHECK(got[i] == doctest::Approx(want[i]).epsilon(1e-5).scale(1));
  }
}

// The spatial geometry of the tests: per ONNX spatial dim (D, H, W).
struct Geometry {
  std::array<int64_t, 3> kernel, stride, dilation, pad_lo, pad_hi;
  std::vector<int64_t> pads() const {
    return {pad_lo[0], pad_lo[1], pad_lo[2], pad_hi[0], pad_hi[1], pad_hi[2]};
  }
  int64_t out(int64_t in, int i) const {
    return (in + pad_lo[i] + pad_hi[i] - dilation[i] * (kernel[i] - 1) - 1) / stride[i] + 1;
  }
};

void set_geometry(onnx::NodeProto& n, const Geometry& g, bool dilations) {
  set_ints(n, "kernel_shape", {g.kernel.begin(), g.kernel.end()});
  set_ints(n, "strides", {g.stride.begin(), g.stride.end()});
  set_ints(n, "pads", g.pads());
  if (dilations) set_ints(n, "dilations", {g.dilation.begin(), g.dilation.end()});
}

// Calls f(y index, x index, w index) for each product of a grouped convolution of x (xs)
// with w (M, C/group, kD, kH, kW) into y (ys).
template <class F>
void conv_terms(const Dims& xs, const Dims& ws, const Dims& ys, const Geometry& g, int64_t group,
                F f) {
  int64_t cin_g = ws[1], cout_g = ws[0] / group;
  for (int64_t n = 0; n < ys[0]; ++n)
    for (int64_t m = 0; m < ys[1]; ++m)
      for (int64_t z = 0; z < ys[2]; ++z)
        for (int64_t y = 0; y < ys[3]; ++y)
          for (int64_t x = 0; x < ys[4]; ++x)
            for (int64_t c = 0; c < cin_g; ++c)
              for (int64_t a = 0; a < ws[2]; ++a)
                for (int64_t b = 0; b < ws[3]; ++b)
                  for (int64_t e = 0; e < ws[4]; ++e) {
                    int64_t iz = z * g.stride[0] + a * g.dilation[0] - g.pad_lo[0];
                    int64_t iy = y * g.stride[1] + b * g.dilation[1] - g.pad_lo[1];
                    int64_t ix = x * g.stride[2] + e * g.dilation[2] - g.pad_lo[2];
                    if (iz < 0 || iz >= xs[2] || iy < 0 || iy >= xs[3] || ix < 0 || ix >= xs[4])
                      continue;
                    f(at(ys, n, m, z, y, x), at(xs, n, m / cout_g * cin_g + c, iz, iy, ix),
                      at(ws, m, c, a, b, e));
                  }
}

}  // namespace

TEST_CASE("Conv over NCDHW volumes: strides, uneven pads, dilations, groups and the bias") {
  Geometry g{{2, 3, 2}, {2, 1, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 0}};
  Dims xs{2, 4, 5, 4, 6}, ws{6, 2, 2, 3, 2};
  Dims ys{2, 6, g.out(5, 0), g.out(4, 1), g.out(6, 2)};
  Model m;
  m.input("x", vec(xs));
  std::vector<float> x = ramp(count(xs), 0.37f), w = ramp(count(ws), 0.91f),
                     b = {0.5f, -1, 2, 0, 1, -2};
  m.initializer("w", vec(ws), w);
  m.initializer("b", {6}, b);
  onnx::NodeProto& n = m.node("Conv", {"x", "w", "b"}, {"y"}, "conv");
  set_geometry(n, g, true);
  set_int(n, "group", 2);
  m.output("y");
  std::vector<double> want(static_cast<size_t>(count(ys)));
  for (int64_t i = 0; i < count(ys); ++i) want[i] = b[i / (ys[2] * ys[3] * ys[4]) % ys[1]];
  conv_terms(xs, ws, ys, g, 2, [&](int64_t yi, int64_t xi, int64_t wi) {
    want[yi] += static_cast<double>(x[xi]) * w[wi];
  });
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor(vec(xs), x)}});
  CHECK(y[0].shape() == Shape{ys[4], ys[3], ys[2], ys[1], ys[0]});
  check_near(values(y[0]), want);
}

TEST_CASE("ConvTranspose over NCDHW volumes: strides, pads, output_padding, groups") {
  // The transpose of the convolution of an input of ys with w (C, M/group, k...): each x
  // element scattered through the kernel.
  Geometry g{{3, 2, 2}, {2, 2, 1}, {1, 1, 2}, {1, 0, 1}, {0, 1, 1}};
  Dims xs{1, 4, 3, 3, 4}, ws{4, 3, 3, 2, 2};
  std::array<int64_t, 3> extra{1, 0, 0};
  Dims ys{1, 6, 0, 0, 0};
  for (int i = 0; i < 3; ++i) {
    ys[2 + i] = g.stride[i] * (xs[2 + i] - 1) + extra[i] + (g.kernel[i] - 1) * g.dilation[i] + 1 -
                g.pad_lo[i] - g.pad_hi[i];
  }
  Model m;
  m.input("x", vec(xs));
  std::vector<float> x = ramp(count(xs), 0.53f), w = ramp(count(ws), 0.29f);
  m.initializer("w", vec(ws), w);
  onnx::NodeProto& n = m.node("ConvTranspose", {"x", "w"}, {"y"}, "deconv");
  set_geometry(n, g, true);
  set_ints(n, "output_padding", {extra.begin(), extra.end()});
  set_int(n, "group", 2);
  m.output("y");
  // As a convolution of y's shape, x is its output and ws (C, M/group, ...) reads as
  // (M', C'/group, ...) with M' = C: conv_terms's f(x index, y index, w index).
  std::vector<double> want(static_cast<size_t>(count(ys)));
  conv_terms(ys, ws, xs, g, 2, [&](int64_t xi, int64_t yi, int64_t wi) {
    want[yi] += static_cast<double>(x[xi]) * w[wi];
  });
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor(vec(xs), x)}});
  CHECK(y[0].shape() == Shape{ys[4], ys[3], ys[2], ys[1], ys[0]});
  check_near(values(y[0]), want);
}

// The pools of x over windows of g: the maximum, or the sum over the count of x's elements
// in the window (all of the window's with count_include_pad).
std::vector<double> naive_pool(const std::vector<float>& x, const Dims& xs, const Dims& ys,
                               const Geometry& g, int kind) {
  std::vector<double> y;
  for (int64_t n = 0; n < ys[0] * ys[1]; ++n)
    for (int64_t z = 0; z < ys[2]; ++z)
      for (int64_t r = 0; r < ys[3]; ++r)
        for (int64_t c = 0; c < ys[4]; ++c) {
          double best = -std::numeric_limits<double>::infinity(), sum = 0;
          int64_t inside = 0;
          for (int64_t a = 0; a < g.kernel[0]; ++a)
            for (int64_t b = 0; b < g.kernel[1]; ++b)
              for (int64_t e = 0; e < g.kernel[2]; ++e) {
                int64_t iz = z * g.stride[0] + a - g.pad_lo[0];
                int64_t iy = r * g.stride[1] + b - g.pad_lo[1];
                int64_t ix = c * g.stride[2] + e - g.pad_lo[2];
                if (iz < 0 || iz >= xs[2] || iy < 0 || iy >= xs[3] || ix < 0 || ix >= xs[4])
                  continue;
                double v = x[at(xs, 0, n, iz, iy, ix)];
                best = std::max(best, v);
                sum += v;
                ++inside;
              }
          int64_t all = g.kernel[0] * g.kernel[1] * g.kernel[2];
          y.push_back(kind == 0 ? best : sum / static_cast<double>(kind == 1 ? inside : all));
        }
  return y;
}

TEST_CASE("MaxPool and AveragePool over NCDHW volumes, with pads, strides and count_include_pad") {
  Geometry g{{2, 3, 2}, {2, 1, 3}, {1, 1, 1}, {1, 1, 0}, {1, 0, 1}};
  Dims xs{2, 3, 5, 4, 7};
  Dims ys{2, 3, g.out(5, 0), g.out(4, 1), g.out(7, 2)};
  std::vector<float> x = ramp(count(xs), 0.73f);
  // kind 0: MaxPool; 1: AveragePool; 2: AveragePool with count_include_pad.
  for (int kind : {0, 1, 2}) {
    CAPTURE(kind);
    Model m;
    m.input("x", vec(xs));
    onnx::NodeProto& n = m.node(kind == 0 ? "MaxPool" : "AveragePool", {"x"}, {"y"}, "pool");
    set_geometry(n, g, false);
    if (kind == 2) set_int(n, "count_include_pad", 1);
    m.output("y");
    std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor(vec(xs), x)}});
    CHECK(y[0].shape() == Shape{ys[4], ys[3], ys[2], ys[1], ys[0]});
    check_near(values(y[0]), naive_pool(x, xs, ys, g, kind));
  }
}

TEST_CASE("MaxPool over NCDHW volumes with ceil_mode, and its indices refused") {
  Geometry g{{2, 2, 2}, {2, 2, 2}, {1, 1, 1}, {0, 0, 0}, {1, 1, 0}};  // the ceiling's pads
  Dims xs{1, 2, 5, 3, 4};
  Dims ys{1, 2, 3, 2, 2};
  std::vector<float> x = ramp(count(xs), 0.41f);
  Model m;
  m.input("x", vec(xs));
  onnx::NodeProto& n = m.node("MaxPool", {"x"}, {"y"}, "pool");
  set_ints(n, "kernel_shape", {2, 2, 2});
  set_ints(n, "strides", {2, 2, 2});
  set_int(n, "ceil_mode", 1);
  m.output("y");
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor(vec(xs), x)}});
  CHECK(y[0].shape() == Shape{ys[4], ys[3], ys[2], ys[1], ys[0]});
  check_near(values(y[0]), naive_pool(x, xs, ys, g, 0));

  Model with_indices;
  with_indices.input("x", vec(xs));
  onnx::NodeProto& ni = with_indices.node("MaxPool", {"x"}, {"y", "i"}, "pool");
  set_ints(ni, "kernel_shape", {2, 2, 2});
  with_indices.output("i");
  CHECK_THROWS_WITH_AS(with_indices.import(),
                       "m.onnx: node 1 'pool' (MaxPool, opset 13): MaxPool's indices over 3 "
                       "spatial dims is not supported",
                       UnsupportedError);
}

}  // namespace ytape::onnx_test
