// The gradient transformation at scale: ResNet-18 traced from samples/resnet18.jl, and
// synthetic scalar tapes of 10^4, 10^5 and 10^6 ops, reporting time per op; the
// transformation must be linear.
//
// usage: bench_grad [max_ops]   (default 1000000; run from anywhere)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <vector>

#include "grad/grad.h"
#include "samples/cpp/models.h"
#include "tape/allocator.h"
#include "tracer/program.h"
#include "tracer/trace.h"

using namespace ytape;

namespace {

// Median seconds of `runs` gradients of `t`, and the gradient tape's size.
double grad_seconds(const Tape& t, int runs, size_t* ops) {
  std::vector<double> s;
  for (int i = 0; i < runs; ++i) {
    auto start = std::chrono::steady_clock::now();
    Tape g = grad::gradient(t);
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    *ops = g.num_ops();
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  int64_t max_ops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(YTAPE_SOURCE_DIR "/samples/resnet18.jl");
  Tape resnet = tracer::trace(program, "loss", {"model", "image"}).tape;
  size_t ops = 0;
  double s = grad_seconds(resnet, 21, &ops);
  fmt::print("ResNet-18: {} ops -> {} ops in {:.3f} ms (goal < 10 ms)\n\n", resnet.num_ops(), ops,
             s * 1e3);

  fmt::print("{:>9} {:>10} {:>12}\n", "ops", "grad ops", "ns per op");
  std::vector<double> per_op;
  for (int64_t n = 10000; n <= max_ops; n *= 10) {
    Tape t = samples::scalar_chain(n);
    s = grad_seconds(t, n >= 1000000 ? 3 : 5, &ops);
    per_op.push_back(s * 1e9 / static_cast<double>(n));
    fmt::print("{:>9} {:>10} {:>12.0f}{}\n", n, ops, per_op.back(),
               n == 1000000 ? fmt::format("   ({:.3f} s; goal < 1 s)", s) : "");
  }
  if (per_op.size() >= 2) {
    fmt::print(
        "\nlinearity (time per op at the largest size / at a tenth of it; goal <= 1.3): {:.2f}\n",
        per_op.back() / per_op[per_op.size() - 2]);
  }
  return 0;
}
