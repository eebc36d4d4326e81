// The executor: runs a tape's plan (runtime/plan.h), made once, as a flat loop.
#pragma once

#include <chrono>
#include <cstdint>
#include <exception>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <utility>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/plan.h"
#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape {

/// Time spent in one op of the plan over all runs.
struct OpTime {
  size_t op = 0;          ///< index into Tape::ops; a fused step: its Plan::Step::op
  std::string_view name;  ///< Plan::step_name
  double seconds = 0;     ///< total over the runs
};

class Executor;

/// One step a traced run executed (Executor::set_trace): the executor whose plan holds it
/// (the tape's, or a region's), its index in that plan's steps, when it began (seconds
/// from the trace's origin) and how long it took.
struct StepEvent {
  const Executor* executor = nullptr;
  uint32_t step = 0;
  double start = 0, seconds = 0;
};

/// Plans a tape once (plan_tape) and runs the plan any number of times.
///
/// Buffers are allocated on the first run and kept, so later runs allocate nothing. The
/// tape's outputs get buffers of their own, which the caller may keep; an output whose
/// tensors the caller has dropped before the next run keeps its buffer for that run, and
/// one the caller still holds takes the buffer of the run before when the caller has let go
/// of that one: a loop that keeps each run's results until the next (a training step's
/// carried state) allocates nothing either. An output donated an input's buffer
/// (ExecutorOptions::donate, Plan::donations) is written in it and shares it with the
/// input's tensor.
class Executor final : public RegionRunner {
 public:
  /// `t` must be valid and must outlive the executor. Throws UserError if a primitive has
  /// no kernel. A tape with f16 values is planned as lower_f16 (runtime/lower_f16.h)
  /// makes it, which the plan keeps: tape() is the tape its plan and times refer to.
  explicit Executor(const Tape& t, ExecutorOptions options = {});

  /// The tape planned: `t`, or its f16 lowering.
  const Tape& tape() const { return *plan_.tape; }
  /// The plan the executor runs: its steps, layouts and buffers (runtime/plan.h), step by
  /// step and as `ytape plan` prints it in runtime/plan_print.h.
  const Plan& plan() const { return plan_; }

  /// Runs the tape. Every input must be given, by name, with its declared dtype and shape
  /// (UserError naming the input otherwise); extra names are an error too. Returns the
  /// outputs in the tape's order. Errors raised by kernels name the op and its location.
  std::vector<Tensor> run(const TensorMap& inputs);
  /// Runs the tape with its inputs given in the tape's order (inputs[i] is the value of the
  /// input Tape::ops[i]), with the same checks, and assigns the outputs to `outputs` in the
  /// tape's order. For loops that run a tape many times (a training step): no names are
  /// looked up, and once `outputs` has its size nothing is allocated.
  void run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs);

  /// Records per-op times in later runs when on, in the regions' executors too.
  void set_profiling(bool on);
  /// Appends a StepEvent for every step of later runs to `events` (null: no more), the
  /// regions' steps too, times counted from `origin`. `events` must outlive the runs.
  void set_trace(std::vector<StepEvent>* events, std::chrono::steady_clock::time_point origin);
  /// Per-op times so far (profiling only), in op order.
  const std::vector<OpTime>& op_times() const { return times_; }
  /// The runs profiled so far; for a region's executor, its trips.
  int64_t profiled_runs() const { return profiled_runs_; }
  /// The executor of `region` (a region of one of the tape's ops), or null before its
  /// first run.
  const Executor* region_executor(const Tape& region) const;

  /// Receives printed lines; default: standard output.
  void set_print(std::function<void(std::string_view)> print);
  /// The key of the random ops of later runs (RunContext::random_key); default 0.
  void set_random_key(uint64_t key);
  /// The group of a distributed run, which the comm ops talk to (runtime/comm.h); null,
  /// the default: a group of one. `comm` must outlive the runs.
  void set_communicator(Communicator* comm);

  /// RegionRunner: each region of the tape's ops gets an executor of its own, made on its
  /// first run with this one's options.
  void run_region(const Tape& region, std::span<const Tensor> inputs,
                  std::vector<Tensor>& outputs) override;

 private:
  // The tensor the caller gets for `var`, a tape output.
  Tensor& returned(uint32_t var) {
    return plan_.copy_of[var] < 0 ? values_[var] : plain_copies_[plan_.copy_of[var]];
  }
  void bind_inputs(const TensorMap& inputs);
  void bind_input(size_t i, const Tensor& value);
  void allocate();
  void recycle_outputs();
  void bind_donations();
  void execute();
  void complete(uint32_t step);
  // Adds the time of step i since `start` to the profile and the trace, where kept.
  void record_time(size_t i, std::chrono::steady_clock::time_point start);
  [[noreturn]] void fail(const Plan::Step& step, const std::exception& e) const;

  Plan plan_;
  std::vector<Tensor> values_;                // one per var
  std::shared_ptr<void> arena_;               // Plan::arena_bytes
  std::vector<std::shared_ptr<void>> slots_;  // views of it, at Plan::slot_offset
  // Per step argument and output (Plan::arg_vars, out_vars): the tensor the kernel sees,
  // the var's value or its reorder's copy.
  std::vector<const Tensor*> arg_ptrs_;
  std::vector<Tensor*> out_ptrs_;
  std::vector<Tensor> reorder_copies_;  // per Plan::reorders, in reorder_buffer_
  std::shared_ptr<void> reorder_buffer_;
  std::vector<Tensor> plain_copies_;   // per Plan::plain_copies
  std::vector<Tensor> spare_outputs_;  // per fresh output: the one of the run before last
  std::vector<bool> donated_;          // per var: an output written in an input's buffer
  std::vector<OpTime> times_;
  RunContext context_;
  ExecutorOptions options_;
  std::unordered_map<const Tape*, std::unique_ptr<Executor>> regions_;
  bool profiling_ = false;
  std::vector<StepEvent>* trace_ = nullptr;
  std::chrono::steady_clock::time_point trace_origin_;
  int64_t profiled_runs_ = 0;
  bool allocated_ = false;
};

}  // namespace ytape
