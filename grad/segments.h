// Scans cut into segments for rematerialization (GradOptions::remat; docs/regions.md,
// "Rematerialization").
#pragma once

#include "tape/tape.h"

namespace ytape::grad {

/// `t` with each scan of its own (not those inside regions) of length T >= 16 that runs
/// every step (no `running`, no `mask`) nested as a scan of T/k steps whose body is a scan
/// of k, k the divisor of T nearest √T (2 <= k <= T/2; a prime T stays as it is): each xs
/// reshaped from [..., T] to [..., k, T/k] and each stacked y back. The values are the
/// scan's, bit for bit. Under remat the gradient then stores the outer scan's carries, T/k
/// of them, and recomputes one segment of k steps at a time, keeping that segment's
/// residuals: memory of order √T steps instead of T. One pass, linear in `t`.
Tape segment_scans(const Tape& t);

}  // namespace ytape::grad
