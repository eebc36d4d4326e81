#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "inspect/dot.h"

namespace ytape::cli {

Run setup_dot(CLI::App& sub) {
  struct Options {
    std::string tape, out;
  };
  auto o = std::make_shared<Options>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("-o,--output", o->out,
                 "Write to this file (atomically) instead of standard output");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}}, {{"-o", o->out}});
    write_file(o->out, tape_dot(load_tape(o->tape)));
    return kOk;
  };
}

}  // namespace ytape::cli
