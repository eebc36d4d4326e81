// The pass table and the driver that runs passes to a fixed point: `ytape opt`.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "opt/pass.h"

namespace ytape {

/// One optimization pass, by the name `ytape opt --passes` knows it by.
struct PassInfo {
  std::string_view name;  ///< "fold", "simplify", "cse", "dce"
  std::string_view help;  ///< one line: what it does
  PassResult (*run)(const Tape&);
  /// Whether a run leaves nothing for a second run to change, so that `optimize` need not
  /// run it again on its own result.
  bool idempotent;
};

/// Every pass, in the order `optimize` runs them by default: folding and simplification
/// make duplicates and dead ops, which the last two remove.
std::span<const PassInfo> all_passes();

/// The pass named `name`. Throws UserError listing the names when there is none.
const PassInfo& find_pass(std::string_view name);

/// One run of one pass inside `optimize`.
struct PassRun {
  std::string_view pass;
  size_t ops_before = 0;  ///< ops of the tape it was given, inputs not counted
  size_t ops_after = 0;
  size_t changed = 0;  ///< see PassResult::changed
  double seconds = 0;
};

struct OptimizeOptions {
  /// Pass names, run in this order; repeats are allowed. Empty: all_passes() in order.
  std::vector<std::string> passes;
  /// At most this many rounds of the whole list (a bound that real tapes never reach:
  /// every change makes a tape smaller or moves ops toward their inputs).
  int max_rounds = 16;
};

/// Runs the passes in order, round after round, until none would change the tape: each has
/// run on it without a change, or made it and is idempotent. The result is a fixed point,
/// so optimizing it again gives the same tape, byte for byte. Deterministic. Each run of a
/// pass is appended to `log` when given. Throws UserError for an unknown pass name.
Tape optimize(Tape t, const OptimizeOptions& options = {}, std::vector<PassRun>* log = nullptr);

}  // namespace ytape
