// Kernels of the conv family: 2-d convolution and its two gradients. The reference kernels
// are im2col / col2im around OpenBLAS GEMMs, in f32 and f64; the fast set sends f32 to
// oneDNN (onednn.h).
//
// For one image, x (W, H, Cin) is a column-major (W*H, Cin) matrix and y a (W'*H', Cout)
// matrix. im2col lays the input out as a (W'*H', kw*kh*Cin) matrix whose column
// (i, j, ci) holds the input that tap (i, j) of channel ci reads at each output position,
// so that the columns follow the weight layout (kw, kh, Cin/groups, Cout) and each group
// is one GEMM: y_g = col_g * w_g. Group g's columns are a contiguous block of col.
#include "runtime/kernels/conv.h"

#include <algorithm>
#include <optional>

#include "runtime/kernels/dense.h"
#include "runtime/kernels/onednn.h"
#include "runtime/layout.h"

namespace ytape {

ConvGeom conv_geom(const ConvAttrs& attrs, const Type& x, const Type& w, const Type& y) {
  const std::vector<int64_t>& stride = attrs.stride;
  const std::vector<int64_t>& pad = attrs.pad;
  const std::vector<int64_t>& dilation = attrs.dilation;
  auto dim = [](const Type& t, size_t d) { return d <= t.shape.size() ? t.shape[d - 1] : 1; };
  ConvGeom g{};
  g.in_w = dim(x, 1), g.in_h = dim(x, 2), g.in_c = dim(x, 3), g.batch = dim(x, 4);
  g.k_w = dim(w, 1), g.k_h = dim(w, 2), g.out_c = dim(w, 4);
  g.out_w = dim(y, 1), g.out_h = dim(y, 2);
  g.stride_w = stride[0], g.stride_h = stride[1];
  g.dil_w = dilation[0], g.dil_h = dilation[1];
  g.pad_w = pad[0], g.pad_w_hi = pad[1], g.pad_h = pad[2], g.pad_h_hi = pad[3];
  g.groups = attrs.groups;
  g.direct = g.k_w == 1 && g.k_h == 1 && g.stride_w == 1 && g.stride_h == 1 &&
             std::all_of(pad.begin(), pad.end(), [](int64_t p) { return p == 0; });
  return g;
}

ConvGeom conv_geom(const ConvAttrs& attrs, const Tensor& x, const Tensor& w, const Tensor& y) {
  return conv_geom(attrs, x.type(), w.type(), y.type());
}

namespace {

using dense::Span1;
using dense::valid_outputs;

// One image: col[:, (i, j, ci)] = x[ow*sw + i*dw - pw, oh*sh + j*dh - ph, ci], zero outside.
// Column c (its out_plane() entries at `dst`).
template <typename T>
void im2col_column(const ConvGeom& g, const T* x, int64_t c, T* dst) {
  int64_t i = c % g.k_w, j = c / g.k_w % g.k_h, ci = c / g.taps();
  int64_t w0 = i * g.dil_w - g.pad_w;
  Span1 ws = valid_outputs(g.in_w, g.out_w, g.stride_w, w0);
  const T* plane = x + ci * g.in_plane();
  for (int64_t oh = 0; oh < g.out_h; ++oh, dst += g.out_w) {
    int64_t ih = oh * g.stride_h + j * g.dil_h - g.pad_h;
    if (ih < 0 || ih >= g.in_h || ws.lo == ws.hi) {
      std::fill(dst, dst + g.out_w, T(0));
      continue;
    }
    const T* src = plane + ih * g.in_w;
    std::fill(dst, dst + ws.lo, T(0));
    if (g.stride_w == 1) {
      std::copy(src + ws.lo + w0, src + ws.hi + w0, dst + ws.lo);
    } else if (g.stride_w == 2) {
      // A constant stride lets the compiler vectorize the gather with shuffles.
      for (int64_t ow = ws.lo; ow < ws.hi; ++ow) dst[ow] = src[ow * 2 + w0];
    } else {
      for (int64_t ow = ws.lo; ow < ws.hi; ++ow) dst[ow] = src[ow * g.stride_w + w0];
    }
    std::fill(dst + ws.hi, dst + g.out_w, T(0));
  }
}

template <typename T>
void im2col(const ConvGeom& g, const T* x, T* col) {
  int64_t columns = g.in_c * g.taps();
  dense::parallel_work(columns, g.out_plane(), [&](int64_t begin, int64_t end) {
    for (int64_t c = begin; c < end; ++c) im2col_column(g, x, c, col + c * g.out_plane());
  });
}

// The transpose of im2col: x[.., ci] = sum of the col entries that read it. Each task owns
// one input row and gathers what lands there, so threads never write the same element.
template <typename T>
void col2im(const ConvGeom& g, const T* col, T* x) {
  dense::parallel_work(g.in_c * g.in_h, g.in_w * g.taps(), [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) {
      int64_t ci = r / g.in_h, ih = r % g.in_h;
      T* row = x + r * g.in_w;
      std::fill(row, row + g.in_w, T(0));
      for (int64_t j = 0; j < g.k_h; ++j) {
        int64_t t = ih + g.pad_h - j * g.dil_h;  // oh * stride_h, if tap j reads row ih
        if (t < 0 || t % g.stride_h != 0 || t / g.stride_h >= g.out_h) continue;
        int64_t oh = t / g.stride_h;
        for (int64_t i = 0; i < g.k_w; ++i) {
          int64_t c = i + g.k_w * (j + g.k_h * ci);
          const T* src = col + c * g.out_plane() + oh * g.out_w;
          int64_t w0 = i * g.dil_w - g.pad_w;
          Span1 ws = valid_outputs(g.in_w, g.out_w, g.stride_w, w0);
          if (g.stride_w == 1) {
            for (int64_t ow = ws.lo; ow < ws.hi; ++ow) row[ow + w0] += src[ow];
          } else {
            for (int64_t ow = ws.lo; ow < ws.hi; ++ow) row[ow * g.stride_w + w0] += src[ow];
          }
        }
      }
    }
  });
}

// The im2col matrix of one image: the image itself for a direct conv.
template <typename T>
const T* columns(const ConvGeom& g, const T* x) {
  if (g.direct) return x;
  T* col = dense::scratch<T>(g.col_size());
  im2col(g, x, col);
  return col;
}

// The GEMMs of the conv kernels: OpenBLAS (f32 and f64) for the reference kernels,
// oneDNN's (f32) for weight-bound convolutions in the fast set (gemm_faster). Both compute
// column-major C = op(A) op(B) + beta C.
struct BlasGemm {
  template <typename T>
  static void run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const T* a, int64_t lda,
                  const T* b, int64_t ldb, T beta, T* c, int64_t ldc) {
    dense::gemm(ta, tb, m, n, k, T(1), a, lda, b, ldb, beta, c, ldc);
  }
};

