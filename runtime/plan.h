// The executor's plan of a tape: which kernel runs each step, in which layout each value
// is kept, which buffer holds it and which steps run a faster variant. Made once
// (plan_tape), in stages that each fill part of it: the steps here, the layouts
// (runtime/plan_layouts.h), the buffers (runtime/plan_buffers.h). The executor
// (runtime/executor.h) runs it; `ytape plan` prints it (runtime/plan_print.h).
#pragma once

#include <cstddef>
#include <cstdint>
#include <deque>
#include <memory>
#include <optional>
#include <span>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/layout.h"
#include "tape/tape.h"

namespace ytape {

/// How an executor plans a tape.
struct ExecutorOptions {
  KernelSet kernels = KernelSet::fast;  ///< runtime/kernels/kernel.h
  /// Keep image activations channel-blocked between the kernels that allow it, with
  /// reorders only where another kernel reads them; off: every value plain.
  bool blocked_layouts = true;
  /// The blocked layout kept (c8 or c16); plain: this machine's oneDNN's
  /// (native_blocked_layout), so that its convolutions reorder no activation.
  Layout block = Layout::plain;
  /// Run the groups of ops that runtime/fusion.h finds as one kernel each.
  bool fusion = true;
  /// How many bytes more than the plan of standard kernels may take, so that kernels with
  /// a faster variant that needs more work memory run it (Variant). Unset: a fifth of that
  /// plan; 0: only where it fits in memory the plan has anyway; negative: never.
  std::optional<int64_t> extra_work_bytes;
  /// (output, input), by index into Tape::outputs and the tape's inputs: the output may be
  /// written over that input's buffer, as a training step's new weights replace the old
  /// (JAX's donation). The plan keeps the pairs where nothing reads the input after the
  /// output is written (Plan::donations); the caller must not read a donated input after a
  /// run. Only the tape's own executor takes them, not its regions'.
  std::vector<std::pair<uint32_t, uint32_t>> donate;
};

/// A tape's plan. Its lists are flat: a step names ranges of them, so that running the
/// plan walks memory in order. Vars are indexed by id; buffer slots by number.
///
/// Each value computed by a step lives in a slot, placed in one arena apart from the slots
/// live at the same time (so peak memory stays near the largest live set), but the
/// tape's outputs written plain: each run gives those fresh tensors, which the caller may
/// keep. A tape output that its step writes blocked lives in a slot like any value, and
/// gets a plain copy made after the step, which the caller gets. Inputs and constants
/// have no slot.
struct Plan {
  static constexpr int kNoSlot = -1;
  static constexpr size_t kNoLayouts = ~size_t{0};

  /// One kernel call: a call op of the tape, or a fused group of them (runtime/fusion.h).
  struct Step {
    Kernel kernel;
    const Op* op;                   ///< attributes and messages; see PlannedStep::op
    int entry;                      ///< in the kernel table: the primitive, or the fusion
    size_t args_begin, outs_begin;  ///< into arg_vars and out_vars
    uint32_t num_args, num_outs;
    size_t layouts_begin;                         ///< into step_layouts; kNoLayouts: all plain
    size_t reorders_begin, reorders_end;          ///< into reorders
    size_t fused_begin, fused_end;                ///< into fused_ops
    const ElementwiseProgram* program = nullptr;  ///< Fusion::elementwise: in programs
    int workspace_slot = kNoSlot;                 ///< the slot of KernelCall::workspace
    int plain_copy = -1;                          ///< into plain_copies, or none
    Variant variant = Variant::standard;
    /// Into `waits`: the steps whose completion (KernelTable::complete) this step waits
    /// for before it runs, because it reads what they write.
    uint32_t waits_begin = 0, waits_end = 0;
  };
  /// An argument a step reads in another layout than the plan keeps it in: copied, in
  /// layout `to`, before the step runs, and read from the copy. Copies live only during
  /// their step, so all of them share one buffer of reorder_bytes; `offset` is the copy's
  /// place in it.
  struct Reorder {
    uint32_t var;
    size_t arg;  ///< the argument the copy stands for, by index into arg_vars
    Layout to;
    int64_t offset;
  };

