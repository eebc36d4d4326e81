// Kernels of the norm family: training-mode batch normalization and its gradient.
//
// x is seen as (inner, C, outer): the channel dim is the second to last, inner is the
// product of the dims before it (W*H for images, 1 for (C, N)), outer the last dim. Each
// channel is one task that computes its statistics and then rewrites its elements while
// they are still in cache. Statistics accumulate in double, mean and variance in two
// passes, so that large images in f32 keep full precision.
#include <algorithm>
#include <cmath>

#include "runtime/kernels/dense.h"

namespace ytape {

namespace {

struct NormGeom {
  int64_t inner, channels, outer;
  int64_t per_channel() const { return inner * outer; }
  // The start of the contiguous run of channel c in slice n.
  int64_t row(int64_t c, int64_t n) const { return inner * (c + channels * n); }
};

NormGeom norm_geom(const Tensor& x) {
  int r = x.rank();
  NormGeom g{1, x.dim(r - 1), x.dim(r)};
  for (int d = 1; d <= r - 2; ++d) g.inner *= x.dim(d);
  return g;
}

// Row sums in eight independent double lanes: one accumulator would serialize on the add
// latency, and without -ffast-math the compiler may not reorder a sum into vector lanes.
constexpr int kLanes = 8;

template <typename T>
double sum_row(const T* x, int64_t n) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) lanes[l] += static_cast<double>(x[i + l]);
  }
  double s = 0;
  for (; i < n; ++i) s += static_cast<double>(x[i]);
  for (double l : lanes) s += l;
  return s;
}

// Σ (x - mean)^2.
template <typename T>
double sum_sq_dev_row(const T* x, int64_t n, double mean) {
  double lanes[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int l = 0; l < kLanes; ++l) {
      double d = static_cast<double>(x[i + l]) - mean;
      lanes[l] += d * d;
    }
  }
  double s = 0;
  for (; i < n; ++i) s += (static_cast<double>(x[i]) - mean) * (static_cast<double>(x[i]) - mean);
  for (double l : lanes) s += l;
  return s;
}

// Sums of dy and of dy * (x - mean) in one pass over a row. The terms add up in T in vector
// lanes over blocks of kBlock elements, and the blocks in double, so that each rounded
// partial sum has few terms.
constexpr int64_t kBlock = 512;

template <typename T>
void grad_sums_row(const T* dy, const T* x, int64_t n, T mean, double* sum_dy, double* sum_dy_dev) {
  using S = dense::Simd<T>;
  constexpr int w = S::kWidth, unroll = 4;  // independent accumulators hide the add latency
  for (int64_t begin = 0; begin < n; begin += kBlock) {
    int64_t end = std::min(n, begin + kBlock);
    typename S::Vec acc_dy[unroll] = {}, acc_dev[unroll] = {};
    int64_t i = begin;
    for (; i + unroll * w <= end; i += unroll * w) {
      for (int u = 0; u < unroll; ++u) {
        typename S::Vec g, v;
        S::load(g, dy + i + u * w);
        S::load(v, x + i + u * w);
        acc_dy[u] += g;
        acc_dev[u] += g * (v - mean);
      }
    }
    for (; i < end; ++i) {
      *sum_dy += static_cast<double>(dy[i]);
      *sum_dy_dev += static_cast<double>(dy[i] * (x[i] - mean));
    }
    for (int u = 0; u < unroll; ++u) {
      for (int l = 0; l < w; ++l) {
        *sum_dy += static_cast<double>(acc_dy[u][l]);
        *sum_dy_dev += static_cast<double>(acc_dev[u][l]);
      }
    }
  }
}

struct Stats {
  double mean, invstd;
};

template <typename T>
Stats channel_stats(const NormGeom& g, const T* x, int64_t c, double eps) {
  int64_t m = g.per_channel();
  double sum = 0;
  for (int64_t n = 0; n < g.outer; ++n) sum += sum_row(x + g.row(c, n), g.inner);
  double mean = m > 0 ? sum / static_cast<double>(m) : 0;
  double sq = 0;
  for (int64_t n = 0; n < g.outer; ++n) sq += sum_sq_dev_row(x + g.row(c, n), g.inner, mean);
  double var = m > 0 ? sq / static_cast<double>(m) : 0;
  return {mean, 1 / std::sqrt(var + eps)};
}