struct OnednnGemm {
  static void run(bool ta, bool tb, int64_t m, int64_t n, int64_t k, const float* a, int64_t lda,
                  const float* b, int64_t ldb, float beta, float* c, int64_t ldc) {
    onednn::gemm(ta, tb, m, n, k, a, lda, b, ldb, c, ldc, beta);
  }
};

// y = conv(x, w) on plain images: per image and group, y_g = col_g * w_g.
template <typename G, typename T>
void forward_images(const ConvGeom& g, const T* x, const T* w, T* y) {
  int64_t p = g.out_plane(), kg = g.group_k(), og = g.group_out();
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* col = columns(g, x + n * g.in_c * g.in_plane());
    T* yn = y + n * g.out_c * p;
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      G::run(false, false, p, og, kg, col + gi * kg * p, p, w + gi * kg * og,
             std::max<int64_t>(kg, 1), T(0), yn + gi * og * p, p);
    }
  }
}

// dx from dy on plain images: dcol_g = dy_g * w_g^T, then dx = col2im(dcol).
template <typename G, typename T>
void backward_input_images(const ConvGeom& g, const T* dy, const T* w, T* dx) {
  int64_t p = g.out_plane(), kg = g.group_k(), og = g.group_out();
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* dyn = dy + n * g.out_c * p;
    T* dxn = dx + n * g.in_c * g.in_plane();
    T* dcol = g.direct ? dxn : dense::scratch<T>(g.col_size());
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      G::run(false, true, p, kg, og, dyn + gi * og * p, p, w + gi * kg * og,
             std::max<int64_t>(kg, 1), T(0), dcol + gi * kg * p, p);
    }
    if (!g.direct) col2im(g, dcol, dxn);
  }
}

