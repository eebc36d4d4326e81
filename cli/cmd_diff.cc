#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "inspect/diff.h"

namespace ytape::cli {

Run setup_diff(CLI::App& sub) {
  struct Options {
    std::string a, b;
    bool stat = false;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("A", o->a, "The old tape in JSON form, or - for standard input")->required();
  sub.add_option("B", o->b, "The new tape in JSON form, or - for standard input")->required();
  CLI::Option* stat =
      sub.add_flag("--stat", o->stat, "Print counts of removed and added ops per primitive");
  sub.add_flag("--json", o->json, "Print a machine-readable report")->excludes(stat);
  sub.footer(
      "Exit status: 0 when the tapes compute the same thing, 1 when they differ, 2 on bad input.");
  return [o] {
    Tape a = load_tape(o->a);
    Tape b = load_tape(o->b);
    TapeDiff d = diff_tapes(a, b);
    DiffLabels labels{source_name(o->a), source_name(o->b)};
    write_file("", o->json   ? diff_json(a, b, d, labels)
                   : o->stat ? diff_stat(a, b, d)
                             : diff_str(a, b, d, labels));
    return d.same() ? kOk : kNegative;
  };
}

}  // namespace ytape::cli
