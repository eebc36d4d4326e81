#include <fmt/format.h>

#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "tape/strings.h"
#include "tape/validate.h"

namespace ytape::cli {

namespace {

std::string plural(size_t n, std::string_view word) {
  return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s");
}

}  // namespace

Run setup_check(CLI::App& sub) {
  auto path = std::make_shared<std::string>();
  sub.add_option("TAPE", *path, "Tape in JSON form, or - for standard input")->required();
  return [path] {
    Tape t = load_tape(*path);
    validate(t);
    size_t inputs = t.num_inputs();
    fmt::print("{}: valid tape {}: {}, {}, {}\n", source_name(*path), printable(t.name),
               plural(inputs, "input"), plural(t.ops.size() - inputs, "op"),
               plural(t.outputs.size(), "output"));
    return kOk;
  };
}

}  // namespace ytape::cli
