// Diff reports for review (`ytape diff --format markdown`, `--fail-on`): a Markdown report
// for a pull-request comment, and thresholds that gate a CI job on what a change costs.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "inspect/diff.h"
#include "inspect/stats.h"

namespace ytape {

/// What a review compares of each tape.
struct TapeFigures {
  int64_t ops = 0;         ///< computed ops (calls), constants and inputs not counted
  double flops = 0;        ///< tape/cost.h's estimate, as `ytape stats`
  int64_t parameters = 0;  ///< elements of the float inputs
  int64_t memory = -1;     ///< the runtime plan's buffers (Plan::planned_bytes); -1: unknown
};
TapeFigures tape_figures(const TapeStats& s, int64_t plan_bytes);

/// The report as Markdown: a heading naming the tapes; a table of ops, FLOPs, parameters
/// and memory in A and B with the change; then the changed, added and removed ops grouped
/// by source line (a loop unrolled repeats one edit at one line: one row, with its count),
/// each row with the primitives before and after and the first op's text; outputs that
/// differ. "No difference" when the tapes compute the same thing.
std::string diff_markdown(const Tape& a, const Tape& b, const TapeDiff& d, const DiffLabels& labels,
                          const TapeFigures& fa, const TapeFigures& fb);

/// The conditions of `--fail-on`, comma-separated: `ops` (an op or output differs),
/// `params` (the parameter count changes), `flops` and `memory` (change at all), or
/// `flops>P%` and `memory>P%` (change by more than P percent either way).
struct FailOn {
  bool ops = false, params = false;
  double flops = -1, memory = -1;  ///< the percent allowed; -1: not checked
};
/// Parses `spec`; UserError naming a condition it does not know (with the closest one).
FailOn parse_fail_on(std::string_view spec);

/// Each condition of `f` that holds, said for a message ("FLOPs +7.2%, more than 5%");
/// empty when none does.
std::vector<std::string> failed_conditions(const FailOn& f, const TapeDiff& d,
                                           const TapeFigures& fa, const TapeFigures& fb);

}  // namespace ytape
