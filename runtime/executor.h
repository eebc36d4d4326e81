// The executor: plans a tape once (kernels, buffers), then runs it as a flat loop.
#pragma once

#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/layout.h"
#include "runtime/tensor.h"
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
};

/// One step of an executor's plan, as `ytape plan` prints it.
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
  std::vector<int64_t> buffers;         ///< each output's buffer slot; -1: a buffer of its own
  int64_t workspace = -1;               ///< the slot of the kernel's work memory; -1: none
  Variant variant = Variant::standard;  ///< the way the kernel runs
  /// The first output is a tape output the step writes blocked: the caller gets a plain
  /// copy made after the step.
  bool copied_plain = false;
};

/// Time spent in one op of the plan over all runs.
struct OpTime {
  size_t op = 0;          ///< index into Tape::ops; a fused step: its PlannedStep::op
  std::string_view name;  ///< PlannedStep::name
  double seconds = 0;     ///< total over the runs
};

/// Plans a tape once and runs it any number of times.
///
/// Planning looks up every kernel, turns constants into tensors and assigns each value a
/// buffer by liveness: a buffer is reused once the last reader of its value has run, so
/// peak memory stays near the largest live set. Buffers are allocated on the first run and
/// kept, so later runs allocate nothing. The tape's outputs get buffers of their own, which
/// the caller may keep; an output whose tensors the caller has dropped before the next run
/// keeps its buffer for that run, and one the caller still holds takes the buffer of the run
/// before when the caller has let go of that one: a loop that keeps each run's results
/// until the next (a training step's carried state) allocates nothing either.
class Executor {
 public:
  /// `t` must be valid and must outlive the executor. Throws UserError if a primitive has
  /// no kernel. A tape with f16 values is planned as lower_f16 (runtime/lower_f16.h)
  /// makes it, which the executor keeps: tape() is the tape its plan and times refer to.
  explicit Executor(const Tape& t, ExecutorOptions options = {});

  /// The tape planned: `t`, or its f16 lowering.
  const Tape& tape() const { return tape_; }

