// Kernels of the norm family: training-mode batch normalization and its gradient.
//
// x is seen as (inner, C, outer): the channel dim is the second to last, inner is the
// product of the dims before it (W*H for images, 1 for (C, N)), outer the last dim. Each
// channel is one task that computes its statistics and then rewrites its elements while
// they are still in cache. Statistics accumulate in double, mean and variance in two
// passes, so that large images in f32 keep full precision. Channel-blocked images
// (Layout::c8, c16) take the blocked variants, which follow the same formulas.
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

// The cotangent batchnorm_backward sees: dy, or under Fusion::relu_mask_batchnorm_backward
// select(z > 0, g, 0) of (g, z) — the same bits the select kernel writes. Both are read
// before the choice, or the loops would not vectorize.
template <bool Masked, typename T>
T cotangent(const T* dy, const T* z, int64_t i) {
  if constexpr (Masked) {
    const T g = dy[i], m = z[i];
    return m > 0 ? g : T(0);
  } else {
    return dy[i];
  }
}

// The output of batch norm, or under Fusion::batchnorm_relu its relu, as Relu writes it
// (NaN and -0 pass), for one element or one vector: written as a select on a vector, or
// GCC turns the relu into a branch per element and leaves the loop scalar.
template <bool Relu, typename V>
V normalized(V x, V alpha, V beta) {
  V y = x * alpha + beta;
  if constexpr (Relu) {
    return y < 0 ? V{} : y;
  } else {
    return y;
  }
}

// y[i] = normalized(x[i], alpha, beta) over a row of n elements.
template <bool Relu, typename T>
void normalize_row(const T* x, T* y, int64_t n, T alpha, T beta) {
  using S = dense::Simd<T>;
  typename S::Vec va = S::splat(alpha), vb = S::splat(beta);
  int64_t i = 0;
  for (; i + S::kWidth <= n; i += S::kWidth) {
    typename S::Vec v;
    S::load(v, x + i);
    S::store(y + i, normalized<Relu>(v, va, vb));
  }
  for (; i < n; ++i) y[i] = normalized<Relu>(x[i], alpha, beta);
}

// Sums of dy and of dy * (x - mean) in one pass over a row. The terms add up in T in vector
// lanes over blocks of kBlock elements, and the blocks in double, so that each rounded
// partial sum has few terms.
constexpr int64_t kBlock = 512;

