// oneDNN convolutions on ytape's tensors.
//
// Layouts: ytape's column-major WHCN image is, read row-major, oneDNN's `nchw` (and
// Layout::c8 and c16 are its `nChw8c` and `nChw16c`, which the executor keeps between such
// kernels); the weights (kw, kh, cin/groups, cout) are `oihw`, or `goihw` with groups (cout
// splits as (groups, cout/groups) row-major). oneDNN chooses its own layouts for the
// primitive (`format_tag::any`: nChw16c on AVX-512, nChw8c on AVX2), and each call reorders the
// tensors whose layout differs: the weights and the weight gradient always, images only
// where the executor passes them plain. The blocked copies live in per-thread scratch
// buffers that the next call reuses, so memory grows with the largest convolution, not
// with their number.
//
// Primitives are built once per geometry, algorithm and thread (building one costs far more
// than running a small one). Winograd's round differently from a plain sum, within f32's
// (docs/benchmarks.md, Kernels and threads); gradient checks run in f64 on the reference kernels
// and are not affected.
#include <omp.h>

#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <optional>
#include <unordered_map>
#include <vector>

#include "runtime/kernels/dense.h"
#include "runtime/kernels/onednn.h"
#include "runtime/parallel.h"

namespace ytape::onednn {

namespace {

using dnnl::memory;
using Tag = memory::format_tag;

dnnl::engine& engine() {
  static dnnl::engine* e = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // kept for the process
  return *e;
}

dnnl::stream& stream() {
  thread_local dnnl::stream s(engine());
  return s;
}

using Kind = ConvKind;

// One tensor argument of a primitive: the caller's memory (in its layout) and, when the
// primitive wants another layout, a memory in that layout and the reorder between the two.
struct Port {
  int arg = 0;
  memory user, inner;
  std::optional<dnnl::reorder> reorder;  // user -> inner for inputs, inner -> user for outputs