  /// Runs the tape. Every input must be given, by name, with its declared dtype and shape
  /// (UserError naming the input otherwise); extra names are an error too. Returns the
  /// outputs in the tape's order. Errors raised by kernels name the op and its location.
  std::vector<Tensor> run(const TensorMap& inputs);
  /// Runs the tape with its inputs given in the tape's order (inputs[i] is the value of the
  /// input Tape::ops[i]), with the same checks, and assigns the outputs to `outputs` in the
  /// tape's order. For loops that run a tape many times (a training step): no names are
  /// looked up, and once `outputs` has its size nothing is allocated.
  void run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs);

  /// Records per-op times in later runs when on.
  void set_profiling(bool on) { profiling_ = on; }
  /// Per-op times so far (profiling only), in op order.
  const std::vector<OpTime>& op_times() const { return times_; }

  /// Receives printed lines; default: standard output.
  void set_print(std::function<void(std::string_view)> print) { context_.print = std::move(print); }
  /// The key of the random ops of later runs (RunContext::random_key); default 0.
  void set_random_key(uint64_t key) { context_.random_key = key; }

  /// Bytes of all buffers the plan uses (not counting inputs and constants).
  int64_t planned_bytes() const;
  /// The layout the plan keeps each var in (indexed by var id); inputs, constants and the
  /// tape's outputs are always plain.
  const std::vector<Layout>& layouts() const { return layout_of_; }
  /// The plan, step by step.
  std::vector<PlannedStep> plan() const;
  /// The capacity of buffer slot `slot` in bytes.
  int64_t slot_bytes(int64_t slot) const { return slot_bytes_[static_cast<size_t>(slot)]; }
  /// How many times per run a value is reordered for a step that reads it in the other
  /// layout: a blocked one for a kernel that reads only plain, a plain one for an
  /// elementwise op or batch norm whose other operands are blocked.
  size_t reorders_per_run() const { return reorders_.size(); }

 private:
  struct Step {
    Kernel kernel;
    const Op* op;                   // attributes and messages; see PlannedStep::op
    int entry;                      // in the kernel table: the primitive, or the fusion
    size_t args_begin, outs_begin;  // into arg_vars_ and arg_ptrs_, out_vars_ and out_ptrs_
    uint32_t num_args, num_outs;
    size_t layouts_begin;                 // into step_layouts_, or kNoLayouts when all are plain
    size_t reorders_begin, reorders_end;  // into reorders_
    size_t fused_begin, fused_end;        // into fused_ops_
    const ElementwiseProgram* program = nullptr;  // Fusion::elementwise: in programs_
    int workspace_slot = -1;                      // KernelCall::workspace's slot, or none
    int plain_copy = -1;                          // into plain_copies_, or none
    Variant variant = Variant::standard;
  };
  // A tape output that its step writes blocked: it lives in a buffer like any value, and
  // after the step a plain copy is made, which the caller gets.
  struct PlainCopy {
    uint32_t var;
    Tensor plain;
  };
  // An argument a step reads in another layout than the plan keeps it in: copied into
  // `copy`, in layout `to`, before the step runs. Copies live only during their step, so
  // all of them share one buffer; `offset` is the copy's place in it.
  struct Reorder {
    uint32_t var;
    Layout to;
    int64_t offset;
    Tensor copy;
  };
  static constexpr size_t kNoLayouts = ~size_t{0};

  void plan_steps(bool fusion);
  void add_step(Kernel k, const Op* op, int entry, const VarList& args, const VarList& outs);
  std::span<const Var> args(const Step& s) const {
    return {arg_vars_.data() + s.args_begin, s.num_args};
  }
  std::span<const Var> outs(const Step& s) const {
    return {out_vars_.data() + s.outs_begin, s.num_outs};
  }
  std::string_view step_name(const Step& s) const;
  void plan_layouts(Layout blocked);
  Layout output_layout(const Step& step) const;
  Layout read_layout(const Step& step, size_t i, Layout out) const;
  bool per_channel(const Step& step, const Type& arg, const Type& out) const;
  void plan_buffers();
  void plan_variants(std::optional<int64_t> extra_bytes);
  int in_place_slot(const Step& step, Var out, size_t index, const std::vector<size_t>& last_use,
                    const std::vector<bool>& is_output) const;
  bool taken_over(const Step& step, Var a) const;
  // The tensor the caller gets for `var`, a tape output.
  Tensor& returned(uint32_t var) {
    return copy_of_[var] < 0 ? values_[var] : plain_copies_[copy_of_[var]].plain;
  }
  const Layout* layouts(const Step& s) const {
    return s.layouts_begin == kNoLayouts ? nullptr : step_layouts_.data() + s.layouts_begin;
  }
  void bind_inputs(const TensorMap& inputs);
  void bind_input(size_t i, const Tensor& value);
  void execute();
  [[noreturn]] void fail(const Step& step, const std::exception& e) const;

  std::unique_ptr<const Tape> lowered_;  // on the heap: tape_ stays valid when moved
  const Tape& tape_;
  const KernelTable& table_;
  std::vector<Tensor> values_;       // one per var
  std::vector<int> slot_of_;         // buffer slot per var, -1 for inputs and constants
  std::vector<int64_t> slot_bytes_;  // capacity per slot
  std::vector<std::shared_ptr<void>> slots_;
  std::vector<uint32_t> fresh_outputs_;  // computed outputs: a new tensor each run
  std::vector<PlainCopy> plain_copies_;
  std::vector<int> copy_of_;           // per var: its index in plain_copies_, or -1
  std::vector<Tensor> spare_outputs_;  // per fresh output: the one of the run before last
  std::vector<Step> steps_;
  std::vector<Var> arg_vars_, out_vars_;
  std::vector<const Tensor*> arg_ptrs_;
  std::vector<Tensor*> out_ptrs_;
  std::vector<const Op*> fused_ops_;
  std::deque<ElementwiseProgram> programs_;  // a deque: steps point into it
  std::vector<Layout> layout_of_;            // per var
  Layout blocked_ = Layout::plain;           // the blocked layout of the plan, if any
  std::vector<Layout> step_layouts_;  // per step: its args' layouts as passed, then its outputs'
  std::deque<Reorder> reorders_;      // a deque: arg_ptrs_ points into it
  int64_t reorder_bytes_ = 0;
  std::shared_ptr<void> reorder_buffer_;
  std::vector<OpTime> times_;
  RunContext context_;
  bool profiling_ = false;
  bool allocated_ = false;
};

}  // namespace ytape
