// The plan (runtime/plan.h) as `ytape plan` shows it, as EXPLAIN does for a query: step by
// step (PlannedStep), and as text.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/plan.h"
#include "tape/tape.h"

namespace ytape {

/// One step of a plan, as `ytape plan` prints it.
struct PlannedStep {
  const Op* op = nullptr;        ///< a fused step: the op whose attributes its kernel reads
  std::string_view name;         ///< the primitive, or the fusion ("batchnorm+relu")
  VarList args, outs;            ///< what the step reads and writes
  std::vector<const Op*> fused;  ///< the other ops a fused step runs
  std::string kernel;            ///< the kernel chosen, as KernelTable::describe names it
  std::vector<Layout> reads;     ///< the layout each argument is read in
  std::vector<Layout> writes;    ///< each output's layout
  /// Arguments reordered into a copy before the step, with the copy's layout.
  std::vector<std::pair<Var, Layout>> reorders;
  /// Each output's buffer slot; -1: a buffer of its own; kDonated - v: input v's buffer
  /// (Plan::donations).
  std::vector<int64_t> buffers;
  static constexpr int64_t kDonated = -2;
  int64_t workspace = -1;               ///< the slot of the kernel's work memory; -1: none
  Variant variant = Variant::standard;  ///< the way the kernel runs
  /// The first output is a tape output the step writes blocked: the caller gets a plain
  /// copy made after the step.
  bool copied_plain = false;
};

/// The plan, step by step. Naming oneDNN's kernels builds them, as a first run would.
std::vector<PlannedStep> planned_steps(const Plan& p);
/// Layouts as `ytape plan` prints them: "c16 plain".
std::string layouts_str(const std::vector<Layout>& layouts);

/// A summary (steps, buffers, blocked values, reorders), then one line per step: the op,
/// the kernel chosen, the layout each argument is read in and each output written in
/// (`plain`, or `c8`/`c16` for channel-blocked), the reorders before the step, and the buffer
/// each output lives in.
std::string plan_str(const Plan& p);

}  // namespace ytape
