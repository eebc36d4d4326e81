// The reverse-mode driver: copies a tape's forward ops onto a builder, then walks them
// backwards applying one rule per op. Everything rules should not do happens here.
#pragma once

#include <optional>
#include <unordered_map>
#include <vector>

#include "grad/rules.h"
#include "tape/builder.h"

namespace ytape::grad {

/// Differentiates `src` onto `b` in two linear sweeps.
///
/// Forward: every op of `src` but its inputs is copied to `b` (the caller binds the
/// inputs). An op is *active* when it is differentiable and reads an active var; the
/// float outputs of active ops are active. Active ops whose rule needs a multi-output
/// variant are emitted as that variant.
///
/// Backward: cotangents start at the seeds and flow from each op's outputs to its active
/// arguments only, so just the ops between the active inputs and the seeded outputs get
/// rules. Zero cotangents are symbolic (nothing is emitted for them), fan-out accumulates
/// with `add`, and a cotangent of a broadcast shape is summed back to its argument's
/// shape. Emitted ops carry the location of the op they differentiate.
/// `cot`, the cotangent a rule of `op` gave for an argument of type `to`, summed over the
/// dims it was broadcast along; InternalError where it cannot be one.
Var unbroadcast(Builder& b, Var cot, const Type& to, const Op& op);

class Backprop {
 public:
  /// `b` must share `src`'s file table (see Builder::like) unless a fixed location is set.
  Backprop(Builder& b, const Tape& src);

  /// Gives every emitted op the location `loc` instead of that of its source op.
  void set_fixed_loc(Loc loc) { fixed_loc_ = loc; }
  /// Scans keep only their carries forward and recompute each step backward (see
  /// GradOptions::remat).
  void set_remat(bool on) { remat_ = on; }
  /// Binds input `v` of `src` to `now` on the builder; `active` differentiates through it.
  void bind_input(Var v, Var now, bool active);
  /// Copies the ops of `src` (after its inputs are bound).
  void forward();
  /// The builder's var for `src`'s var `v` (after forward()).
  Var operator[](Var v) const { return map_[v]; }
  bool active(Var v) const { return active_[v.id]; }
  /// Adds `cot` to the cotangent of `src`'s var `v` (before backward()).
  void seed(Var v, Var cot);
  /// Applies the rules from the last op to the first.
  void backward();
  /// The cotangent accumulated for `src`'s var `v`; nothing when it is zero.
  Cotangent cotangent(Var v) const;
  /// Number of ops whose rule ran.
  size_t rules_applied() const { return rules_applied_; }

 private:
  void copy_call(size_t index, const Op& op);
  void differentiate(size_t index, const Op& op);
  void accumulate(Var arg, Var cot);

  Builder& b_;
  const Tape& src_;
  const RuleTable& rules_;
  VarMap map_;
  std::vector<bool> active_;                      // per src var
  std::vector<uint32_t> cot_;                     // per src var: builder var id
  std::unordered_map<size_t, VarList> variants_;  // op index -> variant outputs
  std::optional<Loc> fixed_loc_;
  bool remat_ = false;
  // Scratch for differentiate(), reused across ops.
  std::vector<Var> x_, y_;
  std::vector<Cotangent> dy_;
  std::vector<bool> need_;
  size_t rules_applied_ = 0;
};

}  // namespace ytape::grad
