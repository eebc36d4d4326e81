// The optimization passes at scale: `optimize` (all passes to a fixed point) on the
// gradient tape of ResNet-18 traced from samples/resnet18.jl, with its op counts before
// and after, and on scalar tapes of 10^4, 10^5 and 10^6 ops and their gradients, reporting
// time per op; the passes must be linear.
//
// usage: bench_opt [max_ops]   (default 1000000; run from anywhere)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <map>
#include <vector>

#include "grad/grad.h"
#include "opt/optimize.h"
#include "samples/cpp/models.h"
#include "tape/allocator.h"
#include "tracer/program.h"
#include "tracer/trace.h"

using namespace ytape;

namespace {

// Median seconds of `runs` optimizations of `t` (the copy each one consumes is made
// outside the clock), the result's op count and the log of the last run.
double opt_seconds(const Tape& t, int runs, size_t* ops, std::vector<PassRun>* log) {
  std::vector<double> s;
  for (int i = 0; i < runs; ++i) {
    Tape copy = t;
    log->clear();
    auto start = std::chrono::steady_clock::now();
    Tape o = optimize(std::move(copy), {}, log);
    s.push_back(std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    *ops = o.num_ops();
  }
  std::sort(s.begin(), s.end());
  return s[s.size() / 2];
}

// "fold 0.12 ms (3 runs, 17 changed), ..." from one optimization's log.
std::string per_pass(const std::vector<PassRun>& log) {
  std::map<std::string_view, std::pair<double, size_t>> time_changed;
  std::map<std::string_view, int> runs;
  for (const PassRun& r : log) {
    time_changed[r.pass].first += r.seconds;
    time_changed[r.pass].second += r.changed;
    ++runs[r.pass];
  }
  std::string out;
  for (const PassInfo& p : all_passes()) {
    if (!runs.count(p.name)) continue;
    out += fmt::format("{}{} {:.3f} ms ({} runs, {} changed)", out.empty() ? "" : ", ", p.name,
                       time_changed[p.name].first * 1e3, runs[p.name], time_changed[p.name].second);
  }
  return out;
}

std::map<std::string_view, size_t> counts(const Tape& t) {
  std::map<std::string_view, size_t> c;
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::call) ++c[prim_name(op.prim)];
    if (op.kind == OpKind::constant) ++c["const"];
  }
  return c;
}

void resnet18() {
  tracer::Program program;
  program.set_print([](std::string_view) {});
  program.run_file(YTAPE_SOURCE_DIR "/samples/resnet18.jl");
  Tape forward = tracer::trace(program, "loss", {"model", "image"}).tape;
  Tape g = grad::gradient(forward);
  for (auto [name, t] :
       {std::pair<const char*, const Tape*>{"forward", &forward}, {"gradient", &g}}) {
    size_t ops = 0;
    std::vector<PassRun> log;
    double s = opt_seconds(*t, 21, &ops, &log);
    fmt::print("ResNet-18 {}: {} ops -> {} ops in {:.3f} ms{}\n  {}\n", name, t->num_ops(), ops,
               s * 1e3, t == &g ? " (goal < 10 ms)" : "", per_pass(log));
  }
  std::map<std::string_view, size_t> before = counts(g), after = counts(optimize(g));
  fmt::print("  gradient ops by primitive, before -> after, where they differ:\n");
  for (const auto& [prim, n] : before) {
    if (after[prim] != n) fmt::print("    {:<24} {:>5} -> {}\n", prim, n, after[prim]);
  }
  for (const auto& [prim, n] : after) {
    if (!before.count(prim)) fmt::print("    {:<24} {:>5} -> {}\n", prim, 0, n);
  }
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  int64_t max_ops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  resnet18();
  fmt::print("\n{:>9} {:>9} {:>10} {:>10} {:>12}\n", "chain", "tape", "ops", "opt ops",
             "ns per op");
  std::vector<double> per_op[2];
  for (int64_t n = 10000; n <= max_ops; n *= 10) {
    Tape chain = samples::scalar_chain(n);
    Tape tapes[2] = {chain, grad::gradient(chain)};
    for (int k = 0; k < 2; ++k) {
      size_t ops = 0;
      std::vector<PassRun> log;
      double s = opt_seconds(tapes[k], n >= 1000000 ? 3 : 5, &ops, &log);
      size_t before = tapes[k].num_ops();
      per_op[k].push_back(s * 1e9 / static_cast<double>(before));
      fmt::print("{:>9} {:>9} {:>10} {:>10} {:>12.0f}{}\n", n, k ? "gradient" : "forward", before,
                 ops, per_op[k].back(),
                 n >= 1000000 ? fmt::format("   ({:.3f} s, {:.3f} s per 10^6 ops; goal < 1 s)", s,
                                            s * 1e6 / static_cast<double>(before))
                              : "");
      if (n == max_ops) fmt::print("{:>21}{}\n", "", per_pass(log));
    }
  }
  for (int k = 0; k < 2; ++k) {
    if (per_op[k].size() < 2) continue;
    fmt::print(
        "linearity, {} (time per op at the largest size / at a tenth of it; goal <= 1.3): {:.2f}\n",
        k ? "gradient" : "forward", per_op[k].back() / per_op[k][per_op[k].size() - 2]);
  }
  return 0;
}
