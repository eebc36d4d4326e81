// Static cost estimates of ops, for benchmarks and `ytape stats`.
#pragma once

#include "tape/tape.h"

namespace ytape {

/// Floating-point operations of one op, counting a multiply-add as two: exact for matmul
/// and convolutions (the ops whose cost is arithmetic), one per output element for other
/// calls, zero for inputs and constants.
double op_flops(const Tape& t, const Op& op);

/// Sum of op_flops over the tape.
double tape_flops(const Tape& t);

}  // namespace ytape
