// Kernels of the pool family: max and average pooling over the (W, H) planes of WHCN
// images and their gradients. Planes are independent, so every kernel runs them in
// parallel, one plane per task.
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>

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
};

// x is the unpooled tensor, y the pooled one.
PoolGeom pool_geom(const Attrs& attrs, const Tensor& x, const Tensor& y) {
  const std::vector<int64_t>& window = attrs.get_ints("window");
  const std::vector<int64_t>& stride = attrs.get_ints("stride");
  const std::vector<int64_t>& pad = attrs.get_ints("pad");
  PoolGeom g{};
  g.in_w = x.dim(1), g.in_h = x.dim(2), g.planes = x.dim(3) * x.dim(4);
  g.out_w = y.dim(1), g.out_h = y.dim(2);
  g.win_w = window[0], g.win_h = window[1];
  g.stride_w = stride[0], g.stride_h = stride[1];
  g.pad_w = pad[0], g.pad_h = pad[2];
  return g;
}

// One plane. The scan follows column-major window order and keeps the first maximum; a
// NaN beats every number, the first NaN every later one, as in PyTorch.
template <typename T>
void max_pool_plane(const PoolGeom& g, const T* x, T* y, int64_t* idx) {
  for (int64_t oh = 0; oh < g.out_h; ++oh) {
    Span1 hs = g.rows(oh);
    for (int64_t ow = 0; ow < g.out_w; ++ow) {
      Span1 ws = g.cols(ow);
      int64_t best_at = hs.lo * g.in_w + ws.lo;
      T best = x[best_at];
      for (int64_t h = hs.lo; h < hs.hi; ++h) {
        for (int64_t w = ws.lo; w < ws.hi; ++w) {
          T v = x[h * g.in_w + w];
          if (v > best || (std::isnan(v) && !std::isnan(best))) {
            best = v;
            best_at = h * g.in_w + w;
          }
        }
      }
      y[oh * g.out_w + ow] = best;
      if (idx != nullptr) idx[oh * g.out_w + ow] = best_at + 1;
    }
  }
}

template <typename T>
void max_pool(const KernelCall& call, bool with_indices) {
  const Tensor& x = *call.args[0];
  // A pad as wide as the window would make a window of padding only, with no maximum.
  const std::vector<int64_t>& window = call.op.attrs.get_ints("window");
  const std::vector<int64_t>& pad = call.op.attrs.get_ints("pad");
  if (pad[0] >= window[0] || pad[1] >= window[0] || pad[2] >= window[1] || pad[3] >= window[1]) {
    user_error("max pooling pad [{}] must be smaller than the window [{}] on each side",
               fmt::join(pad, ","), fmt::join(window, ","));
  }
  PoolGeom g = pool_geom(call.op.attrs, x, *call.outs[0]);
  const T* px = x.data<T>();
  T* py = call.outs[0]->data<T>();
  int64_t* pidx = with_indices ? call.outs[1]->data<int64_t>() : nullptr;
  int64_t work = g.out_plane() * g.win_w * g.win_h;
  dense::parallel_work(g.planes, work, [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) {
      max_pool_plane(g, px + c * g.in_plane(), py + c * g.out_plane(),
                     pidx == nullptr ? nullptr : pidx + c * g.out_plane());
    }
  });
}

template <typename T>
void max_pool2d(const KernelCall& call) {
  max_pool<T>(call, false);
}

template <typename T>
void max_pool2d_with_indices(const KernelCall& call) {
  max_pool<T>(call, true);
}

// dx = 0, then each dy is added where its index points.
template <typename T>
void max_pool2d_backward(const KernelCall& call) {
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
      std::fill(plane, plane + in_plane, T(0));
      for (int64_t o = c * out_plane; o < (c + 1) * out_plane; ++o) {
        int64_t k = pidx[o];
        if (k < 1 || k > in_plane) {
          user_error("max_pool2d_backward: index {} is outside the {}x{} plane", k, dx.dim(1),
                     dx.dim(2));
        }
        plane[k - 1] += pdy[o];
      }
    }
  });
}

// Padding counts as zeros in the sum and in the divisor, so the divisor is the window size.
template <typename T>
void avg_pool2d(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  PoolGeom g = pool_geom(call.op.attrs, x, *call.outs[0]);
  const T* px = x.data<T>();
  T* py = call.outs[0]->data<T>();
  T scale = T(1) / static_cast<T>(g.win_w * g.win_h);
  dense::parallel_work(g.planes, g.out_plane() * g.win_w * g.win_h, [&](int64_t b, int64_t e) {
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
  PoolGeom g = pool_geom(call.op.attrs, dx, dy);
  const T* pdy = dy.data<T>();
  T* pdx = dx.data<T>();
  T scale = T(1) / static_cast<T>(g.win_w * g.win_h);
  int64_t work = g.in_plane() + g.out_plane() * g.win_w * g.win_h;
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
  t.set(Prim::avg_pool2d, float_kernel<avg_pool2d<float>, avg_pool2d<double>>);
  t.set(Prim::avg_pool2d_backward,
        float_kernel<avg_pool2d_backward<float>, avg_pool2d_backward<double>>);
}

}  // namespace ytape