// dw on plain images: dw_g = sum over images of col_g^T * dy_g.
template <typename G, typename T>
void backward_filter_images(const ConvGeom& g, const T* x, const T* dy, T* dw) {
  int64_t p = g.out_plane(), kg = g.group_k(), og = g.group_out();
  if (g.batch == 0) std::fill_n(dw, g.group_k() * g.out_c, T(0));
  for (int64_t n = 0; n < g.batch; ++n) {
    const T* col = columns(g, x + n * g.in_c * g.in_plane());
    const T* dyn = dy + n * g.out_c * p;
    for (int64_t gi = 0; gi < g.groups; ++gi) {
      G::run(true, false, kg, og, p, col + gi * kg * p, p, dyn + gi * og * p, p, T(n == 0 ? 0 : 1),
             dw + gi * kg * og, std::max<int64_t>(kg, 1));
    }
  }
}

template <typename T>
void conv2d(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  const Tensor& w = *call.args[1];
  Tensor& y = *call.outs[0];
  ConvGeom g = conv_geom(attrs_of<Prim::conv2d>(call.op.attrs), x, w, y);
  forward_images<BlasGemm>(g, x.data<T>(), w.data<T>(), y.data<T>());
}

template <typename T>
void conv2d_backward_input(const KernelCall& call) {
  const Tensor& dy = *call.args[0];
  const Tensor& w = *call.args[1];
  Tensor& dx = *call.outs[0];
  ConvGeom g = conv_geom(attrs_of<Prim::conv2d_backward_input>(call.op.attrs), dx, w, dy);
  backward_input_images<BlasGemm>(g, dy.data<T>(), w.data<T>(), dx.data<T>());
}

template <typename T>
void conv2d_backward_filter(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  const Tensor& dy = *call.args[1];
  Tensor& dw = *call.outs[0];
  ConvGeom g = conv_geom(attrs_of<Prim::conv2d_backward_filter>(call.op.attrs), x, dw, dy);
  backward_filter_images<BlasGemm>(g, x.data<T>(), dy.data<T>(), dw.data<T>());
}

// The reference kernel on the call's tensors, where oneDNN has no kernel (f64, or a
// geometry it refuses: a stride of 2^31 - 1, a dilation of 2^32). The plan keeps the images
// of f32 convolutions blocked for oneDNN, so blocked ones are copied to plain and back.
void run_reference(const KernelCall& call, Kernel reference) {
  if (call.layouts == nullptr) return reference(call);
  std::vector<Tensor> plain(call.args.size() + call.outs.size());  // arguments, then outputs
  std::vector<const Tensor*> args;
  std::vector<Tensor*> outs;
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor* a = call.args[i];
    if (call.arg_layout(i) != Layout::plain) {
      plain[i] = Tensor::uninitialized(a->type());
      relayout(*a, call.arg_layout(i), plain[i], Layout::plain);
      a = &plain[i];
    }
    args.push_back(a);
  }
  for (size_t i = 0; i < call.outs.size(); ++i) {
    Tensor& copy = plain[call.args.size() + i];
    if (call.out_layout(i) != Layout::plain) copy = Tensor::uninitialized(call.outs[i]->type());
    outs.push_back(call.out_layout(i) != Layout::plain ? &copy : call.outs[i]);
  }
  reference(KernelCall{call.op, args, outs, call.context});
  for (size_t i = 0; i < call.outs.size(); ++i) {
    if (outs[i] != call.outs[i]) {
      relayout(*outs[i], Layout::plain, *call.outs[i], call.out_layout(i));
    }
  }
}

// Where a conv op of a kind holds the image (x, or dx), the weights (w, or dw) and the
// output image (y, or dy) among its tensors: its two arguments, then its output.
struct ConvRoles {
  size_t image, weights, output;
};

constexpr ConvRoles roles(onednn::ConvKind kind) {
  switch (kind) {
    case onednn::ConvKind::forward:
      return {0, 1, 2};  // (x, w) -> y
    case onednn::ConvKind::backward_input:
      return {2, 1, 0};  // (dy, w) -> dx
    case onednn::ConvKind::backward_filter:
      return {0, 2, 1};  // (x, dy) -> dw
  }
  return {0, 1, 2};
}

constexpr Prim prim_of(onednn::ConvKind kind) {
  switch (kind) {
    case onednn::ConvKind::forward:
      return Prim::conv2d;
    case onednn::ConvKind::backward_input:
      return Prim::conv2d_backward_input;
    case onednn::ConvKind::backward_filter:
      return Prim::conv2d_backward_filter;
  }
  return Prim::conv2d;
}

