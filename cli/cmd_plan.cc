#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "runtime/executor.h"
#include "runtime/parallel.h"
#include "runtime/plan_print.h"

namespace ytape::cli {

Run setup_plan(CLI::App& sub) {
  struct Options {
    std::string tape, kernels = "fast", layouts = "blocked";
    int threads = 0;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--kernels", o->kernels, "fast (default) or reference, as for ytape run")
      ->check(one_of({"fast", "reference"}));
  sub.add_option("--layouts", o->layouts, "blocked (default) or plain, as for ytape run")
      ->check(one_of({"blocked", "plain"}));
  sub.add_option("--threads", o->threads, "Threads, as for ytape run")->check(CLI::Range(1, 256));
  return [o] {
    if (o->threads > 0) set_num_threads(o->threads);
    Tape t = load_tape(o->tape);
    ExecutorOptions options;
    options.kernels = o->kernels == "fast" ? KernelSet::fast : KernelSet::reference;
    options.blocked_layouts = o->layouts == "blocked";
    // Planning runs nothing; naming oneDNN's kernels builds them, as a first run would.
    write_file("", plan_str(t, Executor(t, options)));
    return kOk;
  };
}

}  // namespace ytape::cli
