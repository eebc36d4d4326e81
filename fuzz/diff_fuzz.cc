// libFuzzer target: `ytape diff` of two tapes. The input holds two JSON tapes, split at the
// first NUL byte (without one, the tape is compared with itself). What both readers accept
// is diffed and every report rendered; a tape always equals itself. Bad input must end in
// a UserError; anything else is a bug.
#include <cstdint>
#include <cstdlib>
#include <string_view>

#include "inspect/diff.h"
#include "io/json.h"
#include "tape/error.h"
#include "tape/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ytape;
  std::string_view text(reinterpret_cast<const char*>(data), size);
  size_t split = text.find('\0');
  std::string_view first = text.substr(0, split);
  std::string_view second = split == std::string_view::npos ? first : text.substr(split + 1);
  Tape a, b;
  try {
    a = read_tape_json(first, "a.json");
    b = read_tape_json(second, "b.json");
    validate(a);
    validate(b);
  } catch (const UserError&) {
    return 0;
  }
  TapeDiff d = diff_tapes(a, b);
  DiffLabels labels{"a.json", "b.json"};
  (void)diff_str(a, b, d, labels);
  (void)diff_stat(a, b, d);
  (void)diff_json(a, b, d, labels);
  if (!diff_tapes(a, a).same() || !diff_tapes(b, b).same()) std::abort();
  return 0;
}
