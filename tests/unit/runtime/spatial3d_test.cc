// The 3-d convolution and pooling composed of 2-d primitives (tape/spatial3d.h), run op by
// op on the kernels in f64, against naive 3-d loops over the definitions.
#include "tape/spatial3d.h"

#include <doctest/doctest.h>

#include <cmath>
#include <limits>
#include <string>
#include <vector>

#include "kernel_harness.h"

namespace ytape {

namespace {

using testing::check_close;
using testing::random_tensor;
using testing::ravel;
using testing::run_op1;
using testing::to_doubles;
using testing::unravel;

// Runs each op as it is asked for, on f64 tensors: the composed op's value, computed by
// the same kernels a tape would run.
class TensorSink final : public OpSink {
 public:
  Var add(Tensor t) {
    values_.push_back(std::move(t));
    return Var{static_cast<uint32_t>(values_.size() - 1)};
  }
  const Tensor& operator[](Var v) const { return values_[v.id]; }
  Var call(Prim p, VarList args, const Attrs& attrs) override {
    std::vector<Tensor> ts;
    for (Var a : args) ts.push_back(values_[a.id]);
    return add(run_op1(p, std::move(ts), attrs));
  }
  Type type(Var v) const override { return values_[v.id].type(); }

 private:
  std::vector<Tensor> values_;
};

struct ConvCase {
  Shape x;  // (W, H, D, C, N)
  Shape k;  // (kw, kh, kd)
  int64_t cout;
  Conv3dAttrs a;

