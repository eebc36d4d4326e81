// Fusion: the groups of a tape's ops that the executor runs as one kernel (Fusion,
// runtime/kernels/kernel.h). The tape stays as it is; fusion is part of the plan.
#pragma once

#include <cstddef>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "tape/tape.h"

namespace ytape {

/// One fused group. It runs where the op `at` ran, with the kernel of `kind`, which sees
/// `args` and `outs` (listed per Fusion below) and reads its attributes from `op`.
///
/// - batchnorm_relu: `op` the batch norm; args its (x, scale, bias); outs the relu's output,
///   then the statistics of batchnorm_with_stats.
/// - relu_mask_batchnorm_backward: `op` the batchnorm_backward; args (g, x, scale, mean,
///   invstd, z) where the cotangent was select(gt(z, 0), g, 0); outs its (dx, dscale, dbias).
/// - relu_backward: `op` the select; args (z, g); outs the select's output.
/// - add_relu: `op` the add; args its (a, b); outs the relu's output.
/// - elementwise: `op` the last op; args the values of `program`'s arguments; outs the last
///   op's output, then the results of its other ops that ops after it read too (at most
///   ElementwiseProgram::kMaxOutputs). Its ops are elementwise ops whose results have the
///   output's shape and are read before the group runs by its own ops alone
///   (ElementwiseProgram, kernels/kernel.h).
struct FusedGroup {
  Fusion kind;
  const Op* op;
  /// Where it runs, by index into Tape::ops: its last op, or (batchnorm_relu) the batch
  /// norm, which the relu follows wherever it is.
  size_t at;
  std::vector<size_t> others;  ///< the other ops it takes, by index into Tape::ops
  VarList args, outs;
  ElementwiseProgram program = {};  ///< elementwise only
};

/// The groups of `t` that `table` has kernels for, each op in at most one group; the
/// largest group wins where two could take an op. An op is only taken when the values it
/// passes on are read by its group alone (not by another op, not a tape output), or, in an
/// elementwise group, by its group and by ops after the group (which it writes them for). An
/// elementwise group grows from its last op back through its producers until it would need
/// more than the kernel holds (ElementwiseProgram::kMaxSlots, kMaxArgs, kMaxGathered), so a long
/// chain is a series of groups. Linear in the tape's size (times the log of the largest group).
std::vector<FusedGroup> find_fusions(const Tape& t, const KernelTable& table);

}  // namespace ytape
