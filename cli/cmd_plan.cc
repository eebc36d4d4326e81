#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "runtime/executor.h"
#include "runtime/plan_print.h"
#include "train/binding.h"

namespace ytape::cli {

Run setup_plan(CLI::App& sub) {
  struct Options {
    std::string tape;
    ExecutionChoice execution;
    bool carry = false;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  add_execution_options(sub, o->execution);
  sub.add_flag("--carry", o->carry,
               "Plan as run --carry does: each output named out.P or P written over input P's "
               "buffer where nothing reads P after it");
  return [o] {
    ExecutorOptions options = o->execution.apply();
    Tape t = load_tape(o->tape);
    if (o->carry) options.donate = carry_pairs(t, source_name(o->tape));
    // Planning runs nothing; naming oneDNN's kernels builds them, as a first run would.
    Executor executor(t, options);
    write_file("", plan_str(executor.plan()));
    return kOk;
  };
}

}  // namespace ytape::cli
