// Planning and running with fusion against --fusion off on long tapes: fusion planning must
// stay linear in the tape (issue #42: an 8,000-op chain's gradient took 17-27 s with fusion,
// 0.03 s without). For each tape and size, the time of Executor construction (the plan:
// fusion, layouts, buffers) plus one run on made-up inputs, on one thread, the best of a
// few tries, with fusion on and off, and their ratio (goal: at most 2).
//
//   bench_fusion [max_ops [TAPE]]   (default 1000000, every tape)
//
// Tapes, built with the C++ builder at about 10^4, 10^5 and 10^6 ops (up to max_ops):
//   sin-chain:      x = sin(x) repeated on f32[16], then sum (forward only: one long group);
//   sin-chain-grad: the gradient of that chain (cos and mul in the backward sweep);
//   rnn-grad:       the gradient of an unrolled RNN, h = tanh(W h + x) on f32[8, 4], summed,
//                   with respect to W and x.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <utility>
#include <vector>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/parallel.h"
#include "tape/allocator.h"
#include "tape/builder.h"

using namespace ytape;

namespace {

Tape sin_chain(int64_t n) {
  Builder b("sin_chain");
  Var x = b.input("x", {DType::f32, {16}});
  for (int64_t i = 0; i < n; ++i) x = b.sin(x);
  b.output(b.sum(x, {.dims = {1}}), "y");
  return b.finish();
}

// One step is a matmul, an add and a tanh; every step adds the same x.
Tape rnn(int64_t steps) {
  Builder b("rnn");
  const Type type{DType::f32, {8, 4}};
  Var w = b.input("w", {DType::f32, {8, 8}});
  Var x = b.input("x", type);
  Var h = b.tanh(x);
  for (int64_t t = 1; t < steps; ++t) h = b.tanh(b.add(b.matmul(w, h), x));
  b.output(b.sum(h, {.dims = {1, 2}}), "y");
  return b.finish();
}

// Seconds of planning `t` and running it once.
double plan_and_run(const Tape& t, const TensorMap& inputs, bool fusion) {
  auto start = std::chrono::steady_clock::now();
  ExecutorOptions options;
  options.fusion = fusion;
  Executor e(t, options);
  e.run(inputs);
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
}

// The best of `tries` times with fusion on and off, tried in turns so that both meet the
// same load of a shared machine.
std::pair<double, double> best_times(const Tape& t, const TensorMap& inputs, int tries) {
  double on = 1e300, off = 1e300;
  for (int i = 0; i < tries; ++i) {
    on = std::min(on, plan_and_run(t, inputs, true));
    off = std::min(off, plan_and_run(t, inputs, false));
  }
  return {on, off};
}

struct Case {
  const char* name;
  std::function<Tape(int64_t ops)> make;  // a tape of about `ops` ops
};

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  // The tensors are tiny: a second thread would only add its wake-up to every executor
  // (milliseconds on a busy machine, more than planning 10^4 ops).
  set_num_threads(1);
  int64_t max_ops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  std::vector<Case> cases = {
      {"sin-chain", [](int64_t ops) { return sin_chain(ops); }},
      {"sin-chain-grad", [](int64_t ops) { return grad::gradient(sin_chain(ops / 3)); }},
      {"rnn-grad", [](int64_t ops) { return grad::gradient(rnn(ops / 11)); }},
  };
  fmt::print("{:<15} {:>9} {:>12} {:>12} {:>7}\n", "tape", "ops", "fusion on", "fusion off",
             "ratio");
  double worst = 0;
  for (const Case& c : cases) {
    if (argc > 2 && c.name != std::string(argv[2])) continue;
    for (int64_t n = 10000; n <= max_ops; n *= 10) {
      Tape t = c.make(n);
      TensorMap inputs = complete_inputs(t, {}, 1);
      int tries = n >= 1000000 ? 5 : n >= 100000 ? 11 : 31;  // the machine may be shared
      auto [on, off] = best_times(t, inputs, tries);
      worst = std::max(worst, on / off);
      fmt::print("{:<15} {:>9} {:>9.2f} ms {:>9.2f} ms {:>7.2f}\n", c.name, t.num_ops(), on * 1e3,
                 off * 1e3, on / off);
    }
  }
  fmt::print("\nworst ratio (goal <= 2): {:.2f}\n", worst);
  return 0;
}