template <bool Masked, typename T>
void grad_sums_row(const T* dy, const T* z, const T* x, int64_t n, T mean, double* sum_dy,
                   double* sum_dy_dev) {
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
        if constexpr (Masked) {
          typename S::Vec m;
          S::load(m, z + i + u * w);
          g = m > T(0) ? g : typename S::Vec{};
        }
        acc_dy[u] += g;
        acc_dev[u] += g * (v - mean);
      }
    }
    for (; i < end; ++i) {
      T g = cotangent<Masked>(dy, z, i);
      *sum_dy += static_cast<double>(g);
      *sum_dy_dev += static_cast<double>(g * (x[i] - mean));
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

// Images in a blocked layout of B channels (runtime/layout.h): each block is a task, and
// its statistics accumulate in B double lanes, one per channel, over the block's planes of
// every image: element (p, lane) of image n is at B * (p + P * (block + blocks * n)) + lane.
template <int64_t B>
struct BlockedGeom {
  int64_t plane, blocks, images;
  int64_t per_channel() const { return plane * images; }
  int64_t base(int64_t block, int64_t n) const { return B * plane * (block + blocks * n); }
};

template <int64_t B>
BlockedGeom<B> blocked_geom(const Tensor& x) {
  return {x.dim(1) * x.dim(2), x.dim(3) / B, x.dim(4)};
}

// The blocked kernels' sums add up in T over runs of kRun pixels, then in double, as the
// plain kernels' rows do: few terms per rounded partial sum, and loops over the B lanes that
// the compiler turns into vector adds.
constexpr int64_t kRun = 64;

// Calls f(i, lane) for every element of channel block `b`, in memory order.
template <int64_t B, typename F>
void for_block(const BlockedGeom<B>& g, int64_t b, F f) {
  for (int64_t n = 0; n < g.images; ++n) {
    int64_t base = g.base(b, n);
    for (int64_t p = 0; p < g.plane; ++p) {
#pragma GCC unroll 1  // vectorized, not unrolled: see max_pool_blocked_row in pool.cc
      for (int64_t l = 0; l < B; ++l) f(base + p * B + l, l);
    }
  }
}

// out[lane] += Σ term(x, lane) over the elements of channel block `b`.
template <int64_t B, typename T, typename Term>
void block_sums(const BlockedGeom<B>& g, const T* x, int64_t b, double* out, Term term) {
  for (int64_t n = 0; n < g.images; ++n) {
    const T* row = x + g.base(b, n);
    for (int64_t p0 = 0; p0 < g.plane; p0 += kRun) {
      T acc[B] = {};
      for (int64_t p = p0; p < std::min(g.plane, p0 + kRun); ++p) {
#pragma GCC unroll 1  // vectorized, not unrolled: see max_pool_blocked_row in pool.cc
        for (int64_t l = 0; l < B; ++l) acc[l] += term(row[p * B + l], l);
      }
      for (int64_t l = 0; l < B; ++l) out[l] += static_cast<double>(acc[l]);
    }
  }
}

// y = normalized(x, alpha[lane], beta[lane]) over channel block `b`, a vector of lanes at a
// time (B is a multiple of the vector width).
template <bool Relu, int64_t B, typename T>
void normalize_block(const BlockedGeom<B>& g, int64_t b, const T* x, T* y, const T* alpha,
                     const T* beta) {
  using S = dense::Simd<T>;
  constexpr int64_t kVecs = B / S::kWidth;
  static_assert(kVecs * S::kWidth == B);
  typename S::Vec va[kVecs], vb[kVecs];
  for (int64_t v = 0; v < kVecs; ++v) {
    S::load(va[v], alpha + v * S::kWidth);
    S::load(vb[v], beta + v * S::kWidth);
  }
  for (int64_t n = 0; n < g.images; ++n) {
    int64_t base = g.base(b, n);
    for (int64_t p = 0; p < g.plane; ++p) {
      for (int64_t v = 0; v < kVecs; ++v) {
        int64_t i = base + p * B + v * S::kWidth;
        typename S::Vec xv;
        S::load(xv, x + i);
        S::store(y + i, normalized<Relu>(xv, va[v], vb[v]));
      }
    }
  }
}

// The eps of batchnorm or batchnorm_with_stats, whose forward kernels are one.
double batchnorm_eps(const Op& op) {
  return op.prim == Prim::batchnorm ? attrs_of<Prim::batchnorm>(op.attrs).eps
                                    : attrs_of<Prim::batchnorm_with_stats>(op.attrs).eps;
}

template <bool Relu, int64_t B, typename T>
void batchnorm_forward_blocked(const KernelCall& call, T* mean_out, T* invstd_out) {
  const T* x = call.args[0]->data<T>();
  const T* scale = call.args[1]->data<T>();
  const T* bias = call.args[2]->data<T>();
  T* y = call.outs[0]->data<T>();
  double eps = batchnorm_eps(call.op);
  BlockedGeom<B> g = blocked_geom<B>(*call.args[0]);
  double m = static_cast<double>(g.per_channel());
  int64_t work = 3 * B * g.per_channel();
  dense::parallel_work(g.blocks, work, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      double sum[B] = {}, sq[B] = {}, mean[B];
      block_sums(g, x, b, sum, [](T v, int64_t) { return v; });
      T mu[B];
      for (int64_t l = 0; l < B; ++l) {
        mean[l] = m > 0 ? sum[l] / m : 0;
        mu[l] = static_cast<T>(mean[l]);
      }
      block_sums(g, x, b, sq, [&](T v, int64_t l) { return (v - mu[l]) * (v - mu[l]); });
      T alpha[B], beta[B];
      for (int64_t l = 0; l < B; ++l) {
        int64_t c = b * B + l;
        double invstd = 1 / std::sqrt((m > 0 ? sq[l] / m : 0) + eps);
        if (mean_out != nullptr) {
          mean_out[c] = static_cast<T>(mean[l]);
          invstd_out[c] = static_cast<T>(invstd);
        }
        alpha[l] = static_cast<T>(invstd * static_cast<double>(scale[c]));
        beta[l] = static_cast<T>(static_cast<double>(bias[c]) - mean[l] * alpha[l]);
      }
      normalize_block<Relu>(g, b, x, y, alpha, beta);
    }
  });
}

