// Conv kernels against naive references: one loop nest enumerates the terms of the
// convolution sum in docs/primitives.md, and the forward op and both gradients are
// accumulated from it in double.
#include <doctest/doctest.h>

#include <cmath>
#include <vector>

#include "kernel_harness.h"
#include "runtime/layout.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::check_close_scaled;
using testing::random_tensor;
using testing::run_op1;
using testing::to_doubles;

struct ConvCase {
  Shape x;  // (W, H, Cin, N)
  int64_t kw, kh, cout;
  std::vector<int64_t> stride{1, 1}, pad{0, 0, 0, 0}, dilation{1, 1};
  int64_t groups = 1;

  int64_t out_dim(int d) const {
    int64_t k = d == 0 ? kw : kh;
    return (x[d] + pad[2 * d] + pad[2 * d + 1] - dilation[d] * (k - 1) - 1) / stride[d] + 1;
  }
  Shape w_shape() const { return {kw, kh, x[2] / groups, cout}; }
  Shape y_shape() const { return {out_dim(0), out_dim(1), cout, x[3]}; }
  Attrs attrs() const {
    return {{"stride", stride}, {"pad", pad}, {"dilation", dilation}, {"groups", groups}};
  }
  Attrs attrs_with_shape(const Shape& shape) const {
    Attrs a = attrs();
    a.set("shape", shape);
    return a;
  }
};

// Calls f(y_index, x_index, w_index) for every product w * x of the convolution sum that
// reads x inside the image (padding reads zero and contributes nothing).
template <typename F>
void for_each_term(const ConvCase& c, F f) {
  int64_t W = c.x[0], H = c.x[1], cin = c.x[2], batch = c.x[3];
  int64_t ow_n = c.out_dim(0), oh_n = c.out_dim(1);
  int64_t cin_g = cin / c.groups, cout_g = c.cout / c.groups;
  for (int64_t n = 0; n < batch; ++n)
    for (int64_t co = 0; co < c.cout; ++co)
      for (int64_t oh = 0; oh < oh_n; ++oh)
        for (int64_t ow = 0; ow < ow_n; ++ow)
          for (int64_t ci = 0; ci < cin_g; ++ci)
            for (int64_t j = 0; j < c.kh; ++j)
              for (int64_t i = 0; i < c.kw; ++i) {
                int64_t iw = ow * c.stride[0] + i * c.dilation[0] - c.pad[0];
                int64_t ih = oh * c.stride[1] + j * c.dilation[1] - c.pad[2];
                if (iw < 0 || iw >= W || ih < 0 || ih >= H) continue;
                int64_t cx = co / cout_g * cin_g + ci;
                f(ow + ow_n * (oh + oh_n * (co + c.cout * n)), iw + W * (ih + H * (cx + cin * n)),
                  i + c.kw * (j + c.kh * (ci + cin_g * co)));
              }
}

// The three results, and for each element the sum of the magnitudes of its terms, which
// bounds its rounding error whatever order a kernel adds them in.
struct Refs {
  std::vector<double> y, dx, dw;
  std::vector<double> y_scale, dx_scale, dw_scale;
};

Refs references(const ConvCase& c, const std::vector<double>& x, const std::vector<double>& w,
                const std::vector<double>& dy) {
  Refs r{std::vector<double>(dy.size()), std::vector<double>(x.size()),
         std::vector<double>(w.size()),  std::vector<double>(dy.size()),
         std::vector<double>(x.size()),  std::vector<double>(w.size())};
  for_each_term(c, [&](int64_t yi, int64_t xi, int64_t wi) {
    r.y[yi] += w[wi] * x[xi];
    r.dx[xi] += w[wi] * dy[yi];
    r.dw[wi] += dy[yi] * x[xi];
    r.y_scale[yi] += std::abs(w[wi] * x[xi]);
    r.dx_scale[xi] += std::abs(w[wi] * dy[yi]);
    r.dw_scale[wi] += std::abs(dy[yi] * x[xi]);
  });
  return r;
}

std::vector<double> abs(std::vector<double> v) {
  for (double& e : v) e = std::abs(e);
  return v;
}

double dot(const std::vector<double>& a, const std::vector<double>& b) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) s += a[i] * b[i];
  return s;
}

