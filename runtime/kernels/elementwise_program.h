// The kernel of Fusion::elementwise: an ElementwiseProgram (kernels/kernel.h) run a block
// of elements at a time, its results between ops kept in small buffers in the cache.
#pragma once

#include "runtime/kernels/kernel.h"

namespace ytape::kernels {

/// Runs `call.program` over the output's elements. Arguments of the output's size are read
/// in place; single elements as constants; the rest (a bias over a batch, a per-row
/// statistic) broadcast: their elements for each block are gathered into a buffer first.
/// On a blocked image (c8, c16) a broadcast argument is a per-channel vector (1, 1, C, 1)
/// read plain (KernelTable::channel_args); on plain outputs any shape that broadcasts to the
/// output's (Julia's rule).
void elementwise_program(const KernelCall& call);

}  // namespace ytape::kernels
