// What every optimization pass returns. A pass is a function `PassResult f(const Tape&)`:
// it never edits its input, builds any new tape in one pass with the Builder and a VarMap,
// and says what it changed.
#pragma once

#include <cstddef>
#include <optional>
#include <utility>

#include "tape/tape.h"

namespace ytape {

/// The outcome of a pass on a tape.
struct PassResult {
  /// The new tape; absent when the pass changed nothing (the input is then the result, and
  /// nothing was copied).
  std::optional<Tape> tape;
  /// How many ops of the input the pass removed, merged, folded or rewrote; zero exactly
  /// when `tape` is absent.
  size_t changed = 0;
};

}  // namespace ytape
