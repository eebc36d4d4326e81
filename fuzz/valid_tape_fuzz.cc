// libFuzzer target, structured: the bytes choose a valid tape (check/random_tape.h), which
// then goes through every stage. A valid tape must never be refused, so any exception is
// a bug, as is an optimized tape whose outputs differ in a single bit (but the sign of a
// zero, opt/simplify.h), or a JSON form that does not read back to the same bytes.
#include <cstdint>
#include <cstdlib>

#include "check/random_tape.h"
#include "grad/grad.h"
#include "io/json.h"
#include "opt/optimize.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace ytape;
  // Each choice reads two bytes; past the end every choice is 0.
  size_t pos = 0;
  check::Choose choose = [&](uint64_t n) {
    uint64_t v = 0;
    for (int i = 0; i < 2 && pos < size; ++i) v = v << 8 | data[pos++];
    return v % n;
  };
  // The first byte picks f64, f32 or an exact tape of i64 (integer ops only).
  const DType dtypes[] = {DType::f64, DType::f32, DType::i64};
  DType dtype = size > 0 ? dtypes[data[0] % 3] : DType::f64;
  Tape t = check::random_tape(choose, {.dtype = dtype, .ops = 12, .exact = dtype == DType::i64});
  std::string json = write_tape_json(t);
  if (write_tape_json(read_tape_json(json, "fuzz.json")) != json) std::abort();

  TensorMap inputs = complete_inputs(t, {}, 1);
  std::vector<Tensor> out = Executor(t).run(inputs);
  if (!same_values(Executor(optimize(t)).run(inputs), out)) std::abort();
  if (dtype == DType::i64) return 0;  // nothing to differentiate
  Tape g = grad::gradient(t);
  std::vector<Tensor> dx = Executor(g).run(inputs);
  if (!same_values(Executor(optimize(g)).run(inputs), dx)) std::abort();
  return 0;
}
