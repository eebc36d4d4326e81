// Static summaries of tapes (`ytape stats`): op counts, estimated FLOPs, parameters and
// memory.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tape/tape.h"

namespace ytape {

/// Ops of one primitive (or "const") and their estimated FLOPs (tape/cost.h).
struct PrimStats {
  std::string_view name;
  int64_t ops = 0;
  double flops = 0;
};

/// Parameters (elements of float inputs) of the inputs whose names start with one
/// top-level prefix: `model` for `model.layer1.1.conv1.weight`, the whole name otherwise.
struct ParamGroup {
  std::string prefix;
  int64_t inputs = 0;
  int64_t elements = 0;
};

struct TapeStats {
  std::string name;
  int64_t inputs = 0, constants = 0, calls = 0, outputs = 0;
  /// Primitives in use (constants as "const"), by FLOPs, then ops, descending, then in the
  /// order of tape/ops.def.
  std::vector<PrimStats> prims;
  double flops = 0;
  int64_t parameters = 0;          ///< elements of all float inputs
  std::vector<ParamGroup> groups;  ///< in order of first appearance
  int64_t input_bytes = 0;         ///< all inputs
  int64_t constant_bytes = 0;
  int64_t output_bytes = 0;  ///< computed outputs, once each
  /// Whether a scan may skip steps (`running`, `mask`: a while_loop's gradient), its FLOPs
  /// then counted at its length, an upper bound.
  bool skipping_scans = false;
};

/// Counts what `t` (a valid tape) holds.
TapeStats tape_stats(const Tape& t);

/// The report of `ytape stats`. `plan_bytes` is the memory of the buffers the runtime's plan
/// keeps for intermediate values at once (`Plan::planned_bytes`), or negative when
/// unknown; the runtime needs it, the inputs, the constants and the outputs.
std::string stats_str(const TapeStats& s, int64_t plan_bytes);

/// 1234567 as "1,234,567".
std::string grouped(int64_t n);

}  // namespace ytape
