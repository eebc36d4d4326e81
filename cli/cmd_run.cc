#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "runtime/executor.h"
#include "runtime/format.h"
#include "runtime/parallel.h"
#include "runtime/profile.h"
#include "runtime/tensor_file.h"
#include "tape/strings.h"

namespace ytape::cli {

namespace {

struct RunOptions {
  std::string tape, inputs, out;
  bool random = false, profile = false;
  uint64_t seed = 0;
  int repeat = 1;
  ExecutionChoice execution;
};

void print_outputs(const Tape& t, const std::vector<Tensor>& outs) {
  for (size_t i = 0; i < outs.size(); ++i) {
    fmt::print("{} {} {}\n", printable(t.outputs[i].name), type_str(outs[i].type()),
               summary_str(outs[i]));
  }
}

}  // namespace

Run setup_run(CLI::App& sub) {
  auto o = std::make_shared<RunOptions>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--inputs", o->inputs,
                 "Input values: a .safetensors file, or a .json file of name -> nested arrays");
  sub.add_flag("--random", o->random, "Make up the inputs not given, deterministically");
  sub.add_option(
      "--seed", o->seed,
      "Seed of --random and key of the tape's random ops (default 0: the seeds the tape records)");
  sub.add_option("-o,--output", o->out, "Write the outputs to this safetensors file");
  sub.add_flag("--profile", o->profile,
               "Print time per primitive and the most costly ops (with --repeat, of the runs "
               "after the first, which builds oneDNN's kernels)");
  sub.add_option("--repeat", o->repeat, "Run N times and report the median time")
      ->check(positive());
  add_execution_options(sub, o->execution);
  return [o] {
    ExecutorOptions options = o->execution.apply();
    refuse_overwrites({{"TAPE", o->tape}, {"--inputs", o->inputs}}, {{"-o", o->out}});
    Tape t = load_tape(o->tape);
    TensorMap inputs = gather_inputs(t, o->inputs, o->random, o->seed);
    Executor executor(t, options);
    executor.set_random_key(o->seed);
    std::vector<Tensor> outs;
    std::vector<double> ms;
    // The first of repeated runs is a warm-up: oneDNN generates its kernels (25 ms for one
    // GEMM shape) and buffers are first touched, which would swamp a mean over few runs.
    int profiled = o->repeat > 1 ? o->repeat - 1 : 1;
    for (int i = 0; i < o->repeat; ++i) {
      executor.set_profiling(o->profile && i >= o->repeat - profiled);
      outs.clear();  // the last run's outputs must not stay alive during the next
      auto start = std::chrono::steady_clock::now();
      outs = executor.run(inputs);
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
    }
    if (o->out.empty()) {
      print_outputs(t, outs);
    } else {
      TensorMap named;
      for (size_t i = 0; i < outs.size(); ++i) named.emplace_back(t.outputs[i].name, outs[i]);
      std::vector<uint8_t> bytes = write_safetensors(named);
      write_file(o->out, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    }
    if (o->repeat > 1) {
      std::sort(ms.begin(), ms.end());
      fmt::print("time: median {:.3f} ms over {} runs (min {:.3f}, max {:.3f}); {} threads\n",
                 ms[ms.size() / 2], ms.size(), ms.front(), ms.back(), num_threads());
    }
    if (o->profile) fmt::print("\n{}", profile_report(executor, profiled));
    return kOk;
  };
}

}  // namespace ytape::cli
