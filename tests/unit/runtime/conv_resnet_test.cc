// The fast conv kernels (oneDNN in f32) at every convolution shape of ResNet-18, batch 1
// and 3, against the reference kernels in f64 (which conv_test.cc checks against the naive
// sum). Each element may differ by rounding relative to the sum of the magnitudes of its
// terms, which the reference computes on |x|, |w| and |dy|.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cmath>
#include <map>
#include <oneapi/dnnl/dnnl.hpp>
#include <string>
#include <tuple>
#include <vector>

#include "kernel_harness.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/kernels/conv.h"
#include "runtime/kernels/onednn.h"
#include "runtime/plan_print.h"
#include "tape/builder.h"

namespace ytape {

namespace {

using testing::check_close_scaled;
using testing::random_tensor;
using testing::run_op1;
using testing::run_op_in_layouts;
using testing::to_doubles;

struct Layer {
  int64_t size, cin, cout, k, stride, pad;
};

// ResNet-18 at 224x224: the stem, then per stage the first 3x3 (strided after stage 1), the
// 1x1 downsampling shortcut and the 3x3 that follows.
const Layer kLayers[] = {
    {224, 3, 64, 7, 2, 3},   {56, 64, 64, 3, 1, 1},   {56, 64, 128, 3, 2, 1},
    {56, 64, 128, 1, 2, 0},  {28, 128, 128, 3, 1, 1}, {28, 128, 256, 3, 2, 1},
    {28, 128, 256, 1, 2, 0}, {14, 256, 256, 3, 1, 1}, {14, 256, 512, 3, 2, 1},
    {14, 256, 512, 1, 2, 0}, {7, 512, 512, 3, 1, 1},
};

Tensor as_f64(const Tensor& t, bool magnitude) {
  Tensor out(Type{DType::f64, t.shape()});
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = t.data<float>()[i];
    out.data<double>()[i] = magnitude ? std::abs(v) : v;
  }
  return out;
}

// Runs `p` on the f32 arguments with the fast kernels, in both variants (Winograd's where
// it is faster), and checks them against the f64 reference kernel.
void check_op(Prim p, const std::vector<Tensor>& args, const Attrs& attrs) {
  std::vector<Tensor> wide, magnitudes;
  for (const Tensor& a : args) {
    wide.push_back(as_f64(a, false));
    magnitudes.push_back(as_f64(a, true));
  }
  std::vector<double> want = to_doubles(run_op1(p, wide, attrs, KernelSet::reference));
  std::vector<double> scale = to_doubles(run_op1(p, magnitudes, attrs, KernelSet::reference));
  for (Variant v : {Variant::standard, Variant::faster}) {
    CAPTURE(static_cast<int>(v));
    Tensor fast = run_op_in_layouts(p, args, attrs, {}, KernelSet::fast, v)[0];
    check_close_scaled(fast, want, scale, 2e-6, 1e-6);
  }
}

}  // namespace

TEST_CASE("the fast conv kernels match the reference at every ResNet-18 shape") {
  uint64_t seed = 1;
  for (const Layer& l : kLayers) {
    for (int64_t batch : {1, 3}) {
      CAPTURE(l.size);
      CAPTURE(l.cin);
      CAPTURE(l.cout);
      CAPTURE(l.k);
      CAPTURE(l.stride);
      CAPTURE(batch);
      int64_t out = (l.size + 2 * l.pad - l.k) / l.stride + 1;
      Shape xs{l.size, l.size, l.cin, batch}, ws{l.k, l.k, l.cin, l.cout};
      Shape ys{out, out, l.cout, batch};
      Attrs attrs{{"stride", std::vector<int64_t>{l.stride, l.stride}},
                  {"pad", std::vector<int64_t>{l.pad, l.pad, l.pad, l.pad}}};
      Tensor x = random_tensor({DType::f32, xs}, ++seed);
      Tensor w = random_tensor({DType::f32, ws}, ++seed);
      Tensor dy = random_tensor({DType::f32, ys}, ++seed);

      // oneDNN, not a fallback, computes these.
      Tensor y0(Type{DType::f32, ys});
      Attrs full = normalize_attrs(Prim::conv2d, attrs);
      ConvGeom g = conv_geom(attrs_of<Prim::conv2d>(full), x, w, y0);
      std::string impl =
          onednn::conv_impl(onednn::ConvKind::forward, g, {}, onednn::ConvAlgorithm::direct);
      CHECK(!impl.empty());

      check_op(Prim::conv2d, {x, w}, attrs);
      Attrs with_shape = attrs;
      with_shape.set("shape", xs);
      check_op(Prim::conv2d_backward_input, {dy, w}, with_shape);
      with_shape.set("shape", ws);
      check_op(Prim::conv2d_backward_filter, {x, dy}, with_shape);
    }
  }
}

