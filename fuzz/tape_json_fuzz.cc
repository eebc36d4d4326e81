// libFuzzer target: the tape JSON reader, then the validator, the printer and the writer
// on what it accepts. Bad input must end in a UserError; anything else (a crash, an
// InternalError, a write that does not read back the same) is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "io/json.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string_view text(reinterpret_cast<const char*>(data), size);
  ytape::Tape t;
  try {
    t = ytape::read_tape_json(text, "fuzz.json");
    ytape::validate(t);
  } catch (const ytape::UserError&) {
    return 0;
  }
  (void)ytape::print_tape(t);
  std::string once = ytape::write_tape_json(t);
  std::string twice = ytape::write_tape_json(ytape::read_tape_json(once, "fuzz.json"));
  if (once != twice) std::abort();  // writing is canonical: a read-back writes the same
  return 0;
}
