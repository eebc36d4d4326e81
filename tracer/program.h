// The interpreter of model programs: the language's built-ins and prelude loaded.
#pragma once

#include "tracer/builtins/builtins.h"
#include "tracer/interp/interp.h"

namespace ytape::tracer {

/// An Interpreter with the language's built-in functions (tracer/builtins/) and, with
/// `prelude`, the standard prelude: what `ytape trace` runs a program in.
class Program : public Interpreter {
 public:
  explicit Program(Limits limits = {}, bool prelude = true)
      : Interpreter(language_builtins(), limits, prelude) {}
};

}  // namespace ytape::tracer
