// Random model programs, for differential tests of the tracer (tests/unit/check/): valid
// programs of the model language whose entry `f(x)` takes a Float64 vector and returns a
// number, drawn from the constructs real models use.
#pragma once

#include <string>

#include "check/random_tape.h"

namespace ytape::check {

struct RandomProgramOptions {
  int statements = 8;  ///< statements in the body of `f`
  int length = 4;      ///< the length of the example vector `x` (even, at least 4)
};

/// The text of a program that defines helper functions (a scalar function broadcast with
/// `h.(a, b)` and called on numbers, a function of a vector with a loop), a struct, the
/// entry `f(x)` and a global example vector `x`. The body of `f` binds vectors and numbers
/// with broadcasting, dotted and scalar arithmetic, user functions, closures with `map` and
/// `sum(f, v)`, comprehensions, indexing by ranges, integers and index arrays, `vcat`,
/// matrix products of reshaped vectors, `x'y`, `ifelse`, tuples and destructuring, struct fields,
/// `let` blocks, `for` and `while` loops over static counters, conditionals on static
/// values, `+=`, and the macros `@.`, `@inbounds` and `@assert` (on traced values, so
/// guarded); it returns the sum of every value it bound. Functions of restricted domain get
/// arguments inside it, so the value and its gradient are finite. Every program traces: no
/// branch depends on a traced value.
std::string random_program(const Choose& choose, const RandomProgramOptions& options = {});

}  // namespace ytape::check
