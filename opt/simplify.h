// Algebraic simplification.
#pragma once

#include "opt/pass.h"

namespace ytape {

/// Rewrites ops into simpler equivalents, looking only at the ops that define their
/// arguments (one forward sweep, linear). A "splat" below is a `fill`, or a constant whose
/// elements are all the same bits; "x" stands for x broadcast to the op's result type when
/// the two differ (a `reshape` when the element counts agree, else a `broadcast_to`).
///
/// - `x + 0`, `0 + x`, `x - 0`, `x * 1`, `1 * x`, `x / 1` give x; `x * 0` and `0 * x` give
///   a fill of 0 for i64 only (for floats 0 * inf and 0 * nan are nan). `x + 0` is x
///   bit for bit except that -0.0 + 0.0 is +0.0: the rewrite gives -0.0 there, a value
///   equal to it.
/// - `neg(neg(x))` gives x; `convert` to x's own dtype gives x.
/// - `reshape` to x's shape gives x, a reshape of a reshape one reshape; `permutedims`
///   by the identity gives x, of a permutedims one permutedims (or x when they cancel);
///   `broadcast_to` x's shape gives x, to as many elements a reshape, of a broadcast_to
///   one broadcast_to, of a reshape that only adds or drops trailing dims of size 1 a
///   broadcast_to of what it reshapes; any of the three on a splat gives a fill of the
///   new shape.
/// - `sum`, `maximum`, `minimum` over no dims give x, over dims all of size 1 a reshape
///   of x (a sum of the one element -0.0 is +0.0 when run: the sign of a zero again).
/// - `select(c, x, y)` with c a splat gives x or y; `select(c, x, x)` gives x.
/// - `scatter_add(y, idx)` with idx a constant permutation along `dim` that is its own
///   inverse (as `reverse` makes) gives `gather(y, idx)` (0 + -0.0 is +0.0: the scatter
///   gives +0.0 where the gather keeps -0.0).
///
/// Every rewrite is exact (up to the sign of a zero, above). Ops a rewrite leaves unread
/// stay for dead-code elimination; chains collapse in one sweep, since rules look at the
/// rewritten tape.
PassResult simplify(const Tape& t);

}  // namespace ytape
