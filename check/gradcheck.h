// Checking a tape's gradient against finite differences: `ytape gradcheck`.
#pragma once

#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/executor.h"
#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape::check {

struct GradcheckOptions {
  std::vector<std::string> wrt;  ///< as grad::GradOptions::wrt; empty: every float input
  int directions = 3;            ///< random directions per input above `max_elements`
  int64_t max_elements = 64;     ///< inputs up to this size are checked element by element
  double eps = 1e-6;             ///< finite-difference step
  /// A check passes when |a - n| <= atol + rtol * max(|a|, |n|) + noise, where a is the
  /// analytic value, n the central difference and noise its rounding error (64 ulp of
  /// each value of f, over 2 eps).
  double rtol = 1e-5;
  double atol = 1e-7;
  uint64_t seed = 0;  ///< for the directions and the output seeds
  /// How the gradient tape and the function are run (kernels, layouts, fusion), as
  /// `ytape run` takes them.
  ExecutorOptions executor;
  /// Called after each element or direction checked with the input's name, the checks done
  /// and the checks in all (for a progress line); may be empty.
  std::function<void(std::string_view input, int64_t done, int64_t total)> progress;
};

/// The result for one input.
struct InputCheck {
  std::string name;
  bool elementwise = false;  ///< every element checked (else random directions)
  int64_t checks = 0;        ///< elements or directions compared
  int64_t kinks = 0;         ///< skipped: every step crossed a kink (see below)
  double max_abs = 0;        ///< largest |analytic - numeric|
  double max_rel = 0;        ///< largest |analytic - numeric| / max(|analytic|, |numeric|)
  bool ok = true;
};

/// The result for one custom rule (docs/rules.md): the custom_rule op checked alone, as a
/// tape of its own, at the operands the tape gives it: its pullback against finite
/// differences of its body, per float operand (named x1, x2, ...).
struct RuleCheck {
  std::string name;  ///< the function's
  std::string rule;  ///< where the rule is defined (FILE:LINE), or ""
  std::string call;  ///< where the tape calls it (FILE:LINE), or ""
  std::vector<InputCheck> operands;
  bool ok = true;
};

struct GradcheckResult {
  std::vector<InputCheck> inputs;
  std::vector<RuleCheck> rules;
  size_t rules_in_regions = 0;  ///< custom_rule ops inside region ops, not checked alone
  bool ok = true;
};

/// Compares the gradient tape of `t` (grad::gradient) with central differences, both in
/// f64 (`t` is promoted first). A tape with one float scalar output is differentiated as
/// it is; any other is reduced to the scalar Σₖ ⟨sₖ, outₖ⟩ over its float outputs with
/// random seeds sₖ (a vector-Jacobian product). `inputs` gives every input of `t`
/// (f32 values are widened). Integer and boolean inputs are not checked. Throws
/// UserError for bad inputs and when `t` has no float output.
///
/// f is piecewise smooth where ops choose (check/kinks.h): when the two points of a
/// difference lie on different pieces (some op chose differently, or a guard failed at one),
/// the step is retried at eps/10, eps/100 and eps/1000, and a random direction is redrawn
/// twice more; a check that crosses a kink every time is counted in `kinks`, not compared.
/// A difference that disagrees is measured again at 10 eps, 100 eps, eps/10 and eps/100 (on
/// one piece), and the check passes if one agrees: rounding noise in f, which terms that
/// cancel inside f make larger than f's value shows, shrinks as the step grows; truncation
/// error (eps² f''' / 6) shrinks as it falls; a wrong gradient stays wrong at every step.
/// The verdict is a pure function of the tape, the inputs and the options.
///
/// Each custom_rule op of the tape (not those inside regions) is then checked alone
/// (RuleCheck), so that a rule that disagrees is named, as ChainRulesTestUtils does.
GradcheckResult gradcheck(const Tape& t, const TensorMap& inputs, const GradcheckOptions& options);

/// The result as a table, one line per input, then one per operand of each rule.
std::string gradcheck_table(const GradcheckResult& r);

}  // namespace ytape::check