// y = (x - mean) * invstd * scale + bias, for batchnorm (mean, invstd null) and
// batchnorm_with_stats; relu(y) under Fusion::batchnorm_relu.
template <bool Relu, typename T>
void batchnorm_forward(const KernelCall& call, T* mean_out, T* invstd_out) {
  if (call.arg_layout(0) == Layout::c8) {
    return batchnorm_forward_blocked<Relu, 8>(call, mean_out, invstd_out);
  }
  if (call.arg_layout(0) == Layout::c16) {
    return batchnorm_forward_blocked<Relu, 16>(call, mean_out, invstd_out);
  }
  const Tensor& x = *call.args[0];
  const T* px = x.data<T>();
  const T* scale = call.args[1]->data<T>();
  const T* bias = call.args[2]->data<T>();
  T* py = call.outs[0]->data<T>();
  double eps = batchnorm_eps(call.op);
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
        normalize_row<Relu>(xr, yr, g.inner, alpha, beta);
      }
    }
  });
}

template <typename T>
void batchnorm(const KernelCall& call) {
  batchnorm_forward<false, T>(call, nullptr, nullptr);
}

template <typename T>
void batchnorm_with_stats(const KernelCall& call) {
  batchnorm_forward<false, T>(call, call.outs[1]->data<T>(), call.outs[2]->data<T>());
}

// Fusion::batchnorm_relu, of batchnorm (one output) or batchnorm_with_stats (three).
template <typename T>
void batchnorm_relu(const KernelCall& call) {
  bool stats = call.outs.size() == 3;
  batchnorm_forward<true, T>(call, stats ? call.outs[1]->data<T>() : nullptr,
                             stats ? call.outs[2]->data<T>() : nullptr);
}

// The tensors of batchnorm_backward: (dy, x, scale, mean, invstd) -> (dx, dscale, dbias);
// under Fusion::relu_mask_batchnorm_backward, dy is g and z follows.
template <typename T>
struct GradTensors {
  const T *dy, *x, *scale, *mean, *invstd, *z;
  T *dx, *dscale, *dbias;
  explicit GradTensors(const KernelCall& call)
      : dy(call.args[0]->data<T>()),
        x(call.args[1]->data<T>()),
        scale(call.args[2]->data<T>()),
        mean(call.args[3]->data<T>()),
        invstd(call.args[4]->data<T>()),
        z(call.args.size() > 5 ? call.args[5]->data<T>() : nullptr),
        dx(call.outs[0]->data<T>()),
        dscale(call.outs[1]->data<T>()),
        dbias(call.outs[2]->data<T>()) {}
};

template <bool Masked, int64_t B, typename T>
void batchnorm_backward_blocked(const KernelCall& call) {
  // Plain names, not a structured binding: Clang before 16 cannot capture those in lambdas.
  GradTensors<T> t(call);
  const T *dy = t.dy, *x = t.x, *scale = t.scale, *mean = t.mean, *invstd = t.invstd, *z = t.z;
  T *dx = t.dx, *dscale = t.dscale, *dbias = t.dbias;
  BlockedGeom<B> g = blocked_geom<B>(*call.args[1]);
  double m = static_cast<double>(std::max<int64_t>(g.per_channel(), 1));
  int64_t work = 3 * B * g.per_channel();
  dense::parallel_work(g.blocks, work, [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const T* mu = mean + b * B;
      double sum_dy[B] = {}, sum_dy_dev[B] = {};
      for (int64_t n = 0; n < g.images; ++n) {
        int64_t base = g.base(b, n);
        for (int64_t p0 = 0; p0 < g.plane; p0 += kRun) {
          T acc_dy[B] = {}, acc_dev[B] = {};
          for (int64_t p = p0; p < std::min(g.plane, p0 + kRun); ++p) {
#pragma GCC unroll 1  // vectorized, not unrolled: see max_pool_blocked_row in pool.cc
            for (int64_t l = 0; l < B; ++l) {
              int64_t i = base + p * B + l;
              T d = cotangent<Masked>(dy, z, i);
              acc_dy[l] += d;
              acc_dev[l] += d * (x[i] - mu[l]);
            }
          }
          for (int64_t l = 0; l < B; ++l) {
            sum_dy[l] += static_cast<double>(acc_dy[l]);
            sum_dy_dev[l] += static_cast<double>(acc_dev[l]);
          }
        }
      }
      T ta[B], tb[B], tc[B];
      for (int64_t l = 0; l < B; ++l) {
        int64_t c = b * B + l;
        double is = invstd[c], ds = sum_dy_dev[l] * is, a = static_cast<double>(scale[c]) * is;
        dbias[c] = static_cast<T>(sum_dy[l]);
        dscale[c] = static_cast<T>(ds);
        ta[l] = static_cast<T>(a);
        tb[l] = static_cast<T>(-a * is * ds / m);
        tc[l] = static_cast<T>(-a * sum_dy[l] / m);
      }
      for_block(g, b, [&](int64_t i, int64_t l) {
        dx[i] = ta[l] * cotangent<Masked>(dy, z, i) + tb[l] * (x[i] - mu[l]) + tc[l];
      });
    }
  });
}

