// The executor's blocked-layout plan on a real network: ResNet-18 (64x64 images, batch 2),
// its forward tape and its gradient tape, gives the outputs of the all-plain plan, while
// keeping most activations blocked and reordering only at a few places; fusion changes no
// bit of them.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/plan_print.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape {

namespace {

Tape resnet18() {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(YTAPE_SOURCE_DIR "/samples/resnet18.jl");
  return tracer::trace(program, "loss", {"model", "f32[64,64,3,2]"}).tape;
}

// The largest difference of two runs' outputs, relative to the largest magnitude of each.
double largest_difference(const std::vector<Tensor>& a, const std::vector<Tensor>& b) {
  double worst = 0;
  for (size_t k = 0; k < a.size(); ++k) {
    double scale = 0, diff = 0;
    for (int64_t i = 0; i < a[k].size(); ++i) {
      double x = a[k].data<float>()[i], y = b[k].data<float>()[i];
      scale = std::max(scale, std::abs(x));
      diff = std::max(diff, std::abs(x - y));
    }
    worst = std::max(worst, scale > 0 ? diff / scale : diff);
  }
  return worst;
}

void check_plans_agree(const Tape& t, Layout block) {
  TensorMap inputs = complete_inputs(t, {}, 1);
  ExecutorOptions blocked_options;
  blocked_options.block = block;
  Executor blocked(t, blocked_options);
  ExecutorOptions plain_options;
  plain_options.blocked_layouts = false;
  Executor plain(t, plain_options);
  size_t kept = std::count(blocked.plan().layout_of.begin(), blocked.plan().layout_of.end(), block);
  CHECK(std::none_of(plain.plan().layout_of.begin(), plain.plan().layout_of.end(),
                     [](Layout l) { return l != Layout::plain; }));
  CAPTURE(kept);
  CAPTURE(blocked.plan().reorders_per_run());
  CHECK(kept > 40);                                     // the convolutions' and batch norms' images
  CHECK(blocked.plan().reorders_per_run() < kept / 4);  // max pooling, the final mean, the outputs
  std::vector<Tensor> a = blocked.run(inputs), b = plain.run(inputs);
  // The same kernels but for batch norm's order of summing: f32 rounding apart.
  CHECK(largest_difference(a, b) < 1e-4);
  // A second run of the blocked plan, and the plan without fusion, give the same bytes.
  ExecutorOptions unfused_options = blocked_options;
  unfused_options.fusion = false;
  Executor unfused(t, unfused_options);
  CHECK(unfused.plan().steps.size() > blocked.plan().steps.size());
  for (const std::vector<Tensor>& other : {blocked.run(inputs), unfused.run(inputs)}) {
    for (size_t k = 0; k < a.size(); ++k) {
      CHECK(std::equal(a[k].span<float>().begin(), a[k].span<float>().end(),
                       other[k].span<float>().begin()));
    }
  }
}

}  // namespace

TEST_CASE("ytape plan shows the kernels, layouts and reorders of ResNet-18") {
  Tape forward = resnet18();
  Executor e(forward);
  std::string plan = plan_str(e.plan());
  INFO(plan);
  // Blocked as oneDNN's convolutions want it on this machine: by 8 on AVX2, 16 on AVX-512.
  Layout native = native_blocked_layout();
  std::string bl = native == Layout::c8 ? "c8" : "c16";
  // The stem reads the plain image and writes blocked; the next convolution reads the
  // blocked output of batch norm and relu; max pooling reads a plain copy.
  CHECK(plan.find("%64 = conv2d(%63, %1) ") != std::string::npos);
  CHECK(plan.find("plain plain -> " + bl) != std::string::npos);
  CHECK(plan.find(bl + " plain -> " + bl) != std::string::npos);
  CHECK(plan.find("oneDNN ") != std::string::npos);
  // Batch norm and the relu after it run as one step, which names both ops.
  CHECK(plan.find("= batchnorm+relu(") != std::string::npos);
  CHECK(plan.find(" fuses %") != std::string::npos);
  // The final mean reads the blocked image as it is: nothing is reordered. In the
  // gradient, the mean's cotangent, broadcast back over the image, is reordered to the
  // blocked layout of the values it meets.
  CHECK(e.plan().reorders_per_run() == 0);
  grad::GradOptions options;
  options.wrt = {"model"};
  Tape backward = grad::gradient(forward, options);
  Executor eb(backward);
  CHECK(plan_str(eb.plan()).find("to " + bl + " for the next step\n") != std::string::npos);
  CHECK(plan.find(
            fmt::format("{} values kept blocked, {} reorders per run",
                        std::count(e.plan().layout_of.begin(), e.plan().layout_of.end(), native),
                        e.plan().reorders_per_run())) != std::string::npos);
}

TEST_CASE("the blocked-layout plan computes ResNet-18 and its gradient as the plain plan") {
  Tape forward = resnet18();
  grad::GradOptions options;
  options.wrt = {"model"};
  Tape backward = grad::gradient(forward, options);
  for (Layout block : {Layout::c8, Layout::c16}) {
    CAPTURE(block_of(block));
    check_plans_agree(forward, block);
    check_plans_agree(backward, block);
  }
}

}  // namespace ytape