// The faster variant of a convolution is Winograd's, offered where it is faster
// (workspace_fast).
onednn::ConvAlgorithm algorithm(Variant v) {
  return v == Variant::faster ? onednn::ConvAlgorithm::winograd : onednn::ConvAlgorithm::direct;
}

// Convolutions bound by reading their weights, with few output pixels and many weights
// (ResNet-18's layer 4 at batch 1: 7x7 outputs, 2.4M weights), run as im2col and oneDNN's
// GEMM on the plain weights. oneDNN's direct kernels reorder the weights into their blocked
// layout on every call and then read them again, and its backward-filter kernel writes
// them blocked, to be reordered back; the GEMMs read or write them once. Measured on
// AVX-512 (AMD EPYC, 2 threads): ResNet-18's batch-1 forward 12.4 -> 10.7 ms and its step
// 34 -> 31-33 ms (fastest of 40 and 20 runs); bench_kernels, whose weights stay in cache,
// at 3x3 512->512 7x7: forward 0.82 -> 0.90 ms, backward input 0.95 -> 0.86, backward
// filter 1.01 -> 0.62.
bool gemm_faster(const ConvGeom& g) {
  constexpr int64_t kMaxPixels = 64, kMinWeights = int64_t{1} << 20;
  int64_t pixels = g.batch * g.out_plane();
  return g.groups == 1 && pixels > 0 && pixels <= kMaxPixels &&
         g.group_k() * g.out_c >= kMinWeights;
}

// Many groups over one small image, as vmap writes per-example weight gradients (example n
// is group n): oneDNN's grouped convolution ran the digits CNN's at 124 GFLOP/s. Here each
// thread takes whole groups, each one im2col of its channels and one GEMM on that thread.
bool by_groups(onednn::ConvKind kind, const ConvGeom& g, onednn::ConvLayouts l) {
  constexpr int64_t kMinGroups = 8, kMaxPixels = 256;
  return kind == onednn::ConvKind::backward_filter && l.in == Layout::plain &&
         l.out == Layout::plain && g.groups >= kMinGroups && g.batch == 1 &&
         g.out_plane() <= kMaxPixels && g.stride_w == 1 && g.stride_h == 1 && g.dil_w == 1 &&
         g.dil_h == 1;
}

// The im2col columns of channels [c0, c0 + n) at `col`, from a zero-padded copy of each
// plane (at `padded`): no clipping per column, which on planes of 4x4 pixels cost more than
// the GEMM. Stride 1 and dilation 1 (by_groups). Rows of W pixels (0: any width) are
// loops of a width known where images are small, not calls to memmove (the attribute keeps
// GCC from making them that): each row is then a vector move or two.
template <int64_t W>
[[gnu::optimize("no-tree-loop-distribute-patterns")]] void im2col_padded(const ConvGeom& g,
                                                                         const float* x, int64_t c0,
                                                                         int64_t n, float* padded,
                                                                         float* col) {
  const int64_t pw = g.in_w + g.pad_w + g.pad_w_hi, ph = g.in_h + g.pad_h + g.pad_h_hi;
  const int64_t out_w = W > 0 ? W : g.out_w;
  std::fill_n(padded, pw * ph, 0.0f);
  for (int64_t c = 0; c < n; ++c) {
    const float* plane = x + (c0 + c) * g.in_plane();
    for (int64_t h = 0; h < g.in_h; ++h) {
      float* to = padded + (h + g.pad_h) * pw + g.pad_w;
      for (int64_t w = 0; w < g.in_w; ++w) to[w] = plane[h * g.in_w + w];
    }
    for (int64_t j = 0; j < g.k_h; ++j) {
      for (int64_t i = 0; i < g.k_w; ++i, col += g.out_plane()) {
        for (int64_t oh = 0; oh < g.out_h; ++oh) {
          const float* from = padded + (oh + j) * pw + i;
          for (int64_t ow = 0; ow < out_w; ++ow) col[oh * out_w + ow] = from[ow];
        }
      }
    }
  }
}

