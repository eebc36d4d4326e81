// Tracing an entry function of a program into a tape.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

struct TraceOptions {
  int64_t max_ops = 10'000'000;  ///< stop with an error beyond this many recorded ops
};

/// A traced tape and the example values of its inputs (those that have one).
struct Traced {
  Tape tape;
  TensorMap inputs;
};

/// Traces `entry` of `program`, whose top level has already run, on `args`. Each argument
/// is the name of a global of the program (its value is the example argument), a type
/// such as `f32[3,4]` (an input with no example value), or a literal: an integer, `true`
/// / `false`, or a string in double quotes (static), or a float (an f64 input).
///
/// Floating-point numbers and all arrays, also inside structs, tuples and named tuples,
/// become tape inputs named by path after the entry's parameter names (`model.w`,
/// `xs.1`); integers, booleans, strings, symbols, ranges and functions are static and
/// recorded in the tape's meta as `static.<path>`. The outputs are the return value
/// flattened the same way: `out` for a single value, `out.1`, `out.2`, ... for a tuple,
/// `out.<name>` for named tuples and structs; functions, types, strings, symbols and
/// ranges inside them, and static struct fields (integers, Bools, tuples of them, as
/// the meta records them for inputs), are left out (the return value must not be one). Throws
/// UserError for bad arguments and for every error of the program.
Traced trace(Interpreter& program, const std::string& entry, const std::vector<std::string>& args,
             const TraceOptions& options = {});

}  // namespace ytape::tracer
