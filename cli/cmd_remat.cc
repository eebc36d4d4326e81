#include <fmt/format.h>

#include <charconv>
#include <chrono>
#include <cmath>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/phases.h"
#include "opt/remat.h"
#include "tape/error.h"

namespace ytape::cli {

namespace {

struct RematCliOptions {
  std::string tape, out, budget, policy, stats_out;
  std::vector<std::string> forward;
  bool stats = false;
};

// "50%" as a share, "200MB", "1.5GiB" or "4096" as bytes, into `o`.
void parse_budget(const std::string& text, RematOptions& o) {
  double number = 0;
  auto [end, ec] = std::from_chars(text.data(), text.data() + text.size(), number);
  std::string unit(end, text.data() + text.size());
  static const std::pair<const char*, double> units[] = {
      {"", 1},     {"B", 1},        {"kB", 1e3},        {"KB", 1e3},           {"MB", 1e6},
      {"GB", 1e9}, {"KiB", 1024.0}, {"MiB", 1048576.0}, {"GiB", 1073741824.0}, {"%", 0}};
  for (auto [name, scale] : units) {
    if (ec != std::errc() || unit != name || !std::isfinite(number) || number <= 0) continue;
    if (scale == 0) {
      o.budget_share = number / 100;
    } else {
      o.budget_bytes = static_cast<int64_t>(number * scale);
    }
    return;
  }
  user_error(
      "remat: --budget '{}' is not a memory size: give bytes with a unit (200MB, 1.5GiB; "
      "kB, MB, GB are powers of 1000, KiB, MiB, GiB of 1024) or a share of the tape's "
      "present peak (50%)",
      text);
}

void print_stats(const RematResult& r, double ms) {
  auto mib = [](int64_t b) { return b / 1048576.0; };
  fmt::print(stderr, "peak (runtime plan buffers): {:.1f} MiB -> {:.1f} MiB ({:.0f}%)\n",
             mib(r.peak_before), mib(r.peak_after),
             100.0 * r.peak_after / std::max<int64_t>(r.peak_before, 1));
  fmt::print(stderr, "recomputed: {} ops, {:.3f} GFLOP ({:.1f}% of the tape's {:.3f} GFLOP)\n",
             r.recomputed_ops, r.recomputed_flops * 1e-9,
             100.0 * r.recomputed_flops / std::max(r.flops_before, 1.0), r.flops_before * 1e-9);
  fmt::print(stderr,
             "kept: {} forward ops whose values the backward reads, {} of them segment ends\n",
             r.kept, r.segments);
  fmt::print(stderr, "remat: {:.3f} ms\n", ms);
}

}  // namespace

Run setup_remat(CLI::App& sub) {
  auto o = std::make_shared<RematCliOptions>();
  sub.add_option("TAPE", o->tape, "Gradient tape in JSON form, or - for standard input")
      ->required();
  sub.add_option("--budget", o->budget,
                 "The most memory the run's intermediate buffers may take: bytes with a unit "
                 "(200MB, 1.5GiB) or a share of the tape's present peak (50%)");
  sub.add_option("--policy", o->policy,
                 "What may be kept besides segment ends: dots (matmul and convolution outputs), "
                 "nothing, everything (default), all-but-elementwise (all but the values a few "
                 "elementwise ops compute again from kept ones: an activation's "
                 "intermediates), or primitives separated by commas; without --budget all of "
                 "it is kept and the rest recomputed");
  sub.add_option("--forward", o->forward,
                 "The outputs of the forward part (default: every output not named grad.* or "
                 "tangent.*)")
      ->delimiter(',');
  sub.add_option("-o,--output", o->out, "Write the tape here instead of standard output");
  sub.add_flag("--stats", o->stats,
               "Print the peak memory before and after, what is recomputed and the time");
  add_stats_out(sub, o->stats_out);
  return [o] {
    RematOptions options;
    options.forward_outputs = o->forward;
    if (!o->budget.empty()) parse_budget(o->budget, options);
    if (!o->policy.empty()) set_remat_policy(options, o->policy);
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}, {"--stats-out", o->stats_out}});
    PhaseLog phases;
    Tape t = load_tape(o->tape);
    phases.mark("read");
    auto start = std::chrono::steady_clock::now();
    RematResult r = rematerialize(t, options);
    std::chrono::duration<double, std::milli> took = std::chrono::steady_clock::now() - start;
    phases.mark("remat", {{"peak bytes before", r.peak_before},
                          {"peak bytes after", r.peak_after},
                          {"recomputed ops", static_cast<int64_t>(r.recomputed_ops)}});
    write_tape_file(o->out, r.tape);
    phases.mark("write");
    phases.write(o->stats_out, "ytape remat " + source_name(o->tape));
    if (o->stats) print_stats(r, took.count());
    return kOk;
  };
}

}  // namespace ytape::cli
