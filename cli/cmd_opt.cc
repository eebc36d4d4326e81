#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/phases.h"
#include "opt/optimize.h"

namespace ytape::cli {

namespace {

struct OptCliOptions {
  std::string tape, out, stats_out;
  OptimizeOptions opt;
  bool stats = false;
};

void print_stats(const std::vector<PassRun>& log, size_t before, size_t after, double read_ms,
                 double opt_ms, double write_ms) {
  fmt::print(stderr, "read: {:.3f} ms\n", read_ms);
  for (const PassRun& r : log) {
    fmt::print(stderr, "{}: {} -> {} ops, {} changed, {:.3f} ms\n", r.pass, r.ops_before,
               r.ops_after, r.changed, r.seconds * 1e3);
  }
  fmt::print(stderr, "opt: {} -> {} ops in {} pass runs, {:.3f} ms\nwrite: {:.3f} ms\n", before,
             after, log.size(), opt_ms, write_ms);
}

}  // namespace

Run setup_opt(CLI::App& sub) {
  auto o = std::make_shared<OptCliOptions>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--passes", o->opt.passes,
                 "Passes to run, comma-separated, in order, repeated to a fixed point: fold, "
                 "simplify, cse, dce, inline, hoist (default: all six, in that order)")
      ->delimiter(',');
  sub.add_option("-o,--output", o->out,
                 "Write the optimized tape here instead of standard output; it may be the input "
                 "tape, which is read first (optimized in place)");
  sub.add_flag("--stats", o->stats,
               "Print the op count before and after each pass run, and its time, to stderr");
  add_stats_out(sub, o->stats_out);
  return [o] {
    for (const std::string& name : o->opt.passes) find_pass(name);  // fail before reading
    refuse_overwrites({{"TAPE", o->tape}}, {{"--stats-out", o->stats_out}});
    using ms = std::chrono::duration<double, std::milli>;
    PhaseLog phases;
    auto start = std::chrono::steady_clock::now();
    Tape t = load_tape(o->tape);
    size_t before = t.num_ops();
    auto loaded = std::chrono::steady_clock::now();
    phases.mark("read");
    std::vector<PassRun> log;
    bool logged = o->stats || !o->stats_out.empty();
    Tape optimized = optimize(std::move(t), o->opt, logged ? &log : nullptr);
    auto done = std::chrono::steady_clock::now();
    size_t opt = phases.mark("opt", {{"ops before", static_cast<int64_t>(before)},
                                     {"ops after", static_cast<int64_t>(optimized.num_ops())}});
    for (const PassRun& r : log) {
      phases.add_inside(opt, std::string(r.pass), r.seconds,
                        {{"ops before", static_cast<int64_t>(r.ops_before)},
                         {"ops after", static_cast<int64_t>(r.ops_after)},
                         {"changed", static_cast<int64_t>(r.changed)}});
    }
    write_tape_file(o->out, optimized);
    phases.mark("write");
    phases.write(o->stats_out, "ytape opt " + source_name(o->tape));
    if (o->stats) {
      print_stats(log, before, optimized.num_ops(), ms(loaded - start).count(),
                  ms(done - loaded).count(), ms(std::chrono::steady_clock::now() - done).count());
    }
    return kOk;
  };
}

}  // namespace ytape::cli
