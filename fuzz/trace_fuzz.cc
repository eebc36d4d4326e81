// libFuzzer target: model programs run. The top level runs eagerly, and a function `f`, if
// the program defines one, is traced on an f64[3] input. Limits on steps, calls, includes,
// recorded ops and tensor memory make every program end. Bad input must end in a
// UserError; anything else is a bug.
#include <cstdint>
#include <string>

#include "runtime/tensor.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ytape;
  set_tensor_memory_limit(int64_t{256} << 20);
  tracer::Limits limits;
  limits.max_depth = 200;
  limits.max_includes = 0;  // no file is read from disk
  limits.max_ops = 20'000;
  limits.max_steps = 200'000;
  tracer::Program in(limits);
  try {
    in.run_text("fuzz.jl", std::string(reinterpret_cast<const char*>(data), size));
    tracer::Traced traced = tracer::trace(in, "f", {"f64[3]"}, {.max_ops = limits.max_ops});
    validate(traced.tape);
  } catch (const UserError&) {
  }
  return 0;
}