// dw of group gi: col_g^T * dy_g, col_g the im2col columns of the group's channels.
void backward_filter_groups(const ConvGeom& g, const float* x, const float* dy, float* dw) {
  const int64_t p = g.out_plane(), kg = g.group_k(), og = g.group_out(), cg = g.in_c / g.groups;
  const int64_t padded_size = (g.in_w + g.pad_w + g.pad_w_hi) * (g.in_h + g.pad_h + g.pad_h_hi);
  parallel_for(g.groups, 1, [&](int64_t begin, int64_t end) {
    float* col = dense::scratch<float>(kg * p);
    float* padded = dense::scratch<float, 2>(padded_size);
    for (int64_t gi = begin; gi < end; ++gi) {
      switch (g.out_w) {
        case 4:
          im2col_padded<4>(g, x, gi * cg, cg, padded, col);
          break;
        case 8:
          im2col_padded<8>(g, x, gi * cg, cg, padded, col);
          break;
        case 16:
          im2col_padded<16>(g, x, gi * cg, cg, padded, col);
          break;
        default:
          im2col_padded<0>(g, x, gi * cg, cg, padded, col);
      }
      onednn::gemm_here(true, false, kg, og, p, col, p, dy + gi * og * p, p, dw + gi * kg * og, kg);
    }
  });
}

// Image tensor `t`, in layout `l`, as plain f32: itself, or a copy in scratch slot `Slot`.
template <int Slot>
const float* plain_image(const Tensor& t, Layout l) {
  if (l == Layout::plain) return t.data<float>();
  float* copy = dense::scratch<float, Slot>(t.size());
  Tensor view = Tensor::view(t.type(), copy);
  relayout(t, l, view, Layout::plain);
  return copy;
}

// The convolution of `Kind` as im2col (col2im) and oneDNN's GEMM, on plain copies of
// blocked images (small: gemm_faster's images have at most 64 pixels per channel).
template <onednn::ConvKind Kind>
void conv_gemm(const KernelCall& call, const ConvGeom& g) {
  // Slot 0 holds the im2col matrix (columns).
  const float* a = plain_image<2>(*call.args[0], call.arg_layout(0));
  const float* b = plain_image<3>(*call.args[1], call.arg_layout(1));
  Tensor& out = *call.outs[0];
  Layout out_layout = call.out_layout(0);
  float* o = out_layout == Layout::plain ? out.data<float>() : dense::scratch<float, 4>(out.size());
  if constexpr (Kind == onednn::ConvKind::forward) {
    forward_images<OnednnGemm>(g, a, b, o);
  } else if constexpr (Kind == onednn::ConvKind::backward_input) {
    backward_input_images<OnednnGemm>(g, a, b, o);
  } else {
    backward_filter_images<OnednnGemm>(g, a, b, o);
  }
  if (out_layout != Layout::plain)
    relayout(Tensor::view(out.type(), o), Layout::plain, out, out_layout);
}

// The f32 kernels go to oneDNN where it has an implementation for the geometry: its JIT
// direct convolutions use AVX-512 where OpenBLAS is held to AVX2, and take the dense part
// of a batch-1 ResNet-18 pass from 22 to 14 ms forward and from 39 to 28 ms backward
// (bench_kernels, with and without --kernels reference); weight-bound ones to its GEMM.
// f64, and what oneDNN refuses, take the reference kernel.
template <onednn::ConvKind Kind, Kernel Reference>
void conv_fast(const KernelCall& call) {
  constexpr ConvRoles r = roles(Kind);
  const Tensor* t[] = {call.args[0], call.args[1], call.outs[0]};
  Layout l[] = {call.arg_layout(0), call.arg_layout(1), call.out_layout(0)};
  Tensor& out = *call.outs[0];
  if (out.dtype() == DType::f32) {
    ConvGeom g =
        conv_geom(attrs_of<prim_of(Kind)>(call.op.attrs), *t[r.image], *t[r.weights], *t[r.output]);
    if (gemm_faster(g)) return conv_gemm<Kind>(call, g);
    if (by_groups(Kind, g, {l[r.image], l[r.output]})) {
      return backward_filter_groups(g, t[0]->data<float>(), t[1]->data<float>(), out.data<float>());
    }
    if (onednn::convolve(Kind, g, {l[r.image], l[r.output]}, algorithm(call.variant),
                         t[0]->data<float>(), t[1]->data<float>(), out.data<float>(),
                         call.workspace, call.workspace_bytes)) {
      return;
    }
  }
  run_reference(call, Reference);
}

