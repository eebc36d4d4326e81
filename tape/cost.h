// Static cost estimates of ops, for benchmarks and `ytape stats`.
#pragma once

#include "tape/tape.h"

namespace ytape {

/// Floating-point operations of one op, counting a multiply-add as two: exact for matmul
/// and convolutions (the ops whose cost is arithmetic); for pooling, one per input element
/// that a window reads inside the image, summed over the windows, as the kernels do (a
/// window of 2^30 over 4 pixels costs 4 per output, not 2^30), and the gradients' zeroing
/// of dx besides; one per output element for other calls; zero for inputs and constants.
double op_flops(const Tape& t, const Op& op);

/// Sum of op_flops over the tape.
double tape_flops(const Tape& t);

}  // namespace ytape