void check_case(const ConvCase& c, DType dtype, KernelSet set, uint64_t seed) {
  Tensor x = random_tensor({dtype, c.x}, seed);
  Tensor w = random_tensor({dtype, c.w_shape()}, seed + 1);
  Tensor dy = random_tensor({dtype, c.y_shape()}, seed + 2);
  Refs ref = references(c, to_doubles(x), to_doubles(w), to_doubles(dy));
  // About 32 units of rounding of the sum of magnitudes: far below what a wrong or missing
  // term costs (the size of one term), above what a library's order of summing costs.
  double tol = dtype == DType::f32 ? 2e-6 : 1e-14;
  Tensor y = run_op1(Prim::conv2d, {x, w}, c.attrs(), set);
  Tensor dx = run_op1(Prim::conv2d_backward_input, {dy, w}, c.attrs_with_shape(c.x), set);
  Tensor dw = run_op1(Prim::conv2d_backward_filter, {x, dy}, c.attrs_with_shape(c.w_shape()), set);
  check_close_scaled(y, ref.y, ref.y_scale, tol, tol);
  check_close_scaled(dx, ref.dx, ref.dx_scale, tol, tol);
  check_close_scaled(dw, ref.dw, ref.dw_scale, tol, tol);
  // Both gradients are adjoints of the forward op: <conv(x, w), dy> = <x, dx> = <w, dw>,
  // up to rounding relative to the sum of the magnitudes of the products.
  double forward = dot(to_doubles(y), to_doubles(dy));
  double magnitude = dot(abs(ref.y), abs(to_doubles(dy)));
  auto approx = doctest::Approx(forward).epsilon(tol).scale(magnitude);
  CHECK(dot(to_doubles(x), to_doubles(dx)) == approx);
  CHECK(dot(to_doubles(w), to_doubles(dw)) == approx);
}

ConvCase make(Shape x, int64_t kw, int64_t kh, int64_t cout) {
  ConvCase c;
  c.x = std::move(x);
  c.kw = kw, c.kh = kh, c.cout = cout;
  return c;
}

std::vector<ConvCase> refused_by_onednn();

std::vector<ConvCase> cases() {
  std::vector<ConvCase> all;
  all.push_back(make({5, 4, 2, 1}, 3, 3, 3));  // valid, no padding
  ConvCase c = make({6, 5, 3, 2}, 3, 3, 4);
  c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({9, 7, 2, 2}, 3, 2, 3);  // rectangular image and window, strided, asymmetric pad
  c.stride = {2, 3}, c.pad = {2, 0, 1, 2};
  all.push_back(c);
  c = make({10, 8, 2, 1}, 3, 3, 2);  // dilated, padded so that some rows read only padding
  c.dilation = {2, 3}, c.pad = {1, 2, 3, 0};
  all.push_back(c);
  c = make({7, 6, 4, 2}, 3, 3, 6);  // groups
  c.groups = 2, c.pad = {1, 1, 0, 1};
  all.push_back(c);
  c = make({8, 6, 3, 1}, 3, 3, 6);  // depthwise, two filters per channel
  c.groups = 3, c.stride = {2, 1}, c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({6, 5, 4, 2}, 3, 3, 4);  // depthwise, one filter per channel
  c.groups = 4, c.pad = {0, 1, 1, 0};
  all.push_back(c);
  all.push_back(make({6, 5, 4, 3}, 1, 1, 5));  // 1x1 stride 1: no im2col
  c = make({6, 5, 4, 2}, 1, 1, 6);             // 1x1 with groups
  c.groups = 2;
  all.push_back(c);
  c = make({7, 6, 4, 1}, 1, 1, 3);  // 1x1 strided (a ResNet downsample)
  c.stride = {2, 2};
  all.push_back(c);
  c = make({3, 3, 2, 1}, 2, 2, 2);  // padding wider than the kernel
  c.pad = {3, 1, 2, 3};
  all.push_back(c);
  c = make({24, 20, 8, 2}, 3, 3, 8);  // large enough to run on several threads
  c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({3, 2, 8, 2}, 3, 3, 24);  // many channels on few pixels: GEMMs computed transposed
  c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({30, 28, 3, 1}, 7, 7, 4);  // a small ResNet stem
  c.stride = {2, 2}, c.pad = {3, 3, 3, 3};
  all.push_back(c);
  // One image in many groups (vmap's per-example weight gradients): the fast set's
  // backward filter computes each group apart (conv.cc, groups_faster).
  c = make({4, 4, 32, 1}, 3, 3, 32);
  c.groups = 16, c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({8, 8, 16, 1}, 3, 3, 24);
  c.groups = 8, c.pad = {1, 1, 1, 1};
  all.push_back(c);
  c = make({5, 3, 24, 1}, 2, 3, 16);  // a width of no template, asymmetric padding
  c.groups = 8, c.pad = {1, 0, 2, 1};
  all.push_back(c);
  c = make({3, 3, 8, 1}, 1, 1, 16);  // 1x1
  c.groups = 8;
  all.push_back(c);
  for (ConvCase refused : refused_by_onednn()) all.push_back(refused);
  return all;
}