// y = (x - mean) * invstd * scale + bias, for batchnorm (mean, invstd null) and
// batchnorm_with_stats.
template <typename T>
void batchnorm_forward(const KernelCall& call, T* mean_out, T* invstd_out) {
  const Tensor& x = *call.args[0];
  const T* px = x.data<T>();
  const T* scale = call.args[1]->data<T>();
  const T* bias = call.args[2]->data<T>();
  T* py = call.outs[0]->data<T>();
  double eps = call.op.attrs.get_float("eps");
  NormGeom g = norm_geom(x);
  dense::parallel_work(g.channels, 3 * g.per_channel(), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      Stats s = channel_stats(g, px, c, eps);
      if (mean_out != nullptr) {
        mean_out[c] = static_cast<T>(s.mean);
        invstd_out[c] = static_cast<T>(s.invstd);
      }
      T alpha = static_cast<T>(s.invstd * static_cast<double>(scale[c]));
      T beta = static_cast<T>(static_cast<double>(bias[c]) - s.mean * alpha);
      for (int64_t n = 0; n < g.outer; ++n) {
        const T* xr = px + g.row(c, n);
        T* yr = py + g.row(c, n);
        for (int64_t i = 0; i < g.inner; ++i) yr[i] = xr[i] * alpha + beta;
      }
    }
  });
}

template <typename T>
void batchnorm(const KernelCall& call) {
  batchnorm_forward<T>(call, nullptr, nullptr);
}

template <typename T>
void batchnorm_with_stats(const KernelCall& call) {
  batchnorm_forward<T>(call, call.outs[1]->data<T>(), call.outs[2]->data<T>());
}

// dbias = Σ dy, dscale = Σ dy * xhat, and
// dx = scale * invstd * (dy - dbias/M - xhat * dscale/M), written as a*dy + b*(x-mean) + c.
template <typename T>
void batchnorm_backward(const KernelCall& call) {
  const T* dy = call.args[0]->data<T>();
  const Tensor& x = *call.args[1];
  const T* px = x.data<T>();
  const T* scale = call.args[2]->data<T>();
  const T* mean = call.args[3]->data<T>();
  const T* invstd = call.args[4]->data<T>();
  T* dx = call.outs[0]->data<T>();
  T* dscale = call.outs[1]->data<T>();
  T* dbias = call.outs[2]->data<T>();
  NormGeom g = norm_geom(x);
  double m = static_cast<double>(std::max<int64_t>(g.per_channel(), 1));
  dense::parallel_work(g.channels, 3 * g.per_channel(), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double is = invstd[c];
      double sum_dy = 0, sum_dy_dev = 0;
      for (int64_t n = 0; n < g.outer; ++n) {
        grad_sums_row(dy + g.row(c, n), px + g.row(c, n), g.inner, mean[c], &sum_dy, &sum_dy_dev);
      }
      double ds = sum_dy_dev * is;
      dbias[c] = static_cast<T>(sum_dy);
      dscale[c] = static_cast<T>(ds);
      double a = static_cast<double>(scale[c]) * is;
      T ta = static_cast<T>(a), tb = static_cast<T>(-a * is * ds / m);
      T tc = static_cast<T>(-a * sum_dy / m), tmu = mean[c];
      for (int64_t n = 0; n < g.outer; ++n) {
        const T* dyr = dy + g.row(c, n);
        const T* xr = px + g.row(c, n);
        T* dxr = dx + g.row(c, n);
        for (int64_t i = 0; i < g.inner; ++i) dxr[i] = ta * dyr[i] + tb * (xr[i] - tmu) + tc;
      }
    }
  });
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  // Each channel is read for its statistics before it is rewritten, so y may overwrite x.
  t.allow_in_place(Prim::batchnorm);
  using dense::float_kernel;
  t.set(Prim::batchnorm, float_kernel<batchnorm<float>, batchnorm<double>>);
  t.set(Prim::batchnorm_with_stats,
        float_kernel<batchnorm_with_stats<float>, batchnorm_with_stats<double>>);
  t.set(Prim::batchnorm_backward,
        float_kernel<batchnorm_backward<float>, batchnorm_backward<double>>);
}

}  // namespace ytape
