// Common-subexpression elimination.
#pragma once

#include "opt/pass.h"

namespace ytape {

/// Merges every op into the first earlier op that computes the same thing: the same
/// primitive, the same attributes (floats compared bit for bit) and the same arguments
/// after merging, in any order for commutative primitives (flag COMM); constants of the
/// same type and bytes. Readers of a merged op read the first one, which keeps its
/// location. Never merged: inputs, and effectful or random ops (`print`, `guard`, `rand`,
/// `randn`), even with equal arguments. One forward sweep over a hash table (expected
/// linear time); the merged ops are gone from the result.
PassResult eliminate_common_subexpressions(const Tape& t);

}  // namespace ytape
