// libFuzzer target: the model language's lexer and parser (programs are parsed, not run:
// a fuzzed program may loop forever). Bad input must end in a UserError.
#include <cstdint>
#include <string>

#include "tape/error.h"
#include "tracer/lang/parser.h"
#include "tracer/lang/source.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ytape::tracer::Sources sources;
  try {
    (void)ytape::tracer::parse_text(sources, "fuzz.jl",
                                    std::string(reinterpret_cast<const char*>(data), size));
  } catch (const ytape::UserError&) {
  }
  return 0;
}
