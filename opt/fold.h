// Constant folding.
#pragma once

#include <cstdint>

#include "opt/pass.h"

namespace ytape {

/// Folding evaluates an op only when each of its arguments and outputs has at most this
/// many elements, so that constants stay small and the tape readable.
inline constexpr int64_t kFoldMaxElements = 64;

/// Replaces every op whose arguments are all constants (or folded in the same sweep) by
/// its outputs, computed by the runtime's kernel for the primitive, so a folded tape gives
/// the very bits running the original gives. An output of several elements that are all
/// one value becomes a `fill` (which writes the same bits), any other a constant. Ops
/// without arguments fold too (`iota`), except `fill`, which is already as small as a
/// constant; small fills count as constants for their readers. Left alone: effectful and
/// random ops, ops with an argument or output of more than kFoldMaxElements elements, and
/// ops whose kernel fails on the constants (an index out of range), which then fail at run
/// time as before. The constants folded ops read stay (dead-code elimination removes them).
/// One forward sweep, linear in the length of the tape.
PassResult fold_constants(const Tape& t);

}  // namespace ytape
