// Dead-code elimination.
#pragma once

#include "opt/pass.h"

namespace ytape {

/// Removes every op whose outputs no output of the tape depends on, walking the tape
/// backwards with a used set (linear in its length). Kept whatever they feed: inputs (the
/// tape's interface, read or not) and effectful ops (`print`, `guard`, `rand`, `randn`),
/// which also keep their order. A multi-output variant whose extra outputs are all unused
/// is narrowed to its plain primitive (`max_pool2d_with_indices` to `max_pool2d`,
/// `batchnorm_with_stats` to `batchnorm`), which computes the same first output.
PassResult eliminate_dead_code(const Tape& t);

}  // namespace ytape
