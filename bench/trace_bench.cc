// Tracing benchmark: how long `ytape trace` takes on ResNet-18 once its top level has run
// (goal: under 20 ms), and how many ops per second the tracer records on a long unrolled
// scalar loop (goal: at least 2 million).
//
//   bench_trace [--repeat R] [--iterations N] [--program DIR] [--json] [CONFIG...]
//
// CONFIG is resnet18 (samples/resnet18.jl, `loss(model, image)`) or scalar-loop (a loop of
// N iterations, default 10^6, of `s = s * 1.0001 + 0.5` on a traced Float32), default
// both. Each config reports the phases of `ytape trace --stats`: parse (the prelude and
// the program), top level (running them, weights included), trace (median and minimum
// of R traces of the entry on the same interpreter), write (the tape as JSON); and the
// recorded ops per second of the fastest trace. Times are wall-clock; `trace cpu` is the
// processor time of the fastest trace, steadier than wall-clock on a loaded machine.
#include <fmt/format.h>
#include <time.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "io/json.h"
#include "runtime/tensor.h"
#include "tape/allocator.h"
#include "tracer/program.h"
#include "tracer/trace.h"

using namespace ytape;

namespace {

struct Options {
  int repeat = 0;  // 0: a count that suits the config
  int64_t iterations = 1000000;
  std::string program_dir = YTAPE_SOURCE_DIR "/samples";
  bool json = false;
};

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point start) {
  return std::chrono::duration<double, std::milli>(Clock::now() - start).count();
}

double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}

// The scalar loop; `n` is a static argument, so the loop is unrolled into the tape.
std::string scalar_loop_program() {
  return "x = 1.0f0\n"
         "function f(x, n)\n"
         "  s = x\n"
         "  for i in 1:n\n"
         "    s = s * 1.0001 + 0.5\n"
         "  end\n"
         "  s\n"
         "end\n";
}

struct Result {
  double parse_ms = 0, top_ms = 0, median_ms = 0, min_ms = 0, cpu_ms = 0, write_ms = 0;
  size_t ops = 0;
};

Result run_config(const std::string& config, const Options& o) {
  Result r;
  auto start = Clock::now();
  tracer::Limits limits;
  // Every iteration records a few ops; leave room above the default limit.
  limits.max_ops = std::max<int64_t>(limits.max_ops, 8 * o.iterations);
  // The scalar loop measures recording speed: unrolled, as `ytape trace --loops unroll`.
  limits.loops = tracer::LoopMode::unroll;
  tracer::Program program(limits);
  bool resnet = config == "resnet18";
  if (resnet) {
    program.run_file(o.program_dir + "/resnet18.jl");
  } else {
    program.run_text("scalar_loop.jl", scalar_loop_program());
  }
  r.parse_ms = program.parse_seconds() * 1000;
  r.top_ms = ms_since(start) - r.parse_ms;
  std::string entry = resnet ? "loss" : "f";
  std::vector<std::string> args = resnet
                                      ? std::vector<std::string>{"model", "image"}
                                      : std::vector<std::string>{"x", std::to_string(o.iterations)};
  tracer::TraceOptions options;
  options.max_ops = limits.max_ops;
  int repeat = o.repeat > 0 ? o.repeat : resnet ? 20 : 3;
  std::vector<double> ms, cpu;
  Tape tape;
  for (int i = 0; i < repeat; ++i) {
    tape = Tape();  // freeing the previous tape is not part of the next trace
    start = Clock::now();
    double cpu_start = cpu_ms();
    tape = tracer::trace(program, entry, args, options).tape;
    ms.push_back(ms_since(start));
    cpu.push_back(cpu_ms() - cpu_start);
  }
  std::sort(ms.begin(), ms.end());
  r.median_ms = ms[ms.size() / 2];
  r.min_ms = ms.front();
  r.cpu_ms = *std::min_element(cpu.begin(), cpu.end());
  r.ops = tape.num_ops();
  start = Clock::now();
  std::string json = write_tape_json(tape);
  r.write_ms = ms_since(start);
  return r;
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  keep_freed_buffers();
  Options o;
  std::vector<std::string> configs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--repeat" && i + 1 < argc)
      o.repeat = std::atoi(argv[++i]);
    else if (arg == "--iterations" && i + 1 < argc)
      o.iterations = std::atoll(argv[++i]);
    else if (arg == "--program" && i + 1 < argc)
      o.program_dir = argv[++i];
    else if (arg == "--json")
      o.json = true;
    else if (arg == "resnet18" || arg == "scalar-loop")
      configs.push_back(arg);
    else {
      fmt::print(stderr,
                 "usage: bench_trace [--repeat R] [--iterations N] [--program DIR] "
                 "[--json] [resnet18] [scalar-loop]\n");
      return 2;
    }
  }
  if (configs.empty()) configs = {"resnet18", "scalar-loop"};
  if (!o.json) {
    fmt::print("{:<12} {:>8} {:>9} {:>9} {:>10} {:>9} {:>9} {:>9} {:>9} {:>7}\n", "config", "ops",
               "parse ms", "top ms", "trace med", "min ms", "trace cpu", "write ms", "M ops/s",
               "ns/op");
  }
  for (const std::string& config : configs) {
    Result r;
    try {
      r = run_config(config, o);
    } catch (const std::exception& e) {
      fmt::print(stderr, "{}: {}\n", config, e.what());
      return 1;
    }
    double per_second = static_cast<double>(r.ops) / (r.min_ms * 1e-3);
    double ns_per_op = r.min_ms * 1e6 / static_cast<double>(r.ops);
    if (o.json) {
      fmt::print(
          "{{\"config\":\"{}\",\"ops\":{},\"parse_ms\":{:.3f},\"top_level_ms\":{:.3f},"
          "\"trace_median_ms\":{:.3f},\"trace_min_ms\":{:.3f},\"trace_cpu_ms\":{:.3f},"
          "\"write_ms\":{:.3f},\"ops_per_s\":{:.0f},\"ns_per_op\":{:.1f}}}\n",
          config, r.ops, r.parse_ms, r.top_ms, r.median_ms, r.min_ms, r.cpu_ms, r.write_ms,
          per_second, ns_per_op);
    } else {
      fmt::print(
          "{:<12} {:>8} {:>9.2f} {:>9.2f} {:>10.2f} {:>9.2f} {:>9.2f} {:>9.2f} {:>9.2f} "
          "{:>7.0f}\n",
          config, r.ops, r.parse_ms, r.top_ms, r.median_ms, r.min_ms, r.cpu_ms, r.write_ms,
          per_second / 1e6, ns_per_op);
    }
  }
  return 0;
}
