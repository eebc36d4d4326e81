#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/phases.h"
#include "runtime/parallel.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::cli {

namespace {

struct TraceCliOptions {
  std::string program, entry, out, save_inputs, stats_out;
  std::vector<std::string> args, allow_read;
  bool stats = false;
  int64_t max_ops = 10'000'000;
  int64_t max_steps = tracer::kDefaultMaxSteps;
  int64_t max_trips = tracer::kDefaultMaxTrips;
  std::string loops = "auto";
};

// The example values run op by op, each op on a team of threads that waits for its
// slowest: beside other processes that keep the cores busy, that is one sharing a core, and
// every op waits for its turn (ResNet-18's example weights took 370 ms instead of 40 beside
// two busy threads). So the count follows the load at the start, as train's does.
void threads_for_load() {
  int free = free_cores(1);
  if (free < num_threads()) set_num_threads(std::max(free, 1));
  park_blas_threads();  // a new count starts OpenBLAS's threads
}

double ms_since(std::chrono::steady_clock::time_point start) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
      .count();
}

}  // namespace

Run setup_trace(CLI::App& sub) {
  auto o = std::make_shared<TraceCliOptions>();
  sub.add_option("PROGRAM", o->program, "Model program (.jl)")->required();
  sub.add_option("ARGS", o->args,
                 "Arguments of the entry: globals of the program, types such as f32[3,4], or "
                 "literals (integers, true/false, \"strings\")");
  sub.add_option("-f,--function", o->entry, "The entry function to trace")->required();
  sub.add_option("-o,--output", o->out, "Write the tape (JSON) here instead of standard output");
  sub.add_option("--save-inputs", o->save_inputs,
                 "Write the example values of the inputs to this safetensors file");
  sub.add_flag("--stats", o->stats, "Print the time of each phase and the size of the tape");
  add_stats_out(sub, o->stats_out);
  sub.add_option("--max-ops", o->max_ops, "Stop tracing beyond this many ops (default 10^7)")
      ->check(positive());
  sub.add_option("--max-steps", o->max_steps,
                 "Stop the program beyond this many steps, expressions evaluated (default 10^8; "
                 "0: no limit)")
      ->check(non_negative());
  sub.add_option("--loops", o->loops,
                 "How loops and branches on traced values are traced: auto (a for loop over a "
                 "range is a scan op where the body allows one and it runs 8 times or more; a "
                 "while on a traced condition a while_loop op; an if on a traced Bool a cond "
                 "op), scan (a scan op for every for loop, or an error saying why not) or "
                 "unroll (every loop unrolled, every traced branch guarded; docs/regions.md)")
      ->check(one_of({"auto", "scan", "unroll"}));
  sub.add_option("--max-trips", o->max_trips,
                 "The bound of a while loop traced as a while_loop op, which its gradient stores "
                 "steps for, unless the program gives one (`@max_trips N while ...`; default "
                 "1000); a run past it is an error naming the loop")
      ->check(positive());
  sub.add_option("--allow-read", o->allow_read,
                 "Let the program read and ask about files under this folder too, besides its "
                 "own folder (repeatable)")
      ->allow_extra_args(false);
  return [o] {
    refuse_overwrites(
        {{"PROGRAM", o->program}},
        {{"-o", o->out}, {"--save-inputs", o->save_inputs}, {"--stats-out", o->stats_out}});
    PhaseLog phases;
    auto start = std::chrono::steady_clock::now();
    threads_for_load();
    tracer::Limits limits;
    limits.max_steps = o->max_steps;
    limits.max_trips = o->max_trips;
    limits.loops = o->loops == "scan"     ? tracer::LoopMode::scan
                   : o->loops == "unroll" ? tracer::LoopMode::unroll
                                          : tracer::LoopMode::auto_;
    tracer::Program program(limits);
    for (const std::string& dir : o->allow_read) program.sandbox().allow(dir);
    // The tape goes to standard output unless -o is given; the program's prints then go
    // to standard error so they never mix with it.
    bool tape_to_stdout = o->out.empty() || o->out == "-";
    program.set_print([tape_to_stdout](std::string_view line) {
      fmt::print(tape_to_stdout ? stderr : stdout, "{}\n", line);
    });
    program.run_file(o->program);
    phases.mark("parse and top level", {{"steps", program.steps()}});
    double parse_ms = program.parse_seconds() * 1000;
    double top_ms = ms_since(start) - parse_ms;
    start = std::chrono::steady_clock::now();
    tracer::TraceOptions options;
    options.max_ops = o->max_ops;
    tracer::Traced traced = tracer::trace(program, o->entry, o->args, options);
    double trace_ms = ms_since(start);
    phases.mark("trace", {{"ops", static_cast<int64_t>(traced.tape.num_ops())}});
    start = std::chrono::steady_clock::now();
    write_tape_file(o->out, traced.tape);
    if (!o->save_inputs.empty()) write_safetensors_file(o->save_inputs, traced.inputs);
    phases.mark("write");
    phases.write(o->stats_out, "ytape trace " + source_name(o->program));
    if (o->stats) {
      fmt::print(stderr,
                 "parse: {:.3f} ms\ntop level: {:.3f} ms\ntrace: {:.3f} ms ({} ops)\n"
                 "write: {:.3f} ms\nsteps: {}\n",
                 parse_ms, top_ms, trace_ms, traced.tape.num_ops(), ms_since(start),
                 program.steps());
    }
    return kOk;
  };
}

}  // namespace ytape::cli
