// Kernels of the pool family: max and average pooling over the (W, H) planes of WHCN
// images and their gradients. Planes are independent, so every kernel runs them in
// parallel. The shape rule guarantees that every window holds at least one pixel. Every
// kernel visits only the part of a window that lies in the image, so that its work is at
// most outputs x min(window, image) along each axis whatever the window and padding (a
// window of 2^30 columns padded by 2^30 - 1 over 4 columns took hours; issue #42), as
// tape/cost.h counts it.
#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <span>
#include <type_traits>
#include <vector>

#include "runtime/kernels/dense.h"

namespace ytape {

namespace {

using dense::Span1;
using dense::valid_outputs;

struct PoolGeom {
  int64_t in_w, in_h, planes;  // planes = C * N
  int64_t out_w, out_h;
  int64_t win_w, win_h, stride_w, stride_h, pad_w, pad_h;  // pads: the low sides

  int64_t in_plane() const { return in_w * in_h; }
  int64_t out_plane() const { return out_w * out_h; }
  // The input columns of window column ow, clipped to the image.
  Span1 cols(int64_t ow) const {
    int64_t start = ow * stride_w - pad_w;
    return {std::max<int64_t>(start, 0), std::min(start + win_w, in_w)};
  }
  Span1 rows(int64_t oh) const {
    int64_t start = oh * stride_h - pad_h;
    return {std::max<int64_t>(start, 0), std::min(start + win_h, in_h)};
  }
  // The window columns that the window of some output column reads inside the image, as
  // increasing runs [lo, hi): at most out_w * min(win_w, in_w) columns in all.
  std::vector<Span1> read_columns() const {
    std::vector<Span1> runs;
    for (int64_t ow = out_w; ow-- > 0;) {     // windows from the rightmost: columns rise
      int64_t first = pad_w - ow * stride_w;  // the column that reads input column 0
      int64_t lo = std::max<int64_t>(first, 0), hi = std::min(win_w, first + in_w);
      if (!runs.empty() && lo <= runs.back().hi) {
        runs.back().hi = std::max(runs.back().hi, hi);
      } else if (lo < hi) {
        runs.push_back({lo, hi});
      }
    }
    return runs;
  }
  // The input pixels `rows` output rows read at most, for the threads' grain.
  int64_t reads(int64_t rows) const {
    double work = static_cast<double>(rows) * static_cast<double>(out_w) *
                  static_cast<double>(std::min(win_w, in_w)) *
                  static_cast<double>(std::min(win_h, in_h));
    return work < 1e18 ? static_cast<int64_t>(work) : int64_t{1} << 60;
  }
  // 1 / the window's size (padding counts as zeros in an average).
  template <typename T>
  T inverse_area() const {
    return T(1) / static_cast<T>(static_cast<double>(win_w) * static_cast<double>(win_h));
  }
};

// x is the unpooled tensor, y the pooled one; `attrs` are those of any pooling op that has
// a window.
template <class PoolAttrs>
PoolGeom pool_geom(const PoolAttrs& attrs, const Tensor& x, const Tensor& y) {
  const std::vector<int64_t>& window = attrs.window;
  const std::vector<int64_t>& stride = attrs.stride;
  const std::vector<int64_t>& pad = attrs.pad;
  PoolGeom g{};
  g.in_w = x.dim(1), g.in_h = x.dim(2), g.planes = x.dim(3) * x.dim(4);
  g.out_w = y.dim(1), g.out_h = y.dim(2);
  g.win_w = window[0], g.win_h = window[1];
  g.stride_w = stride[0], g.stride_h = stride[1];
  g.pad_w = pad[0], g.pad_h = pad[2];
  return g;
}

PoolGeom pool_geom(const Op& op, const Tensor& x, const Tensor& y) {
  switch (op.prim) {
    case Prim::max_pool2d:
      return pool_geom(attrs_of<Prim::max_pool2d>(op.attrs), x, y);
    case Prim::max_pool2d_with_indices:
      return pool_geom(attrs_of<Prim::max_pool2d_with_indices>(op.attrs), x, y);
    case Prim::avg_pool2d:
      return pool_geom(attrs_of<Prim::avg_pool2d>(op.attrs), x, y);
    case Prim::avg_pool2d_backward:
      return pool_geom(attrs_of<Prim::avg_pool2d_backward>(op.attrs), x, y);
    default:
      internal_error("{} has no pooling window", prim_name(op.prim));
  }
}

// One output row of one plane, computed tap by tap: each tap of the window updates the
// running maximum of every output that reads it inside the image (window columns in
// `columns`, PoolGeom::read_columns). Taps come in column-major window order and a strict >
// keeps the first maximum; a NaN beats every number and the first NaN every later one, as
// in PyTorch. `tap` receives the position in the plane of each output's winning tap (the
// window's first in column-major order, as the position rises with it). Running a tap over
// a whole row lets the updates go lane-parallel and branch-free, where a scan window by
// window mispredicts a branch on every new maximum; taps share vector lanes with the
// values where Tap is as wide (Simd<T>::Int).
template <typename T, typename Tap>
void max_pool_row(const PoolGeom& g, std::span<const Span1> columns, const T* x, int64_t oh,
                  T* best, Tap* tap) {
  using S = dense::Simd<T>;
  constexpr int width = S::kWidth;
  std::fill(best, best + g.out_w, -std::numeric_limits<T>::infinity());
  std::fill(tap, tap + g.out_w, Tap(-1));
  // Lane l reads l strides past lane 0, wherever a vector of outputs lies in the image.
  typename S::IntVec lanes{};
  for (int l = 0; l < width && (width - 1) * g.stride_w < g.in_w; ++l) {
    lanes[l] = static_cast<Tap>(l * g.stride_w);
  }
  Span1 hs = g.rows(oh);
  for (int64_t h = hs.lo; h < hs.hi; ++h) {
    const T* row = x + h * g.in_w;
    for (Span1 run : columns) {
      for (int64_t i = run.lo; i < run.hi; ++i) {
        int64_t offset = i - g.pad_w;
        Span1 ws = valid_outputs(g.in_w, g.out_w, g.stride_w, offset);
        int64_t ow = ws.lo;
        if constexpr (std::is_same_v<Tap, typename S::Int>) {
          for (; ow + width <= ws.hi; ow += width) {
            typename S::Vec v, b;
            typename S::IntVec k;
            for (int l = 0; l < width; ++l) v[l] = row[(ow + l) * g.stride_w + offset];
            typename S::IntVec t = lanes + static_cast<Tap>(h * g.in_w + ow * g.stride_w + offset);
            S::load(b, best + ow);
            S::load(k, tap + ow);
            auto take = (k < 0) | (v > b) | ((v != v) & (b == b));
            S::store(best + ow, take ? v : b);
            S::store(tap + ow, take ? t : k);
          }
        }
        for (; ow < ws.hi; ++ow) {
          int64_t w = ow * g.stride_w + offset;
          T v = row[w];
          if (tap[ow] < 0 || v > best[ow] || (std::isnan(v) && !std::isnan(best[ow]))) {
            best[ow] = v;
            tap[ow] = static_cast<Tap>(h * g.in_w + w);
          }
        }
      }
    }
  }
}

// Windows side by side inside the image (stride = window, no padding before, as
// MaxPool((2, 2))): every window is whole, so its first tap starts the maximum and the taps
// run in the same order with the same rule as max_pool_row, with no clipping. Small planes
// (an 8x8 image pooled to 4x4) take this path 5x faster than the row kernel, whose vector
// lanes want rows of 16 outputs.
bool tiles(const PoolGeom& g) {
  return g.pad_w == 0 && g.pad_h == 0 && g.stride_w == g.win_w && g.stride_h == g.win_h &&
         g.out_w * g.win_w <= g.in_w && g.out_h * g.win_h <= g.in_h;
}

// Outputs [k0, k0 + n) of the flattened output (output rows one after the other), n at
// most kTileChunk: each tap of the window is gathered for all of them, then taken where it
// beats the running maximum lane by lane (vector compares and selects: random maxima would
// mispredict a branch on every other tap). Taps are positions in the plane, 32-bit.
constexpr int64_t kTileChunk = 256;

template <typename T>
void max_pool_tiled(const PoolGeom& g, const T* x, int64_t k0, int64_t n, T* best, int32_t* tap) {
  using S = dense::Simd<T>;
  using I = typename S::Int;
  alignas(64) int64_t at[kTileChunk];  // per output: its window's first pixel in x
  alignas(64) I pos[kTileChunk];       // per output: that pixel's position in its plane
  alignas(64) T v[kTileChunk];
  alignas(64) I t[kTileChunk];
  int64_t r = k0 / g.out_w, ow = k0 % g.out_w;  // counted on, not divided per output
  int64_t plane = r / g.out_h, oh = r % g.out_h;
  for (int64_t k = 0; k < n; ++k) {
    int64_t p = oh * g.win_h * g.in_w + ow * g.win_w;
    at[k] = plane * g.in_plane() + p;
    pos[k] = static_cast<I>(p);
    best[k] = x[at[k]];
    t[k] = pos[k];
    if (++ow == g.out_w) {
      ow = 0;
      if (++oh == g.out_h) oh = 0, ++plane;
    }
  }
  for (int64_t j = 0; j < g.win_h; ++j) {
    for (int64_t i = j == 0 ? 1 : 0; i < g.win_w; ++i) {
      const int64_t d = j * g.in_w + i;
      for (int64_t k = 0; k < n; ++k) v[k] = x[at[k] + d];
      const auto dv = static_cast<I>(d);
      int64_t k = 0;
      if constexpr (sizeof(I) == sizeof(T)) {
        for (; k + S::kWidth <= n; k += S::kWidth) {
          typename S::Vec a, b;
          typename S::IntVec p, c;
          S::load(a, v + k), S::load(b, best + k), S::load(p, pos + k), S::load(c, t + k);
          auto take = (a > b) | ((a != a) & (b == b));
          S::store(best + k, take ? a : b);
          S::store(t + k, take ? p + dv : c);
        }
      }
      for (; k < n; ++k) {
        bool take = v[k] > best[k] || (v[k] != v[k] && best[k] == best[k]);
        best[k] = take ? v[k] : best[k];
        t[k] = take ? pos[k] + dv : t[k];
      }
    }
  }
  for (int64_t k = 0; k < n; ++k) tap[k] = static_cast<int32_t>(t[k]);
}

// With Tap as wide as T's lanes where the plane's positions fit it (f32 planes under 2^31
// pixels), else 64-bit taps without the lanes.
template <typename T, typename Tap = typename dense::Simd<T>::Int>
void max_pool(const KernelCall& call, bool with_indices) {
  const Tensor& x = *call.args[0];
  PoolGeom g = pool_geom(call.op, x, *call.outs[0]);
  if (tiles(g) && g.in_plane() <= std::numeric_limits<int32_t>::max()) {
    const T* px = x.data<T>();
    T* py = call.outs[0]->data<T>();
    int64_t* pidx = with_indices ? call.outs[1]->data<int64_t>() : nullptr;
    int64_t chunks = (g.planes * g.out_plane() + kTileChunk - 1) / kTileChunk;
    dense::parallel_work(chunks, kTileChunk * g.win_w * g.win_h, [&](int64_t b, int64_t e) {
      int32_t taps[kTileChunk];
      for (int64_t c = b; c < e; ++c) {
        int64_t k0 = c * kTileChunk, n = std::min(kTileChunk, g.planes * g.out_plane() - k0);
        max_pool_tiled<T>(g, px, k0, n, py + k0, taps);
        if (pidx == nullptr) continue;
        for (int64_t k = 0; k < n; ++k) pidx[k0 + k] = taps[k] + 1;
      }
    });
    return;
  }
  const std::vector<Span1> columns = g.read_columns();
  const T* px = x.data<T>();
  T* py = call.outs[0]->data<T>();
  int64_t* pidx = with_indices ? call.outs[1]->data<int64_t>() : nullptr;
  dense::parallel_work(g.planes * g.out_h, g.reads(1), [&](int64_t b, int64_t e) {
    std::vector<Tap> taps(static_cast<size_t>(g.out_w));
    for (int64_t r = b; r < e; ++r) {
      int64_t c = r / g.out_h, oh = r % g.out_h;
      max_pool_row<T, Tap>(g, columns, px + c * g.in_plane(), oh, py + r * g.out_w, taps.data());
      if (pidx == nullptr) continue;
      for (int64_t ow = 0; ow < g.out_w; ++ow) pidx[r * g.out_w + ow] = taps[ow] + 1;
    }
  });
}

// Channel-blocked f32 images (Layout::c8, c16): the B channels of a pixel are one vector
// (or a few at SSE's width), so a window is a run of vector maxima, in the plain kernel's
// tap order and with its rule for ties and NaN, giving the same values and indices.
// Compiled for AVX-512, AVX2 and the baseline, chosen when the program loads. GCC unrolls
// a loop over 8 lanes whole before its vectorizer sees it, which leaves a compare and a
// branch per lane (5x slower than 16 lanes on random data): `#pragma GCC unroll 1` keeps
// each loop over the lanes a loop, which the vectorizer takes.
//
// Output row `oh` of one (channel block, image): `x` and `y` point at its input and output
// planes, and `taps` receives the position in the plane of each output's winning tap.
template <int64_t B>
[[gnu::always_inline]] inline void max_pool_blocked_row(const PoolGeom& g, const float* x,
                                                        int64_t oh, float* y, int32_t* taps) {
  Span1 hs = g.rows(oh);
  for (int64_t ow = 0; ow < g.out_w; ++ow) {
    Span1 ws = g.cols(ow);
    // Every window holds a pixel (the shape rule): its first tap sets best and tap.
    float* best = y + (oh * g.out_w + ow) * B;
    int32_t* tap = taps + ow * B;
#pragma GCC unroll 1
    for (int64_t l = 0; l < B; ++l) {
      best[l] = x[(hs.lo * g.in_w + ws.lo) * B + l];
      tap[l] = static_cast<int32_t>(hs.lo * g.in_w + ws.lo);
    }
    for (int64_t h = hs.lo; h < hs.hi; ++h) {
      for (int64_t w = h == hs.lo ? ws.lo + 1 : ws.lo; w < ws.hi; ++w) {
        const float* pixel = x + (h * g.in_w + w) * B;
        auto t = static_cast<int32_t>(h * g.in_w + w);
#pragma GCC unroll 1
        for (int64_t l = 0; l < B; ++l) {
          float v = pixel[l], b = best[l];
          bool take = v > b || (v != v && b == b);
          best[l] = take ? v : b;
          tap[l] = take ? t : tap[l];
        }
      }
    }
  }
}

__attribute__((target_clones("avx512f", "avx2", "default"))) void max_pool_row8(
    const PoolGeom& g, const float* x, int64_t oh, float* y, int32_t* taps) {
  max_pool_blocked_row<8>(g, x, oh, y, taps);
}
__attribute__((target_clones("avx512f", "avx2", "default"))) void max_pool_row16(
    const PoolGeom& g, const float* x, int64_t oh, float* y, int32_t* taps) {
  max_pool_blocked_row<16>(g, x, oh, y, taps);
}

// Planes whose positions do not fit the taps' 32 bits (2^31 pixels and more) go through the
// plain kernel, on plain copies.
void max_pool_via_plain(const KernelCall& call, bool with_indices) {
  Tensor x = Tensor::uninitialized(call.args[0]->type());
  Tensor y = Tensor::uninitialized(call.outs[0]->type());
  relayout(*call.args[0], call.arg_layout(0), x, Layout::plain);
  const Tensor* args[] = {&x};
  Tensor* outs[] = {&y, with_indices ? call.outs[1] : nullptr};
  KernelCall plain{call.op, args, {outs, with_indices ? 2u : 1u}};
  max_pool<float, int64_t>(plain, with_indices);
  relayout(y, Layout::plain, *call.outs[0], call.out_layout(0));
}

// Indices stay plain (they are i64, which no blocked kernel reads): within-plane and
// 1-based as the plain kernel writes them.
template <int64_t B>
void max_pool_blocked(const KernelCall& call, bool with_indices) {
  auto* pool_row = B == 8 ? max_pool_row8 : max_pool_row16;
  const Tensor& x = *call.args[0];
  PoolGeom g = pool_geom(call.op, x, *call.outs[0]);
  if (g.in_plane() > std::numeric_limits<int32_t>::max()) {
    return max_pool_via_plain(call, with_indices);
  }
  int64_t blocks = x.dim(3) / B;
  const float* px = x.data<float>();
  float* py = call.outs[0]->data<float>();
  int64_t* pidx = with_indices ? call.outs[1]->data<int64_t>() : nullptr;
  int64_t rows = blocks * x.dim(4) * g.out_h;
  dense::parallel_work(rows, g.reads(B), [&](int64_t b, int64_t e) {
    std::vector<int32_t> taps(static_cast<size_t>(g.out_w * B));
    for (int64_t r = b; r < e; ++r) {
      int64_t plane = r / g.out_h, oh = r % g.out_h;  // plane: a (block, image) pair
      pool_row(g, px + plane * g.in_plane() * B, oh, py + plane * g.out_plane() * B, taps.data());
      if (pidx == nullptr) continue;
      int64_t* row = pidx + (plane * B * g.out_h + oh) * g.out_w;
      for (int64_t ow = 0; ow < g.out_w; ++ow) {
#pragma GCC unroll 1
        for (int64_t l = 0; l < B; ++l) {
          row[l * g.out_plane() + ow] = taps[static_cast<size_t>(ow * B + l)] + 1;  // channel l
        }
      }
    }
  });
}

template <typename T>
void max_pool2d(const KernelCall& call) {
  if (call.arg_layout(0) == Layout::c8) return max_pool_blocked<8>(call, false);
  if (call.arg_layout(0) == Layout::c16) return max_pool_blocked<16>(call, false);
  max_pool<T>(call, false);
}

template <typename T>
void max_pool2d_with_indices(const KernelCall& call) {
  if (call.arg_layout(0) == Layout::c8) return max_pool_blocked<8>(call, true);
  if (call.arg_layout(0) == Layout::c16) return max_pool_blocked<16>(call, true);
  max_pool<T>(call, true);
}

[[noreturn]] void index_outside(int64_t index, const Tensor& dx) {
  user_error("max_pool2d_backward: index {} is outside the {}x{} plane", index, dx.dim(1),
             dx.dim(2));
}

// The blocked variant (dy and dx in a blocked layout of B channels, the indices plain) adds in the
// same order.
template <int64_t B>
void max_pool2d_backward_blocked(const KernelCall& call) {
  const Tensor& dy = *call.args[0];
  const Tensor& idx = *call.args[1];
  Tensor& dx = *call.outs[0];
  int64_t in_plane = dx.dim(1) * dx.dim(2), out_plane = dy.dim(1) * dy.dim(2);
  int64_t planes = dy.dim(3) / B * dy.dim(4);  // (block, image) pairs
  const float* pdy = dy.data<float>();
  const int64_t* pidx = idx.data<int64_t>();
  float* pdx = dx.data<float>();
  int64_t work = B * (in_plane + out_plane);
  dense::parallel_work(planes, work, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      float* plane = pdx + c * in_plane * B;
      const float* grad = pdy + c * out_plane * B;
      const int64_t* at = pidx + c * B * out_plane;
      std::fill(plane, plane + in_plane * B, 0.0f);
      for (int64_t o = 0; o < out_plane; ++o) {
        for (int64_t l = 0; l < B; ++l) {
          int64_t i = at[l * out_plane + o];
          if (static_cast<uint64_t>(i - 1) >= static_cast<uint64_t>(in_plane)) {
            index_outside(i, dx);
          }
          plane[(i - 1) * B + l] += grad[o * B + l];
        }
      }
    }
  });
}

