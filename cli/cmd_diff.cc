#include <fmt/format.h>

#include <memory>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/io.h"
#include "inspect/diff.h"
#include "inspect/diff_review.h"
#include "inspect/stats.h"
#include "runtime/plan.h"

namespace ytape::cli {

Run setup_diff(CLI::App& sub) {
  struct Options {
    std::string a, b, format = "text", fail_on;
    bool stat = false;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("A", o->a, "The old tape in JSON form, or - for standard input")->required();
  sub.add_option("B", o->b, "The new tape in JSON form, or - for standard input")->required();
  sub.add_flag("--stat", o->stat, "Print counts of removed and added ops per primitive");
  sub.add_flag("--json", o->json,
               "Print a machine-readable report (with --stat: its summary and counts alone)");
  sub.add_option("--format", o->format,
                 "text (the default), json (as --json), or markdown: a report for a pull "
                 "request, with ops, FLOPs, parameters and memory before and after and the "
                 "changes by source line")
      ->check(one_of({"text", "json", "markdown"}));
  sub.add_option("--fail-on", o->fail_on,
                 "Exit 1 only when one of these holds (comma-separated): ops, params, flops, "
                 "memory, flops>P%, memory>P%; each one that holds is named on stderr");
  sub.footer(
      "Exit status: 0 when the tapes compute the same thing, 1 when they differ, 2 on bad input.");
  return [o] {
    FailOn fail = o->fail_on.empty() ? FailOn{} : parse_fail_on(o->fail_on);
    Tape a = load_tape(o->a);
    Tape b = load_tape(o->b);
    TapeDiff d = diff_tapes(a, b);
    DiffLabels labels{source_name(o->a), source_name(o->b)};
    bool json = o->json || o->format == "json";
    // Planning allocates nothing and runs nothing: it only assigns buffers by liveness.
    auto figures = [](const Tape& t) {
      return tape_figures(tape_stats(t), plan_tape(t).planned_bytes());
    };
    bool figured = o->format == "markdown" || !o->fail_on.empty();
    TapeFigures fa = figured ? figures(a) : TapeFigures{}, fb = figured ? figures(b) : fa;
    write_file("", o->format == "markdown" ? diff_markdown(a, b, d, labels, fa, fb)
                   : json                  ? diff_json(a, b, d, labels, o->stat)
                   : o->stat               ? diff_stat(a, b, d)
                                           : diff_str(a, b, d, labels));
    if (o->fail_on.empty()) return d.same() ? kOk : kNegative;
    std::vector<std::string> failed = failed_conditions(fail, d, fa, fb);
    for (const std::string& why : failed) fmt::print(stderr, "ytape: diff: {} (--fail-on)\n", why);
    return failed.empty() ? kOk : kNegative;
  };
}

}  // namespace ytape::cli