TEST_CASE("Winograd is offered for the 3x3 stride-1 convolutions of large images") {
  // oneDNN has Winograd kernels on AVX-512 only; elsewhere every convolution is direct.
  bool avx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  auto geom = [](int64_t size, int64_t c, int64_t k, int64_t stride, int64_t batch) {
    int64_t out = (size + 2 * (k / 2) - k) / stride + 1;
    Tensor x(Type{DType::f32, Shape{size, size, c, batch}});
    Tensor w(Type{DType::f32, Shape{k, k, c, c}});
    Tensor y(Type{DType::f32, Shape{out, out, c, batch}});
    Attrs attrs{{"stride", std::vector<int64_t>{stride, stride}},
                {"pad", std::vector<int64_t>(4, k / 2)}};
    return conv_geom(attrs_of<Prim::conv2d>(normalize_attrs(Prim::conv2d, attrs)), x, w, y);
  };
  using onednn::ConvAlgorithm;
  for (const ConvGeom& g :
       {geom(56, 64, 3, 1, 1), geom(28, 128, 3, 1, 1), geom(14, 256, 3, 1, 8)}) {
    CHECK(onednn::winograd_faster(g));
    for (auto kind : {onednn::ConvKind::forward, onednn::ConvKind::backward_input,
                      onednn::ConvKind::backward_filter}) {
      CHECK(onednn::conv_impl(kind, g, {}, ConvAlgorithm::winograd).starts_with("jit_wino") ==
            avx512);
      CHECK(onednn::conv_impl(kind, g, {}, ConvAlgorithm::direct).find("wino") ==
            std::string::npos);
      CHECK((onednn::conv_scratchpad_bytes(kind, g, {}, ConvAlgorithm::winograd) > 0) == avx512);
    }
  }
  // Layer 4's 7x7 images, 14x14 at batch 1, strided and 1x1 convolutions, 32 channels.
  for (const ConvGeom& g : {geom(7, 512, 3, 1, 8), geom(14, 256, 3, 1, 1), geom(56, 64, 3, 2, 8),
                            geom(56, 64, 1, 1, 8), geom(8, 32, 3, 1, 32)}) {
    CHECK(!onednn::winograd_faster(g));
  }
}

// Two Winograd convolutions (on AVX-512, allowed any memory; direct ones elsewhere) and the
// gradients of the second: each step whose oneDNN primitive needs work memory gets a buffer of the
// plan for it, apart from the buffers the step reads and writes, and the results are the reference
// kernels'.
TEST_CASE("a convolution's work memory is a buffer of the executor's plan") {
  Builder b("wino");
  Var x = b.input("x", {DType::f32, {28, 28, 64, 8}});
  Var w = b.input("w", {DType::f32, {3, 3, 64, 64}});
  Var dz = b.input("dz", {DType::f32, {28, 28, 64, 8}});
  Var y = b.relu(b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}}));
  b.output(b.conv2d(y, w, {.pad = Shape{1, 1, 1, 1}}), "z");
  b.output(
      b.conv2d_backward_input(dz, w, {.shape = Shape{28, 28, 64, 8}, .pad = Shape{1, 1, 1, 1}}),
      "dy");
  b.output(
      b.conv2d_backward_filter(y, dz, {.shape = Shape{3, 3, 64, 64}, .pad = Shape{1, 1, 1, 1}}),
      "dw");
  Tape t = b.finish();
  Executor fast(t, {.extra_work_bytes = INT64_MAX}),
      reference(t, {.kernels = KernelSet::reference, .extra_work_bytes = std::nullopt});
  std::map<uint32_t, int64_t> slot_of;  // of each computed value
  for (const PlannedStep& s : planned_steps(fast.plan())) {
    for (size_t i = 0; i < s.outs.size(); ++i) slot_of[s.outs[i].id] = s.buffers[i];
  }
  int with_work = 0;
  for (const PlannedStep& s : planned_steps(fast.plan())) {
    WorkspaceSize size = kernel_table().workspace[static_cast<int>(s.op->prim)];
    if (size == nullptr) continue;
    std::vector<Layout> layouts = s.reads;
    layouts.insert(layouts.end(), s.writes.begin(), s.writes.end());
    int64_t needed = size(t, *s.op, layouts.data(), s.variant);
    CAPTURE(s.name);
    CHECK((s.workspace >= 0) == (needed > 0));
    if (s.workspace < 0) continue;
    ++with_work;
    CHECK(fast.plan().slot_bytes[s.workspace] >= needed);
    for (int64_t slot : s.buffers) CHECK(slot != s.workspace);
    for (Var a : s.args) CHECK((!slot_of.contains(a.id) || slot_of[a.id] != s.workspace));
  }
  bool avx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  if (avx512) CHECK(with_work >= 3);  // Winograd's transformed tiles
  TensorMap inputs = complete_inputs(t, {}, 5);
  std::vector<Tensor> got = fast.run(inputs), want = reference.run(inputs);
  for (size_t i = 0; i < got.size(); ++i) {
    testing::check_close(got[i], to_doubles(want[i]), 1e-3, 1e-3);
  }
}