// dx = 0, then each dy is added where its index points.
template <typename T>
void max_pool2d_backward(const KernelCall& call) {
  if (call.arg_layout(0) == Layout::c8) return max_pool2d_backward_blocked<8>(call);
  if (call.arg_layout(0) == Layout::c16) return max_pool2d_backward_blocked<16>(call);
  const Tensor& dy = *call.args[0];
  const Tensor& idx = *call.args[1];
  Tensor& dx = *call.outs[0];
  int64_t in_plane = dx.dim(1) * dx.dim(2), out_plane = dy.dim(1) * dy.dim(2);
  int64_t planes = dy.dim(3) * dy.dim(4);
  const T* pdy = dy.data<T>();
  const int64_t* pidx = idx.data<int64_t>();
  T* pdx = dx.data<T>();
  dense::parallel_work(planes, in_plane + out_plane, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      T* plane = pdx + c * in_plane;
      const T* grad = pdy + c * out_plane;
      const int64_t* at = pidx + c * out_plane;
      std::fill(plane, plane + in_plane, T(0));
      for (int64_t o = 0; o < out_plane; ++o) {
        // One unsigned compare checks both bounds of the 1-based index.
        if (static_cast<uint64_t>(at[o] - 1) >= static_cast<uint64_t>(in_plane)) {
          index_outside(at[o], dx);
        }
        plane[at[o] - 1] += grad[o];
      }
    }
  });
}

