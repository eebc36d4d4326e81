// The validator is the spec of a tape: every invariant a tape must hold is checked here,
// and nowhere else needs to check it again.
#pragma once

#include <string_view>

#include "tape/tape.h"

namespace ytape {

/// Checks that `t` is a valid tape:
/// - inputs come first, each with one output and a unique non-empty name;
/// - every var is defined exactly once, in increasing dense order (%1, %2, ...), and
///   every argument is defined before the op that reads it;
/// - constants have exactly as many elements as their type, bools stored as 0/1;
/// - calls have the primitive's arity and number of outputs, attributes that match its
///   schema (complete, in order, of the right kinds), and output types equal to what
///   type inference gives for their arguments;
/// - shapes are sane (no negative dims, at most 2^48 elements);
/// - outputs name defined vars, with unique names; locations refer to known files.
/// Throws UserError on the first violation, naming the op (1-based position and text
/// form), its source location, what is wrong and how to fix it.
void validate(const Tape& t);

/// Whether transformations check the tapes they make: in debug builds and in the sanitizer
/// builds (YTAPE_CHECK_TAPES), which CI runs every test in; release builds trust them.
#if defined(YTAPE_CHECK_TAPES) || !defined(NDEBUG)
inline constexpr bool kCheckTapes = true;
#else
inline constexpr bool kCheckTapes = false;
#endif

/// With kCheckTapes, validates `t`, the tape `stage` (a transformation: "grad", a pass's
/// name) made; a violation is then an InternalError naming the stage, as a transformation
/// that makes an invalid tape from a valid one is a bug of ytape, not of its input.
void check_made(const Tape& t, std::string_view stage);

}  // namespace ytape
