// Loop-invariant code motion for region ops.
#pragma once

#include "opt/pass.h"

namespace ytape {

/// The pass `hoist` (docs/passes.md): an op of a scan's body or a while_loop's regions whose
/// arguments are the same on every trip (the loop's consts, constants, or such ops'
/// results), with no effect or random draw, is computed once before the loop, on the
/// loop's operands, and given to the loop as a new const (a transposed weight, a weight's
/// reshape, a bias broadcast to the batch). One pass over the tape and each loop's regions;
/// loops nested in a region are hoisted within it as `optimize` optimizes the region.
PassResult hoist_invariants(const Tape& t);

}  // namespace ytape
