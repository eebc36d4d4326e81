// The training loop: runs a step tape over batches of the data for some epochs, carrying
// its state from step to step, with evaluation, checkpoints and resumption
// (docs/training.md). The library never prints: it reports through TrainHooks.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <vector>

#include "runtime/executor.h"
#include "runtime/thread_governor.h"
#include "runtime/trace_events.h"
#include "train/binding.h"
#include "train/checkpoint.h"
#include "train/data.h"
#include "train/evaluate.h"

namespace ytape {

struct TrainOptions {
  int64_t epochs = 1;
  uint64_t seed = 0;      ///< the order of every epoch and the random key of every step
  bool shuffle = true;    ///< off: every epoch visits the samples in the file's order
  int64_t every = 0;      ///< save a checkpoint after every this many steps (0: only at the end)
  int64_t max_steps = 0;  ///< stop once this many steps are done in all (0: no limit)
  /// Steps run on as many of the current thread count's threads as are fastest now
  /// (runtime/thread_governor.h): fewer where other processes keep cores busy. The results
  /// are the same bits at any count.
  bool adapt_threads = false;
  ExecutorOptions executor;
  /// Data parallelism (docs/distributed.md): the step tape is one rank's of a group of
  /// comm->size() ranks (opt/distribute.h), its batch a block of the global batch of
  /// comm->size() times as many samples, which is what epochs, positions and checkpoints
  /// count. Null: one process.
  Communicator* comm = nullptr;
  /// The digest checkpoints carry and resume checks; empty: tape_digest of the step tape.
  /// A distributed run gives the digest of the tape written for one process, so that a
  /// checkpoint resumes on any number of ranks.
  std::string tape_digest;
};

/// After each step.
struct StepReport {
  int64_t epoch = 0, step = 0, steps_per_epoch = 0, global_step = 0;
  std::optional<double> loss;
  double samples_per_second = 0;  ///< over the epoch's steps so far in this run
};

/// After each epoch.
struct EpochReport {
  int64_t epoch = 0, steps = 0;
  std::optional<double> mean_loss;  ///< over the epoch's steps (all of them, across a resume)
  double samples_per_second = 0;    ///< over the steps this run did in the epoch
  std::vector<Metric> eval;         ///< empty without an eval tape
  int64_t eval_samples = 0;         ///< the samples evaluated: complete batches only
  int64_t eval_total = 0;           ///< the samples of the eval data
};

struct TrainHooks {
  std::function<void(const StepReport&)> step;
  std::function<void(const EpochReport&)> epoch;
  /// Stores a checkpoint's bytes; without it no checkpoint is made.
  std::function<void(std::span<const uint8_t>)> save;
  /// Asked after every step: true ends the run there (with a checkpoint).
  std::function<bool()> stop;
};

/// A trace of the first steps of a run (Trainer::set_trace): the step tape's executor's
/// steps, and each step's run, for chrome_trace.
struct StepTrace {
  int64_t steps = 0;  ///< how many steps to record; then the trace stops
  std::chrono::steady_clock::time_point origin = std::chrono::steady_clock::now();
  std::vector<StepEvent> events;
  std::vector<TracedRun> runs;
};

/// How a run ended.
enum class TrainEnd { finished, max_steps, stopped };

/// Trains a step tape. The tapes passed in must outlive the trainer.
class Trainer {
 public:
  /// Binds `step` to `data` (bind_step) and takes every carried and fixed input's first
  /// value from `init` by name (entries for data inputs are ignored, unknown ones too).
  /// Throws UserError naming the first input that `init` lacks or holds with another type.
  Trainer(const Tape& step, std::string step_source, DataSet data, TensorMap init,
          std::string init_source, TrainOptions options);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  /// Evaluates `eval` on `data` after every epoch: its data inputs take the data in order,
  /// in batches of its own size (the last incomplete batch is left out); its other inputs
  /// take the carried value of the same name, else --init's. Throws UserError for an input
  /// that has neither, or a value of another type.
  void set_eval(const Tape& eval, std::string eval_source, DataSet data);