// Padding counts as zeros in the sum and in the divisor, so the divisor is the window size.
template <typename T>
void avg_pool2d(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  PoolGeom g = pool_geom(call.op, x, *call.outs[0]);
  const T* px = x.data<T>();
  T* py = call.outs[0]->data<T>();
  T scale = g.inverse_area<T>();
  dense::parallel_work(g.planes, g.reads(g.out_h), [&](int64_t b, int64_t e) {
    for (int64_t c = b; c < e; ++c) {
      const T* plane = px + c * g.in_plane();
      T* out = py + c * g.out_plane();
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        Span1 hs = g.rows(oh);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          Span1 ws = g.cols(ow);
          T sum = 0;
          for (int64_t h = hs.lo; h < hs.hi; ++h) {
            for (int64_t w = ws.lo; w < ws.hi; ++w) sum += plane[h * g.in_w + w];
          }
          out[oh * g.out_w + ow] = sum * scale;
        }
      }
    }
  });
}

// Each dy, divided by the window size, is spread over the window's real pixels.
template <typename T>
void avg_pool2d_backward(const KernelCall& call) {
  const Tensor& dy = *call.args[0];
  Tensor& dx = *call.outs[0];
  PoolGeom g = pool_geom(call.op, dx, dy);
  const T* pdy = dy.data<T>();
  T* pdx = dx.data<T>();
  T scale = g.inverse_area<T>();
  int64_t work = g.in_plane() + g.reads(g.out_h);
  dense::parallel_work(g.planes, work, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      const T* grad = pdy + c * g.out_plane();
      T* plane = pdx + c * g.in_plane();
      std::fill(plane, plane + g.in_plane(), T(0));
      for (int64_t oh = 0; oh < g.out_h; ++oh) {
        Span1 hs = g.rows(oh);
        for (int64_t ow = 0; ow < g.out_w; ++ow) {
          Span1 ws = g.cols(ow);
          T v = grad[oh * g.out_w + ow] * scale;
          for (int64_t h = hs.lo; h < hs.hi; ++h) {
            for (int64_t w = ws.lo; w < ws.hi; ++w) plane[h * g.in_w + w] += v;
          }
        }
      }
    }
  });
}

}  // namespace

void register_pool_kernels(KernelTable& t) {
  using dense::float_kernel;
  t.set(Prim::max_pool2d, float_kernel<max_pool2d<float>, max_pool2d<double>>);
  t.set(Prim::max_pool2d_with_indices,
        float_kernel<max_pool2d_with_indices<float>, max_pool2d_with_indices<double>>);
  t.set(Prim::max_pool2d_backward,
        float_kernel<max_pool2d_backward<float>, max_pool2d_backward<double>>);
  if (t.kernels_set == KernelSet::fast) {
    for (Prim p : {Prim::max_pool2d, Prim::max_pool2d_with_indices, Prim::max_pool2d_backward}) {
      t.allow_blocked(p, 0b1, BlockedOut::same);
    }
  }
  t.set(Prim::avg_pool2d, float_kernel<avg_pool2d<float>, avg_pool2d<double>>);
  t.set(Prim::avg_pool2d_backward,
        float_kernel<avg_pool2d_backward<float>, avg_pool2d_backward<double>>);
}

}  // namespace ytape
