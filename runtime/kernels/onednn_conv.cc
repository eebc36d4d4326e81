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

#include "runtime/address_space.h"
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
// `user_dst`, where given, describes the caller's output image (or its gradient) in place
// of the dense one of `g`: a slice of a larger image's channels.
Conv build_with(Kind kind, const ConvGeom& g, ConvLayouts l, dnnl::algorithm algorithm,
                const std::optional<memory::desc>& user_dst) {
  require_code_room("oneDNN's convolution kernels");
  Conv c;
  Descs d = user_descs(g, l);
  std::optional<dnnl::convolution_forward::primitive_desc> fwd = forward_pd(d, algorithm);
  if (!fwd) return c;
  if (user_dst) d.dst = *user_dst;
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
Conv build(Kind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm,
           const std::optional<memory::desc>& user_dst) {
  if (algorithm == ConvAlgorithm::winograd) {
    try {
      Conv c = build_with(kind, g, l, dnnl::algorithm::convolution_winograd, user_dst);
      c.algorithm = ConvAlgorithm::winograd;
      if (c.primitive) return c;
    } catch (const dnnl::error&) {
    }
  }
  try {
    return build_with(kind, g, l, dnnl::algorithm::convolution_direct, user_dst);
  } catch (const dnnl::error&) {
    return Conv{};
  }
}

// The output channels [begin, begin + g.out_c) of an image of `total` channels: the part of a
// larger convolution that a primitive computes (total 0: all of them).
struct Slice {
  int64_t begin = 0, total = 0;
};

// The convolution of `kind` for `g` split between `threads` threads, built on first use by
// this thread. Empty sizes never reach oneDNN: the reference kernels handle them.
Conv& conv(Kind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm, int threads,
           Slice slice = {}) {
  // oneDNN runs on OpenMP threads, as many as the calling thread's setting: keep it at
  // ytape's, so that ytape's pool, OpenBLAS and oneDNN never use more threads than asked.
  // A primitive splits its work for the setting it is built under (the first convolution
  // of a run with --threads 1 took two threads, one waiting for the other), so it is set
  // before one is built.
  // A unit's primitive (one thread) runs on one thread whatever the setting, which stays
  // the caller's.
  const int setting = omp_get_max_threads();
  if (setting != threads) omp_set_num_threads(threads);
  thread_local std::map<std::vector<int64_t>, Conv> built;
  // clang-format off
  std::vector<int64_t> key{threads, static_cast<int64_t>(kind),
                           static_cast<int64_t>(algorithm), static_cast<int64_t>(l.in),
                           static_cast<int64_t>(l.out), g.batch, g.in_c, g.in_h, g.in_w,
                           g.out_c, g.k_h, g.k_w, g.stride_h, g.stride_w, g.dil_h, g.dil_w,
                           g.pad_h, g.pad_w, g.pad_h_hi, g.pad_w_hi, g.groups, slice.begin,
                           slice.total};
  // clang-format on
  auto it = built.find(key);
  if (it == built.end()) {
    std::optional<memory::desc> user_dst;
    if (slice.total > 0) {
      ConvGeom whole = g;
      whole.out_c = slice.total;
      memory::desc full = user_descs(whole, l).dst;
      user_dst = full.submemory_desc({g.batch, g.out_c, g.out_h, g.out_w}, {0, slice.begin, 0, 0});
    }
    it = built.emplace(std::move(key), build(kind, g, l, algorithm, user_dst)).first;
  }
  if (threads != num_threads() && setting != threads) omp_set_num_threads(setting);
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

int64_t scratchpad_size(const Conv& c) {
  return static_cast<int64_t>(c.scratchpad.get_desc().get_size());
}

// Runs `c` from a and b into out; `scratchpad` is its work memory where it holds
// `scratchpad_bytes`, else a buffer of the calling thread serves.
void run(Conv& c, Kind kind, const float* a, const float* b, float* out, void* scratchpad,
         int64_t scratchpad_bytes) {
  // Slots 0 and 1 belong to the reference kernels and gemm (runtime/kernels/dense.h). The
  // weights, read or written, always take slot 3: the largest copies share one buffer.
  bool weights_out = kind == Kind::backward_filter;
  std::unordered_map<int, memory> args{
      {c.in[0].arg, bind<2>(c.in[0], a)},
      {c.in[1].arg, weights_out ? bind<4>(c.in[1], b) : bind<3>(c.in[1], b)},
      {c.out.arg, weights_out ? bind<3>(c.out, out) : bind<4>(c.out, out)}};
  if (int64_t bytes = scratchpad_size(c); bytes > 0) {
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
}

// Kernels whose rounding depends on the thread count: oneDNN splits a weight gradient's
// sum over the batch and the image between threads by their number, and its Winograd
// kernels block a batch's sums over channels by it (at 3 threads and more, 14x14 images at
// batch 8). So that the bits do not depend on the thread count (docs/training.md,
// Determinism), ytape cuts these into units by the geometry alone, each one primitive on
// one thread. A weight gradient's units are a grid of batch chunks by output-channel chunks
// (whole blocks of 16); the batch chunks write partial sums that are added in chunk order.
// Cutting the batch costs a pass over the weights per chunk, cutting the channels a pass
// over the images per chunk (Winograd's transform of them, too): of the grids of as many
// units as the machine's default thread count, the one that moves the fewest floats. More
// units than that cost more than they gain: ResNet-18's weight gradients at batch 8 took 82
// ms in 8 units against 69 in 2 (on 2 threads; 68 as oneDNN splits them itself). Winograd's
// backward-input kernels take batch chunks, and so do its forward ones on images of 28x28
// and more; on smaller ones they take output-channel chunks, which transform the whole
// input each but keep more tiles in one call (ResNet-18's 14x14 layer at batch 8: 4.0 ms
// against 5.2 in batch chunks and 3.6 as oneDNN splits it itself, on 2 threads).
struct Units {
  static constexpr int64_t kBlock = 16, kSmallImage = 28 * 28;
  Kind kind;
  int64_t batch_size = 0, batch_count = 1, out_size = 0, out_count = 1;

  Units(Kind k, const ConvGeom& g) : kind(k), batch_size(g.batch), out_size(g.out_c) {
    const int64_t units = default_num_threads();
    if (kind == Kind::forward && g.out_plane() < kSmallImage) {
      const int64_t blocks = (g.out_c + kBlock - 1) / kBlock;
      out_size = std::min(g.out_c, (blocks + units - 1) / units * kBlock);
    } else if (kind != Kind::backward_filter) {
      batch_size = (g.batch + units - 1) / units;
    } else {
      choose_grid(g, units);
    }
    batch_count = (g.batch + batch_size - 1) / batch_size;
    out_count = (g.out_c + out_size - 1) / out_size;
  }
  void choose_grid(const ConvGeom& g, int64_t units) {
    const int64_t weights = g.out_c * g.group_k(), images = g.batch * g.in_c * g.in_h * g.in_w;
    const int64_t blocks = g.groups == 1 ? (g.out_c + kBlock - 1) / kBlock : 1;
    double best = -1;
    for (int64_t b = 1; b <= std::min(g.batch, units); ++b) {
      int64_t o = std::min(blocks, (units + b - 1) / b);
      double cost = 2.0 * static_cast<double>(weights) * static_cast<double>(b - 1) +
                    static_cast<double>(images) * static_cast<double>(o - 1);
      if (best >= 0 && cost >= best) continue;
      best = cost;
      batch_size = (g.batch + b - 1) / b;
      out_size = std::min(g.out_c, (blocks + o - 1) / o * kBlock);
    }
  }
  int64_t count() const { return batch_count * out_count; }
  Conv& conv(const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm, int64_t unit) const {
    const int64_t b = unit / out_count, o = unit % out_count;
    ConvGeom u = g;
    u.batch = std::min(batch_size, g.batch - b * batch_size);
    u.out_c = std::min(out_size, g.out_c - o * out_size);
    Slice slice = out_count > 1 ? Slice{o * out_size, g.out_c} : Slice{};
    return ytape::onednn::conv(kind, u, l, algorithm, 1, slice);
  }
  // The work memory of one unit at a time, in whole cache lines.
  int64_t scratchpad_bytes(const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm) const {
    int64_t bytes = 0;
    for (int64_t unit : {int64_t{0}, count() - 1})
      bytes = std::max(bytes, scratchpad_size(conv(g, l, algorithm, unit)));
    return (bytes + 63) / 64 * 64;
  }
};

// Whether `kind` at `g` runs in units (above): weight gradients, and Winograd's kernels
// over a batch (units whose geometry has none run the direct ones).
bool in_units(Kind kind, const ConvGeom& g, ConvAlgorithm algorithm) {
  return kind == Kind::backward_filter || (algorithm == ConvAlgorithm::winograd && g.batch > 1);
}

bool run_units(Kind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm, const float* a,
               const float* b, float* out, void* scratchpad, int64_t scratchpad_bytes) {
  const Units units(kind, g);
  for (int64_t unit : {int64_t{0}, units.count() - 1}) {
    if (!units.conv(g, l, algorithm, unit).primitive) return false;
  }
  // A chunk of the batch is a dense image in every layout, at an offset.
  ConvGeom one = g;
  one.batch = 1;
  const Descs image = user_descs(one, l);
  const auto x_image = static_cast<int64_t>(image.src.get_size() / sizeof(float));
  const auto y_image = static_cast<int64_t>(image.dst.get_size() / sizeof(float));
  const bool filter = kind == Kind::backward_filter;
  const int64_t a_step = kind == Kind::backward_input ? y_image : x_image;
  const int64_t b_step = filter ? y_image : 0;
  const int64_t out_step = kind == Kind::forward ? y_image : filter ? 0 : x_image;
  // A weight gradient's batch chunk c > 0 writes its partial sums at partial + (c - 1) * weights.
  const int64_t weights = g.out_c * g.group_k();
  float* partial = filter && units.batch_count > 1
                       ? dense::scratch<float, 6>((units.batch_count - 1) * weights)
                       : nullptr;
  const int64_t stride = units.scratchpad_bytes(g, l, algorithm);
  parallel_for(units.count(), 1, [&](int64_t begin, int64_t end) {
    // Each thread's share of the planned work memory, if the plan made one per thread.
    const int64_t thread = omp_get_thread_num();
    void* own = scratchpad != nullptr && (thread + 1) * stride <= scratchpad_bytes
                    ? static_cast<char*>(scratchpad) + thread * stride
                    : nullptr;
    for (int64_t unit = begin; unit < end; ++unit) {
      const int64_t c = unit / units.out_count, o = unit % units.out_count;
      const int64_t first = c * units.batch_size;
      // A chunk of output channels is a block of the weights (or their gradient).
      const int64_t block = o * units.out_size * g.group_k();
      const float* w = b + first * b_step + (kind == Kind::forward ? block : 0);
      float* to = out + first * out_step;
      if (filter) to = (c == 0 ? out : partial + (c - 1) * weights) + block;
      run(units.conv(g, l, algorithm, unit), kind, a + first * a_step, w, to, own, stride);
    }
  });
  if (partial != nullptr) {
    parallel_for(weights, 16384, [&](int64_t begin, int64_t end) {
      for (int64_t c = 1; c < units.batch_count; ++c) {
        const float* p = partial + (c - 1) * weights;
        for (int64_t i = begin; i < end; ++i) out[i] += p[i];
      }
    });
  }
  return true;
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
  if (in_units(kind, g, algorithm))
    return run_units(kind, g, l, algorithm, a, b, out, scratchpad, scratchpad_bytes);
  Conv& c = conv(kind, g, l, algorithm, num_threads());
  if (!c.primitive) return false;
  run(c, kind, a, b, out, scratchpad, scratchpad_bytes);
  return true;
}

int64_t conv_scratchpad_bytes(ConvKind kind, const ConvGeom& g, ConvLayouts l,
                              ConvAlgorithm algorithm) {
  if (empty(g)) return algorithm == ConvAlgorithm::direct ? 0 : -1;
  if (in_units(kind, g, algorithm)) {
    const Units units(kind, g);
    const Conv& c = units.conv(g, l, algorithm, 0);
    if (c.algorithm != algorithm) return -1;
    if (!c.primitive) return 0;
    return std::min<int64_t>(num_threads(), units.count()) *
           units.scratchpad_bytes(g, l, algorithm);
  }
  const Conv& c = conv(kind, g, l, algorithm, num_threads());
  if (c.algorithm != algorithm) return -1;
  return c.primitive ? scratchpad_size(c) : 0;
}

std::string conv_impl(ConvKind kind, const ConvGeom& g, ConvLayouts l, ConvAlgorithm algorithm) {
  if (empty(g)) return "";
  if (in_units(kind, g, algorithm)) return Units(kind, g).conv(g, l, algorithm, 0).impl;
  return conv(kind, g, l, algorithm, num_threads()).impl;
}

}  // namespace ytape::onednn
