#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "tape/print.h"

namespace ytape::cli {

Run setup_show(CLI::App& sub) {
  struct Options {
    std::string tape;
    std::string out;
    bool json = false;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_flag("--json", o->json, "Print the canonical JSON form instead of text");
  sub.add_option("-o,--output", o->out,
                 "Write to this file (atomically) instead of standard output");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}});
    Tape t = load_tape(o->tape);
    if (o->json) {
      write_tape_file(o->out, t);
    } else {
      write_file(o->out, print_tape(t));
    }
    return kOk;
  };
}

}  // namespace ytape::cli
