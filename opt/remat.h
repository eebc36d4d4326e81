// Rematerialization: a gradient tape rewritten to recompute, during its backward part, the
// forward values it does not keep, so that it fits a memory budget at the least recomputed
// work. docs/remat.md.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tape/prim.h"
#include "tape/tape.h"

namespace ytape {

/// What `rematerialize` keeps and what it may spend.
struct RematOptions {
  /// The largest peak wanted, in bytes of intermediate buffers as the runtime plans them
  /// (Plan::planned_bytes); unset: no budget.
  std::optional<int64_t> budget_bytes;
  /// The same as a share of the tape's present peak (0.5: half); used when budget_bytes is
  /// unset.
  std::optional<double> budget_share;
  /// The primitives whose outputs may be kept for the backward part besides the ends of
  /// segments; unset: any. Without a budget every such value is kept and the rest
  /// recomputed (JAX's checkpoint policies).
  std::optional<std::vector<Prim>> saveable;
  /// Keep every value the backward part reads but those of elementwise ops that at most
  /// kMaxRecomputedChain elementwise ops compute again from kept values, inputs and
  /// constants (an activation's intermediates: GELU's eight, a LayerNorm's scaled values);
  /// reshapes along the way are free. Overrides `saveable` (policy "all-but-elementwise").
  /// Without a budget, a tape whose plan this would not lower is returned as it is.
  bool recompute_elementwise = false;
  /// The outputs the forward part computes; empty: every output not named `grad.*` or
  /// `tangent.*`.
  std::vector<std::string> forward_outputs;
};

/// What `rematerialize` did.
struct RematResult {
  Tape tape;
  int64_t peak_before = 0, peak_after = 0;  ///< Plan::planned_bytes of the tape and the result
  double flops_before = 0;                  ///< tape_flops of the tape
  double recomputed_flops = 0;              ///< of the ops it recomputes
  size_t recomputed_ops = 0;
  size_t kept = 0;      ///< forward ops kept for the backward part and its recomputations
  size_t segments = 0;  ///< cut ops among them (docs/remat.md): segment ends
};

/// `t` rewritten so that every value of its forward part that its backward part reads is
/// either kept from the forward part or recomputed, once, just before the backward part
/// first reads it, from kept values. The forward part is the tape up to the last op that
/// the forward outputs need; the backward part is the rest. Kept are the values that the
/// policy saves, the ends of segments (ops after which one forward value alone is live,
/// such as a residual block's output), and what cannot be recomputed (random draws, ops
/// with effects, the tape's outputs). The choice fits the budget at the least recomputed
/// FLOPs among the segmentings and policy cut-offs tried (docs/remat.md). Outputs equal
/// the tape's bit for bit: recomputation runs the same kernels on the same values.
///
/// UserError when the budget cannot be met (naming the least peak found), when there is no
/// backward part, or when neither a budget nor a policy is given.
RematResult rematerialize(const Tape& t, const RematOptions& options);

/// The longest chain of elementwise ops that RematOptions::recompute_elementwise recomputes
/// in place of keeping its value.
inline constexpr int kMaxRecomputedChain = 16;

/// The primitives of a policy name: "dots" (matmul and convolutions: JAX's
/// dots_saveable), "nothing" (only segment ends), "everything", or primitive names
/// separated by commas. A reshape of a kept value is kept with it. UserError naming the
/// closest word for an unknown one.
std::vector<Prim> remat_policy(const std::string& name);

/// Sets `o`'s policy from its name: "all-but-elementwise" (recompute_elementwise) or any name
/// remat_policy takes.
void set_remat_policy(RematOptions& o, const std::string& name);

}  // namespace ytape