// Valid geometries whose descriptors oneDNN refuses (a stride or dilation beyond its int
// range): the fast set runs them on the reference kernels.
std::vector<ConvCase> refused_by_onednn() {
  ConvCase c = make({8, 8, 3, 1}, 3, 3, 4);  // one row of windows, as in PyTorch
  c.stride = {2, 2147483647}, c.pad = {1, 1, 1, 1};
  ConvCase d = make({8, 6, 16, 2}, 3, 1, 16);  // a dilation along a kernel of one tap
  d.stride = {1, 2147483647}, d.pad = {1, 1, 0, 0}, d.dilation = {1, int64_t{1} << 32};
  return {c, d};
}

TEST_CASE("conv2d and its gradients match the naive reference") {
  uint64_t seed = 100;
  for (const ConvCase& c : cases()) {
    for (const auto& bound :
         {std::pair{DType::f32, KernelSet::fast}, std::pair{DType::f32, KernelSet::reference},
          std::pair{DType::f64, KernelSet::fast}}) {
      const auto& dtype = std::get<0>(bound);
      const auto& set = std::get<1>(bound);
      CAPTURE(shape_str(c.x));
      CAPTURE(c.kw);
      CAPTURE(c.kh);
      CAPTURE(c.cout);
      CAPTURE(shape_str(c.stride));
      CAPTURE(shape_str(c.pad));
      CAPTURE(shape_str(c.dilation));
      CAPTURE(c.groups);
      CAPTURE(dtype_name(dtype));
      CAPTURE(set == KernelSet::fast);
      check_case(c, dtype, set, seed += 3);
    }
  }
}

TEST_CASE("convolutions oneDNN refuses run on the reference kernels, blocked images too") {
  // The plan keeps a convolution's images blocked for oneDNN before it asks oneDNN.
  uint64_t seed = 500;
  for (const ConvCase& c : refused_by_onednn()) {
    CAPTURE(shape_str(c.x));
    Tensor x = random_tensor({DType::f32, c.x}, ++seed);
    Tensor w = random_tensor({DType::f32, c.w_shape()}, ++seed);
    Tensor dy = random_tensor({DType::f32, c.y_shape()}, ++seed);
    Attrs input = c.attrs_with_shape(c.x), filter = c.attrs_with_shape(c.w_shape());
    Tensor y = run_op1(Prim::conv2d, {x, w}, c.attrs(), KernelSet::reference);
    Tensor dx = run_op1(Prim::conv2d_backward_input, {dy, w}, input, KernelSet::reference);
    Tensor dw = run_op1(Prim::conv2d_backward_filter, {x, dy}, filter, KernelSet::reference);
    for (Layout l : {Layout::c8, Layout::c16}) {
      if (c.x[2] % block_of(l) != 0) continue;
      using testing::run_op_in_layouts;
      check_close(run_op_in_layouts(Prim::conv2d, {x, w}, c.attrs(), {l, Layout::plain, l})[0],
                  to_doubles(y), 0, 0);
      check_close(
          run_op_in_layouts(Prim::conv2d_backward_input, {dy, w}, input, {l, Layout::plain, l})[0],
          to_doubles(dx), 0, 0);
      check_close(run_op_in_layouts(Prim::conv2d_backward_filter, {x, dy}, filter,
                                    {l, l, Layout::plain})[0],
                  to_doubles(dw), 0, 0);
    }
  }
}

TEST_CASE("conv kernels overwrite every element of reused output buffers") {
  // run_op fills outputs with garbage; a second run on the same shapes must agree with the
  // first (the thread-local im2col buffer is reused and must not leak into results).
  ConvCase c = make({6, 5, 3, 2}, 3, 3, 4);
  c.pad = {1, 1, 1, 1};
  Tensor x = random_tensor({DType::f32, c.x}, 1);
  Tensor w = random_tensor({DType::f32, c.w_shape()}, 2);
  std::vector<double> first = to_doubles(run_op1(Prim::conv2d, {x, w}, c.attrs()));
  ConvCase big = make({20, 20, 8, 1}, 5, 5, 4);
  run_op1(Prim::conv2d,
          {random_tensor({DType::f32, big.x}, 3), random_tensor({DType::f32, big.w_shape()}, 4)},
          big.attrs());
  check_close(run_op1(Prim::conv2d, {x, w}, c.attrs()), first, 0, 0);
}

}  // namespace

}  // namespace ytape
