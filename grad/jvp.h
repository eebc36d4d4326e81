// Forward-mode differentiation of a tape: `ytape jvp` (docs/jvp.md).
#pragma once

#include <string>
#include <vector>

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
/// The ops on u that the transposition does not read are removed (DCE).
Tape jvp(const Tape& t, const JvpOptions& options = {});

}  // namespace ytape::grad