// What oneDNN is asked about an f32 op of the tape, before it runs: its geometry and
// image layouts.
struct PlannedConv {
  ConvGeom geom;
  onednn::ConvLayouts layouts;
};

template <onednn::ConvKind Kind>
std::optional<PlannedConv> planned_conv(const Tape& tape, const Op& op, const Layout* layouts) {
  constexpr ConvRoles r = roles(Kind);
  const Type* t[] = {&tape.type(op.args[0]), &tape.type(op.args[1]), &tape.type(op.outs[0])};
  if (t[2]->dtype != DType::f32) return std::nullopt;
  Layout l[3];
  for (size_t i = 0; i < 3; ++i) l[i] = layouts != nullptr ? layouts[i] : Layout::plain;
  return PlannedConv{
      conv_geom(attrs_of<prim_of(Kind)>(op.attrs), *t[r.image], *t[r.weights], *t[r.output]),
      {l[r.image], l[r.output]}};
}

// "oneDNN <implementation>" for f32, where oneDNN has one; else ytape's own.
template <onednn::ConvKind Kind>
std::string describe_fast(const Tape& tape, const Op& op, const Layout* layouts, Variant v) {
  std::optional<PlannedConv> c = planned_conv<Kind>(tape, op, layouts);
  if (c && gemm_faster(c->geom)) return "oneDNN sgemm (im2col)";
  if (c && by_groups(Kind, c->geom, c->layouts)) return "oneDNN sgemm per group (im2col)";
  std::string impl = c ? onednn::conv_impl(Kind, c->geom, c->layouts, algorithm(v)) : "";
  return impl.empty() ? "ytape" : "oneDNN " + impl;
}

template <onednn::ConvKind Kind>
int64_t workspace_fast(const Tape& tape, const Op& op, const Layout* layouts, Variant v) {
  std::optional<PlannedConv> c = planned_conv<Kind>(tape, op, layouts);
  if (v == Variant::faster && !(c && onednn::winograd_faster(c->geom))) return -1;
  if (c && (gemm_faster(c->geom) || by_groups(Kind, c->geom, c->layouts))) {
    return 0;  // scratch of the calling threads
  }
  return c ? onednn::conv_scratchpad_bytes(Kind, c->geom, c->layouts, algorithm(v)) : 0;
}

}  // namespace

void register_conv_kernels(KernelTable& t) {
  using dense::float_kernel;
  using onednn::ConvKind;
  constexpr Kernel forward = float_kernel<conv2d<float>, conv2d<double>>;
  constexpr Kernel backward_input =
      float_kernel<conv2d_backward_input<float>, conv2d_backward_input<double>>;
  constexpr Kernel backward_filter =
      float_kernel<conv2d_backward_filter<float>, conv2d_backward_filter<double>>;
  if (t.kernels_set == KernelSet::fast) {
    t.set(Prim::conv2d, conv_fast<ConvKind::forward, forward>);
    t.set(Prim::conv2d_backward_input, conv_fast<ConvKind::backward_input, backward_input>);
    t.set(Prim::conv2d_backward_filter, conv_fast<ConvKind::backward_filter, backward_filter>);
    // Images in either layout; the weights and their gradient plain.
    t.allow_blocked(Prim::conv2d, 0b01, BlockedOut::always);
    t.allow_blocked(Prim::conv2d_backward_input, 0b01, BlockedOut::always);
    t.allow_blocked(Prim::conv2d_backward_filter, 0b11, BlockedOut::never);
    t.describe[static_cast<int>(Prim::conv2d)] = describe_fast<ConvKind::forward>;
    t.describe[static_cast<int>(Prim::conv2d_backward_input)] =
        describe_fast<ConvKind::backward_input>;
    t.describe[static_cast<int>(Prim::conv2d_backward_filter)] =
        describe_fast<ConvKind::backward_filter>;
    t.workspace[static_cast<int>(Prim::conv2d)] = workspace_fast<ConvKind::forward>;
    t.workspace[static_cast<int>(Prim::conv2d_backward_input)] =
        workspace_fast<ConvKind::backward_input>;
    t.workspace[static_cast<int>(Prim::conv2d_backward_filter)] =
        workspace_fast<ConvKind::backward_filter>;
    return;
  }
  t.set(Prim::conv2d, forward);
  t.set(Prim::conv2d_backward_input, backward_input);
  t.set(Prim::conv2d_backward_filter, backward_filter);
}

}  // namespace ytape
