// Dead-code elimination.
#pragma once

#include <optional>
#include <vector>

#include "opt/pass.h"

namespace ytape {

/// Removes every op whose outputs no output of the tape depends on, walking the tape
/// backwards with a used set (linear in its length). Kept whatever they feed: inputs (the
/// tape's interface, read or not) and effectful ops (`print`, `guard`, `rand`, `randn`),
/// which also keep their order. A multi-output variant whose extra outputs are all unused
/// is narrowed to its plain primitive (`max_pool2d_with_indices` to `max_pool2d`,
/// `batchnorm_with_stats` to `batchnorm`), which computes the same first output. A region
/// op loses the results nothing reads and the operands only those read (cut_region_op).
PassResult eliminate_dead_code(const Tape& t);

/// What DCE keeps of a region op (opt/dce_regions.cc): per operand and per output whether
/// it stays, its regions cut to the parameters and yields that stay, its attributes
/// recounted. A scan or while_loop keeps a carry that a kept result, or the loop's
/// condition, depends on through the body, even if its own result is unused.
struct RegionCut {
  std::vector<bool> operands, outputs;
  std::vector<Tape> regions;
  Attrs attrs;
  bool changes() const;
};
/// The cut of `op` (a kept region op) where `used` marks the vars read later; nullopt when
/// it keeps everything.
std::optional<RegionCut> cut_region_op(const Op& op, const std::vector<bool>& used);

}  // namespace ytape
