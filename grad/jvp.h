// Forward-mode differentiation of a tape: `ytape jvp` (docs/jvp.md).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tape/builder.h"
#include "tape/tape.h"

namespace ytape::grad {

struct JvpOptions {
  /// Inputs to differentiate: names, or prefixes that end at a dot, as GradOptions::wrt.
  /// Empty: every float input.
  std::vector<std::string> wrt;
};

/// Returns a tape that computes `t`'s outputs, then `tangent.<output name>` for each float
/// output: the Jacobian-vector product of the outputs with the tangents, new inputs
/// `tangent.<input name>` declared after `t`'s inputs, one per chosen float input (a name
/// taken gets one more `tangent.`). An output that no chosen input reaches has a tangent
/// of zeros.
///
/// Each op's tangent comes from its reverse-mode rule, linearized and transposed: the VJP
/// rule applied to a symbolic cotangent u is linear in u, and differentiating it with
/// respect to u with the arguments' tangents as seeds gives J·ẋ. So every primitive with a
/// gradient rule (region ops and custom rules included) has a forward-mode one that is
/// exact by construction, and the tape is built in one forward sweep, linear in the length
/// of `t`: the tangents flow beside the values, and nothing is stored for a backward pass.
/// The ops on u that the transposition does not read are removed (DCE). A region op
/// (scan, cond, while_loop) is the same op with its regions' jvps, carrying its tangents.
Tape jvp(const Tape& t, const JvpOptions& options = {});

/// jvp's forward sweep, for callers that bind the inputs themselves (the model language's
/// `jvp`): copies the ops of `src` onto `b` (which shares its files, Builder::like) with
/// each op's tangent beside it, where an argument has one.
class Tangents {
 public:
  Tangents(Builder& b, const Tape& src);
  /// Binds input `v` of `src` to `now` on the builder, with `tangent` (none: a constant).
  void bind_input(Var v, Var now, std::optional<Var> tangent);
  /// Copies every op of `src` but its inputs (after they are bound).
  void forward();
  /// The builder's var for `src`'s var `v`, and its tangent (none where it has none).
  Var operator[](Var v) const { return map_[v]; }
  std::optional<Var> tangent(Var v) const { return tan_[v.id]; }

 private:
  bool active(const Op& op) const;
  VarList emit(const Op& op);
  void differentiate(const Op& op);
  // A scan, cond or while_loop: the op again, its regions replaced by their jvps, carrying
  // the tangents (grad/jvp_regions.cc).
  void differentiate_region(const Op& op);
  // A custom_rule with a pushforward region: that region, written inline.
  void differentiate_pushforward(const Op& op);

  const Tape& t_;
  Builder& b_;
  VarMap map_;
  std::vector<std::optional<Var>> tan_;
};

}  // namespace ytape::grad
