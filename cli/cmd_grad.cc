#include <fmt/format.h>

#include <chrono>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/phases.h"
#include "grad/grad.h"
#include "grad/jvp.h"
#include "grad/vmap.h"

namespace ytape::cli {

namespace {

struct GradCliOptions {
  std::string tape, out, stats_out;
  grad::GradOptions grad;
  bool stats = false;
};

}  // namespace

Run setup_grad(CLI::App& sub) {
  auto o = std::make_shared<GradCliOptions>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--wrt", o->grad.wrt,
                 "Inputs to differentiate with respect to: names or dotted prefixes "
                 "(default: every float input)");
  sub.add_flag("--vjp", o->grad.vjp, "Vector-Jacobian product: add a seed input per float output");
  sub.add_flag("--remat", o->grad.remat,
               "Scans store only carries and the backward computes the steps again (less "
               "memory, more time) instead of storing what it reads: a scan of T >= 16 steps "
               "stores the carries of segments of about sqrt(T) steps (docs/regions.md)");
  sub.add_option("-o,--output", o->out, "Write the gradient tape here instead of standard output");
  sub.add_flag("--stats", o->stats, "Print op counts and the time of each phase");
  add_stats_out(sub, o->stats_out);
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}, {"--stats-out", o->stats_out}});
    PhaseLog phases;
    auto start = std::chrono::steady_clock::now();
    auto loaded = start;
    grad::GradStats stats;
    Tape g;
    {  // the tape is dropped before the gradient's JSON is written, which reuses its memory
      Tape t = load_tape(o->tape);
      loaded = std::chrono::steady_clock::now();
      phases.mark("read");
      g = grad::gradient(t, o->grad, &stats);
    }
    auto done = std::chrono::steady_clock::now();
    phases.mark("grad", {{"ops before", static_cast<int64_t>(stats.forward_ops)},
                         {"ops after", static_cast<int64_t>(stats.ops)},
                         {"rules", static_cast<int64_t>(stats.rules)}});
    write_tape_file(o->out, g);
    phases.mark("write");
    phases.write(o->stats_out, "ytape grad " + source_name(o->tape));
    if (o->stats) {
      using ms = std::chrono::duration<double, std::milli>;
      fmt::print(stderr,
                 "read: {:.3f} ms\ngrad: {:.3f} ms ({} ops -> {} ops, {} rules)\n"
                 "write: {:.3f} ms\n",
                 ms(loaded - start).count(), ms(done - loaded).count(), stats.forward_ops,
                 stats.ops, stats.rules, ms(std::chrono::steady_clock::now() - done).count());
    }
    return kOk;
  };
}

Run setup_jvp(CLI::App& sub) {
  struct Options {
    std::string tape, out;
    grad::JvpOptions jvp;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--wrt", o->jvp.wrt,
                 "Inputs to differentiate: names or dotted prefixes, each given a tangent "
                 "input tangent.NAME (default: every float input)");
  sub.add_option("-o,--output", o->out, "Write the tangent tape here instead of standard output");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}});
    write_tape_file(o->out, grad::jvp(load_tape(o->tape), o->jvp));
    return kOk;
  };
}

Run setup_vmap(CLI::App& sub) {
  struct Options {
    std::string tape, out;
    grad::VmapOptions vmap;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--over", o->vmap.over,
                 "Inputs that get the batch dim (a new last dim): names or dotted prefixes, "
                 "comma-separated")
      ->required()
      ->delimiter(',');
  sub.add_option("--size", o->vmap.size, "The batch size B")->required()->check(positive());
  sub.add_option("-o,--output", o->out, "Write the batched tape here instead of standard output");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}});
    write_tape_file(o->out, grad::vmap(load_tape(o->tape), o->vmap));
    return kOk;
  };
}

}  // namespace ytape::cli
