#include <fmt/format.h>

#include <memory>

#include "check/gradcheck.h"
#include "cli/commands.h"
#include "cli/io.h"
#include "cli/progress.h"

namespace ytape::cli {

namespace {

struct GradcheckCliOptions {
  std::string tape;
  std::vector<std::string> inputs;
  bool random = false, skip_extra = false;
  check::GradcheckOptions check;
  ExecutionChoice execution;
};

}  // namespace

Run setup_gradcheck(CLI::App& sub) {
  auto o = std::make_shared<GradcheckCliOptions>();
  check::GradcheckOptions& c = o->check;
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("--inputs", o->inputs,
                 "Input values: .safetensors, .npy, .npz or .json files, several merged")
      ->expected(1, -1);
  sub.add_flag("--skip-extra", o->skip_extra,
               "Leave out the tensors of --inputs that the tape does not read; without it they "
               "are an error");
  sub.add_flag("--random", o->random, "Make up the inputs not given, deterministically");
  sub.add_option("--seed", c.seed,
                 "Seed for --random, the directions and output seeds (default 0)");
  sub.add_option("--wrt", c.wrt,
                 "Inputs to check: names or dotted prefixes (default: every float input)");
  sub.add_option("--directions", c.directions,
                 "Random directions per input larger than --max-elements (default 3)")
      ->check(positive());
  sub.add_option("--max-elements", c.max_elements,
                 "Check inputs up to this size element by element (default 64)")
      ->check(non_negative());
  sub.add_option("--eps", c.eps, "Finite-difference step (default 1e-6)")->check(positive());
  sub.add_option("--rtol", c.rtol, "Relative tolerance (default 1e-5)")->check(non_negative());
  sub.add_option("--atol", c.atol, "Absolute tolerance (default 1e-7)")->check(non_negative());
  add_execution_options(sub, o->execution);
  return [o] {
    o->check.executor = o->execution.apply();
    Tape t = load_tape(o->tape);
    TensorMap inputs = gather_inputs(t, o->inputs, o->random, o->check.seed, o->skip_extra);
    Progress progress;
    check::GradcheckOptions options = o->check;
    options.progress = [&](std::string_view input, int64_t done, int64_t total) {
      progress.update(fmt::format("gradcheck: {}/{} checks ({:.0f}%), {}", done, total,
                                  100.0 * static_cast<double>(done) / static_cast<double>(total),
                                  input));
    };
    check::GradcheckResult r = check::gradcheck(t, inputs, options);
    progress.done();
    fmt::print("{}", check::gradcheck_table(r));
    fmt::print("{}\n", r.ok ? "gradient ok" : "gradient differs from finite differences");
    return r.ok ? kOk : kNegative;
  };
}

}  // namespace ytape::cli