  Port() = default;
  Port(int arg_id, const memory::desc& plain, const memory::desc& wanted, bool input)
      : arg(arg_id), user(plain, engine(), DNNL_MEMORY_NONE) {
    if (plain == wanted) {
      inner = user;
      return;
    }
    inner = memory(wanted, engine(), DNNL_MEMORY_NONE);
    reorder = input ? dnnl::reorder(user, inner) : dnnl::reorder(inner, user);
  }
};

// A built convolution: its primitive, two inputs and one output, or nothing when oneDNN
// has no implementation for the geometry.
struct Conv {
  std::optional<dnnl::primitive> primitive;
  Port in[2], out;
  memory scratchpad;  // the primitive's work memory, given by the caller (see user_scratchpad)
  std::string impl;
  ConvAlgorithm algorithm = ConvAlgorithm::direct;  // what it runs, whatever was asked
};

struct Descs {
  memory::desc src, weights, dst;
  memory::dims strides, dilates, pad_lo, pad_hi;
};

Tag image_tag(Layout l) {
  return l == Layout::c16 ? Tag::nChw16c : l == Layout::c8 ? Tag::nChw8c : Tag::nchw;
}

// The descriptors of the caller's tensors.
Descs user_descs(const ConvGeom& g, ConvLayouts l) {
  using dt = memory::data_type;
  Descs d;
  d.src = memory::desc({g.batch, g.in_c, g.in_h, g.in_w}, dt::f32, image_tag(l.in));
  d.dst = memory::desc({g.batch, g.out_c, g.out_h, g.out_w}, dt::f32, image_tag(l.out));
  if (g.groups == 1) {
    d.weights = memory::desc({g.out_c, g.in_c, g.k_h, g.k_w}, dt::f32, Tag::oihw);
  } else {
    d.weights = memory::desc({g.groups, g.out_c / g.groups, g.in_c / g.groups, g.k_h, g.k_w},
                             dt::f32, Tag::goihw);
  }
  d.strides = {g.stride_h, g.stride_w};
  d.dilates = {g.dil_h - 1, g.dil_w - 1};  // oneDNN counts the gaps between taps
  d.pad_lo = {g.pad_h, g.pad_w};
  d.pad_hi = {g.pad_h_hi, g.pad_w_hi};
  return d;
}

memory::desc any(const memory::desc& plain) {
  return memory::desc(plain.dims(), plain.data_type(), Tag::any);
}

// The primitives' work memory is the caller's (scratchpad_mode::user), so that the
// executor plans it with its values (KernelTable::workspace) instead of oneDNN keeping
// buffers of its own beside them.
const dnnl::primitive_attr& user_scratchpad() {
  static const dnnl::primitive_attr* attr = [] {
    auto* a = new dnnl::primitive_attr;  // kept for the process, as the engine
    a->set_scratchpad_mode(dnnl::scratchpad_mode::user);
    return a;
  }();
  return *attr;
}

std::optional<dnnl::convolution_forward::primitive_desc> forward_pd(const Descs& d,
                                                                    dnnl::algorithm algorithm) {
  dnnl::convolution_forward::desc desc(dnnl::prop_kind::forward_training, algorithm, any(d.src),
                                       any(d.weights), any(d.dst), d.strides, d.dilates, d.pad_lo,
                                       d.pad_hi);
  dnnl::convolution_forward::primitive_desc pd(desc, user_scratchpad(), engine(), true);
  if (!pd) return std::nullopt;
  return pd;
}

// The convolution with `algorithm`, or one without a primitive where oneDNN has none.
Conv build_with(Kind kind, const ConvGeom& g, ConvLayouts l, dnnl::algorithm algorithm) {
  Conv c;
  Descs d = user_descs(g, l);
  std::optional<dnnl::convolution_forward::primitive_desc> fwd = forward_pd(d, algorithm);
  if (!fwd) return c;
  if (kind == Kind::forward) {
    c.in[0] = Port(DNNL_ARG_SRC, d.src, fwd->src_desc(), true);
    c.in[1] = Port(DNNL_ARG_WEIGHTS, d.weights, fwd->weights_desc(), true);
    c.out = Port(DNNL_ARG_DST, d.dst, fwd->dst_desc(), false);
    c.primitive = dnnl::convolution_forward(*fwd);
    c.scratchpad = memory(fwd->scratchpad_desc(), engine(), DNNL_MEMORY_NONE);
    c.impl = fwd->impl_info_str();
  } else if (kind == Kind::backward_input) {
    dnnl::convolution_backward_data::desc desc(algorithm, any(d.src), any(d.weights), any(d.dst),
                                               d.strides, d.dilates, d.pad_lo, d.pad_hi);
    dnnl::convolution_backward_data::primitive_desc pd(desc, user_scratchpad(), engine(), *fwd,
                                                       true);
    if (!pd) return c;
    c.in[0] = Port(DNNL_ARG_DIFF_DST, d.dst, pd.diff_dst_desc(), true);
    c.in[1] = Port(DNNL_ARG_WEIGHTS, d.weights, pd.weights_desc(), true);
    c.out = Port(DNNL_ARG_DIFF_SRC, d.src, pd.diff_src_desc(), false);
    c.primitive = dnnl::convolution_backward_data(pd);
    c.scratchpad = memory(pd.scratchpad_desc(), engine(), DNNL_MEMORY_NONE);
    c.impl = pd.impl_info_str();
  } else {
    dnnl::convolution_backward_weights::desc desc(algorithm, any(d.src), any(d.weights), any(d.dst),
                                                  d.strides, d.dilates, d.pad_lo, d.pad_hi);
    dnnl::convolution_backward_weights::primitive_desc pd(desc, user_scratchpad(), engine(), *fwd,
                                                          true);
    if (!pd) return c;
    c.in[0] = Port(DNNL_ARG_SRC, d.src, pd.src_desc(), true);
    c.in[1] = Port(DNNL_ARG_DIFF_DST, d.dst, pd.diff_dst_desc(), true);
    c.out = Port(DNNL_ARG_DIFF_WEIGHTS, d.weights, pd.diff_weights_desc(), false);
    c.primitive = dnnl::convolution_backward_weights(pd);
    c.scratchpad = memory(pd.scratchpad_desc(), engine(), DNNL_MEMORY_NONE);
    c.impl = pd.impl_info_str();
  }
  return c;
}

// oneDNN refuses some geometries the primitives allow by throwing as it makes the
// descriptor (a stride or dilation beyond its int range: "could not create a descriptor"),
// and a Winograd kernel whose scratch memory does not fit (ulimit -v): either way it has no
// kernel for them, and the caller's falls back (the direct one for Winograd, ytape's own
// for direct).
Conv build(Kind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm) {
  if (algorithm == ConvAlgorithm::winograd) {
    try {
      Conv c = build_with(kind, g, l, dnnl::algorithm::convolution_winograd);
      c.algorithm = ConvAlgorithm::winograd;
      if (c.primitive) return c;
    } catch (const dnnl::error&) {
    }
  }
  try {
    return build_with(kind, g, l, dnnl::algorithm::convolution_direct);
  } catch (const dnnl::error&) {
    return Conv{};
  }
}

// The convolution of `kind` for `g` at the current thread count, built on first use by
// this thread. Empty sizes never reach oneDNN: the reference kernels handle them.
Conv& conv(Kind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm) {
  // oneDNN runs on OpenMP threads, as many as the calling thread's setting: keep it at
  // ytape's, so that ytape's pool, OpenBLAS and oneDNN never use more threads than asked.
  // A primitive splits its work for the setting it is built under (the first convolution
  // of a run with --threads 1 took two threads, one waiting for the other), so it is set
  // before one is built.
  if (omp_get_max_threads() != num_threads()) omp_set_num_threads(num_threads());
  thread_local std::map<std::vector<int64_t>, Conv> built;
  // clang-format off
  std::vector<int64_t> key{num_threads(), static_cast<int64_t>(kind),
                           static_cast<int64_t>(algorithm), static_cast<int64_t>(l.in),
                           static_cast<int64_t>(l.out), g.batch, g.in_c, g.in_h, g.in_w,
                           g.out_c, g.k_h, g.k_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w,
                           g.pad_h, g.pad_w, g.pad_h_hi, g.pad_w_hi, g.groups};
  // clang-format on
  auto it = built.find(key);
  if (it == built.end()) it = built.emplace(std::move(key), build(kind, g, l, algorithm)).first;
  return it->second;
}

bool empty(const ConvGeom& g) {
  for (int64_t d : {g.batch, g.in_c, g.in_h, g.in_w, g.out_c, g.out_h, g.out_w, g.k_h, g.k_w}) {
    if (d == 0) return true;  // a product of the dims could overflow
  }
  return false;
}

// Points a port at the caller's buffer and, if it is reordered, its inner memory at the
// scratch buffer of `Slot`.
template <int Slot>
memory& bind(Port& p, const float* data) {
  p.user.set_data_handle(const_cast<float*>(data));
  if (p.reorder) {
    size_t floats = p.inner.get_desc().get_size() / sizeof(float);
    p.inner.set_data_handle(dense::scratch<float, Slot>(static_cast<int64_t>(floats)));
  }
  return p.inner;
}

}  // namespace

Layout preferred_image_layout() {
  // A 3x3 convolution of ResNet-18's first stage, its layouts left to oneDNN: what it picks
  // for the source is what its convolutions want on this processor.
  ConvGeom g{};
  g.in_w = g.in_h = g.out_w = g.out_h = 56;
  g.in_c = g.out_c = 64;
  g.batch = g.groups = g.stride_w = g.stride_h = g.dil_w = g.dil_h = 1;
  g.k_w = g.k_h = 3;
  g.pad_w = g.pad_h = g.pad_w_hi = g.pad_h_hi = 1;
  Descs d = user_descs(g, ConvLayouts{});
  auto pd = forward_pd(d, dnnl::algorithm::convolution_direct);
  if (!pd) return Layout::c16;
  memory::dims dims = d.src.dims();
  for (Layout l : {Layout::c8, Layout::c16}) {
    if (pd->src_desc() == memory::desc(dims, memory::data_type::f32, image_tag(l))) return l;
  }
  return Layout::c16;
}

// Measured with oneDNN 2.6 on AVX-512 (jit_wino_4x3, 2 threads) against the direct kernels
// at 450-500 GFLOP/s: 1.5-2.4x faster on ResNet-18's 3x3 layers at 56x56 and 28x28, and at
// 14x14 from batch 8; slower when the batch's output has fewer than 28x28 pixels (layer 4,
// 1.3-2x) or with 32 channels (the digits' CNN).
bool winograd_faster(const ConvGeom& g) {
  return g.k_w == 3 && g.k_h == 3 && g.stride_w == 1 && g.stride_h == 1 && g.dil_w == 1 &&
         g.dil_h == 1 && g.groups == 1 && g.in_c >= 64 && g.out_c >= 64 &&
         g.batch * g.out_plane() >= 28 * 28;
}

bool convolve(ConvKind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm,
              const float* a, const float* b, float* out, void* scratchpad,
              int64_t scratchpad_bytes) {
  if (empty(g)) return false;
  Conv& c = conv(kind, g, l, algorithm);
  if (!c.primitive) return false;
  // Slots 0 and 1 belong to the reference kernels and gemm (runtime/kernels/dense.h). The
  // weights, read or written, always take slot 3: the largest copies share one buffer.
  bool weights_out = kind == Kind::backward_filter;
  std::unordered_map<int, memory> args{
      {c.in[0].arg, bind<2>(c.in[0], a)},
      {c.in[1].arg, weights_out ? bind<4>(c.in[1], b) : bind<3>(c.in[1], b)},
      {c.out.arg, weights_out ? bind<3>(c.out, out) : bind<4>(c.out, out)}};
  if (auto bytes = static_cast<int64_t>(c.scratchpad.get_desc().get_size()); bytes > 0) {
    if (scratchpad == nullptr || scratchpad_bytes < bytes)
      scratchpad = dense::scratch<float, 5>(bytes / 4 + 1);
    c.scratchpad.set_data_handle(scratchpad);
    args.emplace(DNNL_ARG_SCRATCHPAD, c.scratchpad);
  }
  dnnl::stream& s = stream();
  for (Port& p : c.in) {
    if (p.reorder) p.reorder->execute(s, p.user, p.inner);
  }
  c.primitive->execute(s, args);
  if (c.out.reorder) c.out.reorder->execute(s, c.out.inner, c.out.user);
  s.wait();
  return true;
}

int64_t conv_scratchpad_bytes(ConvKind kind, const ConvGeom& g, ConvLayouts l,
                              ConvAlgorithm algorithm) {
  if (empty(g)) return algorithm == ConvAlgorithm::direct ? 0 : -1;
  const Conv& c = conv(kind, g, l, algorithm);
  if (c.algorithm != algorithm) return -1;
  return c.primitive ? static_cast<int64_t>(c.scratchpad.get_desc().get_size()) : 0;
}

std::string conv_impl(ConvKind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm) {
  if (empty(g)) return "";
  return conv(kind, g, l, algorithm).impl;
}

}  // namespace ytape::onednn
