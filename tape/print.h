// The text form of tapes: one line per op. `ytape show`, error messages and golden tests
// all use it.
#pragma once

#include <string>

#include "tape/tape.h"

namespace ytape {

/// The text form of a tape:
///
///     tape loss
///       meta entry = "loss"
///       in  %1::f32[3] x
///       %2 = sin(%1)::f32[3]  # model.jl:2
///       %3, %4 = max_pool2d_with_indices(%2; window=[2,2], stride=[2,2])::(f32[..], i64[..])
///       out %2 y
///
/// Attributes equal to their schema default are left out; constants show at most eight
/// elements. Robust to invalid tapes (undefined vars print as their number).
std::string print_tape(const Tape& t);

/// One op without indentation, location or newline: "%3 = mul(%2, %1)::f32[3]".
std::string print_op(const Tape& t, const Op& op);

/// "%3" for Var{2}.
std::string var_str(Var v);

}  // namespace ytape