// The variant of each convolution step of `e`'s plan.
std::vector<Variant> conv_variants(const Executor& e) {
  std::vector<Variant> v;
  for (const PlannedStep& s : planned_steps(e.plan())) {
    if (s.op->prim == Prim::conv2d) v.push_back(s.variant);
  }
  return v;
}

TEST_CASE("Winograd runs where its work memory fits in the plan, unless allowed more") {
  bool avx512 = dnnl::get_effective_cpu_isa() >= dnnl::cpu_isa::avx512_core;
  Type image{DType::f32, {28, 28, 64, 1}};
  // A conv after values of these sizes have died.
  auto tape = [&](const std::vector<int64_t>& freed_floats) {
    Builder b("fits");
    Var x = b.input("x", image);
    Var w = b.input("w", {DType::f32, {3, 3, 64, 64}});
    std::vector<Var> big;
    for (int64_t n : freed_floats)
      big.push_back(b.input(fmt::format("big{}", n), {DType::f32, {n}}));
    for (Var& v : big) v = b.relu(v);  // all live at once, then all dead
    for (size_t i = 0; i < big.size(); ++i) {
      b.output(b.sum(big[i], {.dims = Shape{1}}), fmt::format("s{}", i));
    }
    b.output(b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}}), "y");
    return b.finish();
  };
  Tape alone = tape({});
  std::vector<Layout> plain(3, Layout::plain);
  int64_t work = kernel_table().workspace[static_cast<int>(Prim::conv2d)](
      alone, alone.ops.back(), plain.data(), Variant::faster);
  CHECK((work > 0) == avx512);
  if (!avx512) return;
  // Alone, Winograd would raise the peak by its work memory.
  CHECK(conv_variants(Executor(alone)) == std::vector{Variant::standard});
  Executor allowed(alone, {.extra_work_bytes = INT64_MAX});
  CHECK(conv_variants(allowed) == std::vector{Variant::faster});
  CHECK(allowed.plan().planned_bytes() > Executor(alone).plan().planned_bytes());
  // After a larger value has died, it lies where that one lay, at no cost (and the
  // convolution's output where another one lay).
  Tape after = tape({work / 4 + 1, image.size()});
  Executor fits(after), standard(after, {.extra_work_bytes = -1});
  CHECK(conv_variants(fits) == std::vector{Variant::faster});
  CHECK(conv_variants(standard) == std::vector{Variant::standard});
  CHECK(fits.plan().planned_bytes() == standard.plan().planned_bytes());
  TensorMap inputs = complete_inputs(after, {}, 3);
  std::vector<Tensor> got = fits.run(inputs), want = standard.run(inputs);
  testing::check_close(got.back(), to_doubles(want.back()), 1e-4, 1e-4);
}

TEST_CASE("the fast conv kernels give the same bytes run to run") {
  // Winograd on AVX-512 (28x28, batch 8), and im2col + oneDNN's GEMM (layer 4, batch 1).
  for (const auto& bound : {std::tuple<int64_t, int64_t, int64_t>{28, 128, 8}, {7, 512, 1}}) {
    const auto& size = std::get<0>(bound);
    const auto& c = std::get<1>(bound);
    const auto& batch = std::get<2>(bound);
    CAPTURE(size);
    Shape xs{size, size, c, batch}, ws{3, 3, c, c};
    Attrs attrs{{"pad", std::vector<int64_t>{1, 1, 1, 1}}, {"shape", ws}};
    Tensor x = random_tensor({DType::f32, xs}, 7);
    Tensor dy = random_tensor({DType::f32, xs}, 8);
    auto run = [&] {
      return run_op_in_layouts(Prim::conv2d_backward_filter, {x, dy}, attrs, {}, KernelSet::fast,
                               Variant::faster)[0];
    };
    Tensor first = run();
    for (int i = 0; i < 3; ++i) {
      Tensor again = run();
      CHECK(std::equal(first.span<float>().begin(), first.span<float>().end(),
                       again.span<float>().begin()));
    }
  }
}

}  // namespace ytape