  int64_t out_dim(int d) const {
    return (x[d] + a.pad[2 * d] + a.pad[2 * d + 1] - a.dilation[d] * (k[d] - 1) - 1) / a.stride[d] +
           1;
  }
  Shape w_shape() const { return {k[0], k[1], k[2], x[3] / a.groups, cout}; }
  Shape y_shape() const { return {out_dim(0), out_dim(1), out_dim(2), cout, x[4]}; }
};

// Calls f(y_index, x_index, w_index) for every product w * x of the 3-d cross-correlation
// that reads x inside the volume (padding reads zero).
template <typename F>
void for_each_term(const ConvCase& c, F f) {
  Shape ys = c.y_shape(), ws = c.w_shape();
  int64_t cin_g = ws[3], cout_g = c.cout / c.a.groups;
  for (int64_t yi = 0; yi < num_elements(ys); ++yi) {
    std::vector<int64_t> o = unravel(ys, yi);
    for (int64_t wi = 0; wi < num_elements(ws); ++wi) {
      std::vector<int64_t> t = unravel(ws, wi);
      if (t[4] != o[3]) continue;
      std::vector<int64_t> at(5);
      bool inside = true;
      for (int d = 0; d < 3; ++d) {
        at[d] = o[d] * c.a.stride[d] + t[d] * c.a.dilation[d] - c.a.pad[2 * d];
        inside = inside && at[d] >= 0 && at[d] < c.x[d];
      }
      if (!inside) continue;
      at[3] = o[3] / cout_g * cin_g + t[3];
      at[4] = o[4];
      f(yi, ravel(c.x, at), wi);
    }
  }
}

std::vector<ConvCase> conv_cases() {
  std::vector<ConvCase> all;
  // Strided, padded unevenly, dilated in depth.
  all.push_back({{5, 4, 6, 2, 2}, {2, 3, 3}, 3, {{1, 2, 2}, {1, 0, 0, 1, 2, 1}, {1, 1, 2}, 1}});
  // Grouped, dilated in width, padded before the depth only.
  all.push_back({{7, 4, 5, 4, 1}, {3, 2, 2}, 4, {{2, 1, 1}, {0, 0, 1, 1, 1, 0}, {2, 1, 1}, 2}});
  // One depth tap with a depth stride of 3; depth positions no window reads (D = 7).
  all.push_back({{3, 3, 7, 3, 2}, {1, 2, 1}, 2, {{1, 1, 3}, {0, 0, 0, 0, 0, 0}, {1, 1, 1}, 1}});
  // A depth stride that leaves the last depth of the padded volume unread.
  all.push_back({{3, 2, 6, 1, 1}, {2, 2, 3}, 2, {{1, 1, 2}, {0, 1, 1, 0, 0, 0}, {1, 1, 1}, 1}});
  return all;
}

TEST_CASE("conv3d and its transpose against a naive 3-d convolution, f64") {
  uint64_t seed = 40;
  for (const ConvCase& c : conv_cases()) {
    CAPTURE(shape_str(c.x));
    Tensor x = random_tensor({DType::f64, c.x}, seed++);
    Tensor w = random_tensor({DType::f64, c.w_shape()}, seed++);
    Tensor dy = random_tensor({DType::f64, c.y_shape()}, seed++);
    std::vector<double> xv = to_doubles(x), wv = to_doubles(w), dyv = to_doubles(dy);
    std::vector<double> y(dyv.size()), dx(xv.size());
    for_each_term(c, [&](int64_t yi, int64_t xi, int64_t wi) {
      y[yi] += wv[wi] * xv[xi];
      dx[xi] += wv[wi] * dyv[yi];
    });
    TensorSink s;
    Var xs = s.add(x), ws = s.add(w), dys = s.add(dy);
    check_close(s[conv3d(s, xs, ws, c.a)], y, 1e-12, 1e-12);
    check_close(s[conv3d_backward_input(s, dys, ws, c.x, c.a)], dx, 1e-12, 1e-12);
  }
}

struct PoolCase {
  Shape x;
  Pool3dAttrs a;
};

// The naive pools: the max, and the sum over the window's size, of the elements of x in
// each window.
std::vector<double> naive_pool(const PoolCase& c, const std::vector<double>& x, bool max) {
  Shape ys = c.x;
  for (int d = 0; d < 3; ++d) {
    ys[d] = (c.x[d] + c.a.pad[2 * d] + c.a.pad[2 * d + 1] - c.a.window[d]) / c.a.stride[d] + 1;
  }
  int64_t size = c.a.window[0] * c.a.window[1] * c.a.window[2];
  std::vector<double> y(static_cast<size_t>(num_elements(ys)));
  for (int64_t yi = 0; yi < num_elements(ys); ++yi) {
    std::vector<int64_t> o = unravel(ys, yi);
    double acc = max ? -std::numeric_limits<double>::infinity() : 0.0;
    for (int64_t t = 0; t < size; ++t) {
      std::vector<int64_t> at = o;
      int64_t rest = t;
      bool inside = true;
      for (int d = 0; d < 3; ++d) {
        at[d] = o[d] * c.a.stride[d] + rest % c.a.window[d] - c.a.pad[2 * d];
        rest /= c.a.window[d];
        inside = inside && at[d] >= 0 && at[d] < c.x[d];
      }
      if (!inside) continue;
      double v = x[ravel(c.x, at)];
      acc = max ? std::max(acc, v) : acc + v;
    }
    y[yi] = max ? acc : acc / static_cast<double>(size);
  }
  return y;
}

TEST_CASE("max_pool3d and avg_pool3d against naive 3-d pooling, f64") {
  std::vector<PoolCase> cases{
      {{5, 6, 7, 2, 2}, {{2, 3, 2}, {2, 2, 3}, {1, 0, 1, 1, 1, 1}}},
      {{4, 3, 5, 3, 1}, {{3, 3, 3}, {1, 1, 1}, {1, 1, 1, 1, 1, 1}}},
      {{4, 4, 4, 1, 2}, {{2, 2, 2}, {2, 2, 2}, {0, 0, 0, 0, 0, 0}}},
      {{3, 4, 6, 2, 1}, {{1, 2, 4}, {1, 1, 1}, {0, 0, 0, 1, 2, 3}}},
  };
  uint64_t seed = 70;
  for (const PoolCase& c : cases) {
    CAPTURE(shape_str(c.x));
    Tensor x = random_tensor({DType::f64, c.x}, seed++);
    TensorSink s;
    Var xs = s.add(x);
    check_close(s[max_pool3d(s, xs, c.a)], naive_pool(c, to_doubles(x), true), 0, 0);
    check_close(s[avg_pool3d(s, xs, c.a)], naive_pool(c, to_doubles(x), false), 1e-14, 1e-14);
  }
}

std::string error_of(void (*f)(TensorSink&, Var)) {
  TensorSink s;
  Var x = s.add(random_tensor({DType::f64, {4, 4, 4, 2, 1}}, 1));
  try {
    f(s, x);
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

TEST_CASE("composed 3-d ops name themselves in errors, before emitting any op") {
  CHECK(error_of([](TensorSink& s, Var x) {
          conv3d(s, x, s.add(random_tensor({DType::f64, {2, 2, 2, 3, 1}}, 2)), {});
        }) ==
        "conv3d: w f64[2,2,2,3,1] (kw, kh, kd, cin/groups, cout) does not fit x "
        "f64[4,4,4,2,1] (W, H, D, C, N) in 1 groups");
  CHECK(error_of([](TensorSink& s, Var x) {
          conv3d(s, x, s.add(random_tensor({DType::f64, {2, 2, 5, 2, 1}}, 2)), {});
        }) ==
        "conv3d: the kernel of w f64[2,2,5,2,1] with dilation=[1,1,1] does not fit in x "
        "f64[4,4,4,2,1] with pad=[0,0,0,0,0,0] (along D)");
  CHECK(error_of([](TensorSink& s, Var x) {
          max_pool3d(s, x, {.window = {2, 2, 2}, .stride = {2, 2, 2}, .pad = {0, 0, 0, 0, 2, 0}});
        }) ==
        "max_pool3d: window=[2,2,2] and pad=[0,0,0,0,2,0] do not fit x f64[4,4,4,2,1] along D, "
        "or a pad is not smaller than the window");
  CHECK(
      error_of([](TensorSink& s, Var x) {
        avg_pool3d(s, s.add(random_tensor({DType::f64, {4, 4, 2, 1}}, 3)), {{2, 2, 2}, {1, 1, 1}});
        (void)x;
      }).find("avg_pool3d: x (W, H, D, C, N) must have rank 5") == 0);
}

}  // namespace

}  // namespace ytape
