// Reverse-mode differentiation of a tape: `ytape grad`.
#pragma once

#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include "tape/tape.h"

namespace ytape::grad {

struct GradOptions {
  /// Inputs to differentiate with respect to: names, or prefixes that end at a dot
  /// (`model.layer4` selects `model.layer4.1.conv1.weight`). Empty: every float input.
  std::vector<std::string> wrt;
  /// Differentiate every float output against a seed input `seed.<output name>` of its
  /// type (a vector-Jacobian product) instead of requiring one scalar output.
  bool vjp = false;
  /// Scans keep only carries for the backward, which recomputes the steps, instead of the
  /// values the backward reads (steps x residuals, no recomputation): a scan of T >= 16
  /// steps is cut into segments of about √T steps (segment_scans), of which the backward
  /// stores the first carries and recomputes one at a time; a shorter one stores each
  /// step's carries. docs/regions.md, "The gradient".
  bool remat = false;
};

/// What a gradient took.
struct GradStats {
  size_t forward_ops = 0;  ///< ops of the input tape (Tape::num_ops)
  size_t rules = 0;        ///< ops whose gradient rule ran (the others are inactive)
  size_t ops = 0;          ///< ops of the gradient tape (Tape::num_ops)
};

/// Per input of `t`, in order: whether `wrt` (see GradOptions) chooses it. Throws
/// UserError when an entry matches no input.
std::vector<bool> chosen_inputs(const Tape& t, const std::vector<std::string>& wrt,
                                std::string_view option = "--wrt");

/// `prefix` + `name`, the prefix repeated until the result is not in `taken`, which it
/// joins: the names of the inputs and outputs a transformation adds (`grad.x`, `seed.y`,
/// `tangent.x`).
std::string fresh_name(std::string prefix, const std::string& name,
                       std::unordered_set<std::string>& taken);

/// Returns a tape that computes `t`'s outputs, then `grad.<input name>` for each chosen
/// input in input order: the gradient of the scalar output or, with `vjp`, the
/// vector-Jacobian product with the seeds (declared after `t`'s inputs). A gradient name
/// already taken by an output of `t` gets one more `grad.` (`grad.grad.x`), and a seed
/// name taken by an input one more `seed.`. Integer and boolean inputs, and inputs the
/// outputs do not depend on, get zeros (a `fill`). The result is built in one forward
/// and one backward sweep, linear in the length of `t`; every gradient op carries the
/// location of the op it differentiates.
///
/// Throws UserError when `t` has no output, when without `vjp` it has more than one or
/// its output is not a float scalar, and when a `wrt` entry matches no input.
Tape gradient(const Tape& t, const GradOptions& options = {}, GradStats* stats = nullptr);

}  // namespace ytape::grad