  Plan() = default;
  Plan(Plan&&) = default;  // keeps `programs` where the steps point
  Plan& operator=(Plan&&) = default;

  /// The tape planned: the one given, or its f16 lowering (runtime/lower_f16.h), held in
  /// `lowered`. Ops and vars below are this tape's.
  const Tape* tape = nullptr;
  std::unique_ptr<const Tape> lowered;
  const KernelTable* table = nullptr;
  /// The options it was made with, which its regions' plans are made with too.
  ExecutorOptions options;

  /// In the order they run; none for an op that no output and no effect needs (a value
  /// nothing reads), which opt's DCE would remove.
  std::vector<Step> steps;
  std::vector<Var> arg_vars, out_vars;
  std::vector<const Op*> fused_ops;         ///< per fused step: its ops but Step::op, in tape order
  std::deque<ElementwiseProgram> programs;  ///< a deque: steps point into it

  /// Per var: the layout the plan keeps it in. Inputs, constants and the values the caller
  /// gets are plain.
  std::vector<Layout> layout_of;
  /// Per step with a blocked layout in it: its arguments' layouts as read, then its outputs'.
  std::vector<Layout> step_layouts;
  std::vector<Reorder> reorders;
  int64_t reorder_bytes = 0;

  std::vector<int> slot_of;             ///< per var: its buffer slot, or kNoSlot
  std::vector<int64_t> slot_bytes;      ///< per slot: its capacity
  std::vector<int64_t> slot_offset;     ///< per slot: where it lies in the arena
  int64_t arena_bytes = 0;              ///< one buffer holds every slot
  std::vector<uint32_t> fresh_outputs;  ///< computed tape outputs: fresh for each run
  std::vector<uint32_t> plain_copies;   ///< the vars copied plain for the caller
  /// (var, output): a var written in a fresh output's buffer, which a reshape (copying
  /// nothing) makes the output; the var has no slot.
  std::vector<std::pair<uint32_t, uint32_t>> output_views;
  std::vector<int> copy_of;  ///< per var: its index in plain_copies, or -1
  /// (output var, input var): the donations (ExecutorOptions::donate) kept: the output is
  /// written in the buffer of the input, which no step reads after the output's.
  std::vector<std::pair<uint32_t, uint32_t>> donations;
  /// Steps that complete later than they run (an allreduce, issued at its step and
  /// waited for where its results are first read): Step::waits ranges over this; and
  /// `final_waits`, those no later step reads, completed at the end of the run.
  std::vector<uint32_t> waits, final_waits;

  std::span<const Var> args(const Step& s) const {
    return {arg_vars.data() + s.args_begin, s.num_args};
  }
  std::span<const Var> outs(const Step& s) const {
    return {out_vars.data() + s.outs_begin, s.num_outs};
  }
  /// The step's layouts as KernelCall::layouts takes them: null when all are plain.
  const Layout* layouts(const Step& s) const {
    return s.layouts_begin == kNoLayouts ? nullptr : step_layouts.data() + s.layouts_begin;
  }
  /// The primitive, or the fusion ("batchnorm+relu").
  std::string_view step_name(const Step& s) const;
  std::span<const uint32_t> waits_of(const Step& s) const {
    return {waits.data() + s.waits_begin, s.waits_end - s.waits_begin};
  }
  /// Bytes of all buffers (slots and the reorder buffer; not inputs and constants).
  int64_t planned_bytes() const;
  /// How many times per run a value is reordered for a step that reads it in the other
  /// layout: a blocked one for a kernel that reads only plain, a plain one for an
  /// elementwise op or batch norm whose other operands are blocked.
  size_t reorders_per_run() const { return reorders.size(); }
};

/// The plan of `t`, which must be valid and outlive the plan. A tape with f16 values is
/// planned as lower_f16 makes it. Looks up every kernel (UserError if a primitive has
/// none), groups ops into fused steps, chooses layouts, assigns buffers by liveness and
/// chooses each kernel's variant within `options.extra_work_bytes`.
Plan plan_tape(const Tape& t, const ExecutorOptions& options = {});

}  // namespace ytape