// dbias = Σ dy, dscale = Σ dy * xhat, and
// dx = scale * invstd * (dy - dbias/M - xhat * dscale/M), written as a*dy + b*(x-mean) + c.
template <bool Masked, typename T>
void batchnorm_backward_any(const KernelCall& call) {
  if (call.arg_layout(1) == Layout::c8) return batchnorm_backward_blocked<Masked, 8, T>(call);
  if (call.arg_layout(1) == Layout::c16) return batchnorm_backward_blocked<Masked, 16, T>(call);
  GradTensors<T> t(call);
  const T *dy = t.dy, *px = t.x, *scale = t.scale, *mean = t.mean, *invstd = t.invstd, *z = t.z;
  T *dx = t.dx, *dscale = t.dscale, *dbias = t.dbias;
  NormGeom g = norm_geom(*call.args[1]);
  double m = static_cast<double>(std::max<int64_t>(g.per_channel(), 1));
  dense::parallel_work(g.channels, 3 * g.per_channel(), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      double is = invstd[c];
      double sum_dy = 0, sum_dy_dev = 0;
      for (int64_t n = 0; n < g.outer; ++n) {
        int64_t r = g.row(c, n);
        grad_sums_row<Masked>(dy + r, Masked ? z + r : nullptr, px + r, g.inner, mean[c], &sum_dy,
                              &sum_dy_dev);
      }
      double ds = sum_dy_dev * is;
      dbias[c] = static_cast<T>(sum_dy);
      dscale[c] = static_cast<T>(ds);
      double a = static_cast<double>(scale[c]) * is;
      T ta = static_cast<T>(a), tb = static_cast<T>(-a * is * ds / m);
      T tc = static_cast<T>(-a * sum_dy / m), tmu = mean[c];
      for (int64_t n = 0; n < g.outer; ++n) {
        int64_t r = g.row(c, n);
        const T* dyr = dy + r;
        const T* zr = Masked ? z + r : nullptr;
        const T* xr = px + r;
        T* dxr = dx + r;
        for (int64_t i = 0; i < g.inner; ++i) {
          dxr[i] = ta * cotangent<Masked>(dyr, zr, i) + tb * (xr[i] - tmu) + tc;
        }
      }
    }
  });
}

template <typename T>
void batchnorm_backward(const KernelCall& call) {
  batchnorm_backward_any<false, T>(call);
}

template <typename T>
void relu_mask_batchnorm_backward(const KernelCall& call) {
  batchnorm_backward_any<true, T>(call);
}

}  // namespace

void register_norm_kernels(KernelTable& t) {
  // Each channel is read for its statistics before it is rewritten, so y may overwrite x,
  // and dx any of dy, x (and z): each element is read before it is written.
  t.allow_in_place(Prim::batchnorm);
  t.allow_in_place(Prim::batchnorm_backward);
  using dense::float_kernel;
  if (t.kernels_set == KernelSet::fast) {
    t.allow_blocked(Prim::batchnorm, 0b1, BlockedOut::follow);
    t.allow_blocked(Prim::batchnorm_with_stats, 0b1, BlockedOut::follow);
    t.allow_blocked(Prim::batchnorm_backward, 0b11, BlockedOut::follow);
    // The fused kernels: the tensors of FusedGroup (runtime/fusion.h).
    t.set(Fusion::batchnorm_relu, float_kernel<batchnorm_relu<float>, batchnorm_relu<double>>);
    t.allow_in_place(Fusion::batchnorm_relu);
    t.allow_blocked(Fusion::batchnorm_relu, 0b1, BlockedOut::follow);
    t.set(Fusion::relu_mask_batchnorm_backward,
          float_kernel<relu_mask_batchnorm_backward<float>, relu_mask_batchnorm_backward<double>>);
    t.allow_in_place(Fusion::relu_mask_batchnorm_backward);
    t.allow_blocked(Fusion::relu_mask_batchnorm_backward, 0b100011, BlockedOut::follow);
  }
  t.set(Prim::batchnorm, float_kernel<batchnorm<float>, batchnorm<double>>);
  t.set(Prim::batchnorm_with_stats,
        float_kernel<batchnorm_with_stats<float>, batchnorm_with_stats<double>>);
  t.set(Prim::batchnorm_backward,
        float_kernel<batchnorm_backward<float>, batchnorm_backward<double>>);
}

}  // namespace ytape
