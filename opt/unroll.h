// Region ops written out: a scan becomes its body repeated once per step; a cond on a
// constant, its branch.
#pragma once

#include "opt/pass.h"
#include "tape/tape.h"

namespace ytape {

/// Whether an op of `t` holds regions (a scan).
bool has_regions(const Tape& t);

/// `t` with every scan replaced by `length` copies of its body, in the order of the steps,
/// except scans that may skip steps (`running`, `mask`), which stay,
/// as `ytape trace --loops unroll` records a loop: each x_t a slice of its xs, each carry
/// fed from one copy to the next, each y stacked by a concat. For consumers that take
/// straight-line tapes only. Linear in the size of the
/// result; the values are the scan's, bit for bit.
Tape unroll_regions(const Tape& t);

/// The pass `inline` (docs/passes.md): a cond whose selector is a constant becomes the
/// branch it names, and a scan of length 0 or 1 its body once (or nothing), as
/// unroll_regions writes it. Regions are optimized inside their ops as tapes of their own.
PassResult inline_regions(const Tape& t);

}  // namespace ytape