  /// Keeps the last incomplete batch (N mod B samples) of every epoch, as one more step on
  /// `last`, the step tape traced at that batch size: it must take the same data, carry the
  /// same state and have the same fixed inputs (by name and type) as the step tape. Throws
  /// UserError naming `last_source` when it does not, when its batch size is not N mod B, or
  /// when N is a multiple of B (there is no incomplete batch).
  void set_last_step(const Tape& last, std::string last_source);

  /// Continues from `c` instead of --init's carried values. Throws UserError naming
  /// `source` when it was written by a run of another step tape (by its digest), seed,
  /// shuffle, batch size or sample count; when its position does not fit this run (a step
  /// past the epoch's, a global step that its epoch and step do not make, an epoch past
  /// the last one of this run's --epochs); or when its tensors are not the carried inputs
  /// with their types.
  void resume(const Checkpoint& c, std::string_view source);

  /// Records the next `trace->steps` runs of the step tape into `trace` (which must outlive
  /// them); the epoch's last incomplete batch (--keep-last) runs another tape, not recorded.
  void set_trace(StepTrace* trace);
  /// The executor of the step tape, whose plan a trace's events name.
  const Executor& step_executor() const { return *executor_; }

  /// Trains until all epochs are done, max_steps is reached, or hooks.stop() says so; then
  /// saves a checkpoint (when hooks.save is given) and returns why it ended.
  TrainEnd run(const TrainHooks& hooks);

  /// The carried tensors by input name, in the step tape's order.
  TensorMap state() const;
  const Position& position() const { return position_; }
  const Binding& binding() const { return binding_; }
  int64_t steps_per_epoch() const { return full_steps() + (last_executor_ ? 1 : 0); }
  /// The samples of a step: the step tape's batch times the ranks.
  int64_t global_batch() const { return binding_.batch * ranks(); }

 private:
  std::optional<TrainEnd> run_epoch(const TrainHooks& hooks);
  std::optional<double> run_step(std::span<const int64_t> order);
  std::optional<double> run_last_step(std::span<const int64_t> order);
  std::optional<double> count_step(std::optional<double> loss);
  int64_t full_steps() const { return data_.samples / global_batch(); }
  int64_t ranks() const;
  int64_t rank() const;
  RunIdentity identity() const;
  void check_position(const Position& p, std::string_view source) const;
  EpochReport finish_epoch(int64_t samples_here, double seconds);
  void evaluate(EpochReport& report);
  void save(const TrainHooks& hooks);
  Checkpoint checkpoint() const;

  const Tape& step_;
  std::string step_source_;
  std::string step_digest_;  ///< tape_digest(step_), which checkpoints carry
  DataSet data_;
  TensorMap init_;
  std::string init_source_;
  TrainOptions options_;
  Binding binding_;
  std::vector<Tensor> values_;   // per input of the step tape; data inputs: the last batch
  std::vector<Tensor> outputs_;  // of the last step
  std::unique_ptr<Executor> executor_;
  // --keep-last: the tape for the last incomplete batch, its binding, and per input of it
  // the step input it shares (npos for data inputs).
  std::unique_ptr<Executor> last_executor_;
  Binding last_binding_;
  std::string last_source_;
  std::vector<size_t> last_from_step_;
  std::unique_ptr<Evaluator> evaluator_;
  // Per input of the eval tape: the step input whose carried value it takes, or npos.
  std::vector<size_t> eval_from_step_;
  std::vector<Tensor> eval_values_;  // per input of the eval tape: --init's, where fixed
  Position position_;
  std::optional<Position> saved_;  // the position of the last checkpoint
  StepTrace* trace_ = nullptr;
  std::optional<ThreadGovernor> governor_;  // with adapt_threads
  std::vector<int64_t> order_;
  int64_t order_epoch_ = 0;  // the epoch order_ belongs to
};

}  // namespace ytape
