#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <csignal>
#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "cli/mpi.h"
#include "cli/progress.h"
#include "cli/signals.h"
#include "opt/distribute.h"
#include "runtime/comm.h"
#include "runtime/inputs.h"
#include "tape/checked.h"
#include "tape/digest.h"
#include "train/trainer.h"

namespace ytape::cli {

namespace {

struct TrainCli {
  std::string step, data, init, eval, eval_data, checkpoint, out, keep_last, profile_out;
  std::string distributed = "auto", step_log;
  double comm_timeout = 30;
  bool no_shuffle = false, resume = false, fixed_threads = false;
  int64_t log_every = 1, profile_steps = 20;
  TrainOptions train;
  ExecutionChoice execution;
};

std::span<const uint8_t> as_bytes(const std::string& content) {
  return {reinterpret_cast<const uint8_t*>(content.data()), content.size()};
}

// safetensors, or numpy's .npz or .npy (runtime/inputs.h).
TensorMap read_tensors(const std::string& path) {
  return read_tensor_file(as_bytes(read_file(path)), source_name(path));
}

// The run's time so far and what is left at its pace: "elapsed 1.2 s, ETA 3.4 s".
class Clock {
 public:
  Clock(int64_t first_step, int64_t last_step) : first_(first_step), last_(last_step) {}
  std::string at(int64_t global_step) const {
    double elapsed =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
    int64_t done = global_step - first_, left = last_ - global_step;
    if (done <= 0 || left <= 0) return fmt::format("elapsed {}", seconds_str(elapsed));
    return fmt::format(
        "elapsed {}, ETA {}", seconds_str(elapsed),
        seconds_str(elapsed / static_cast<double>(done) * static_cast<double>(left)));
  }

 private:
  static std::string seconds_str(double s) {
    if (s < 60) return fmt::format("{:.1f} s", s);
    if (s < 3600)
      return fmt::format("{}m{:02}s", static_cast<int>(s) / 60, static_cast<int>(s) % 60);
    return fmt::format("{}h{:02}m", static_cast<int>(s) / 3600, static_cast<int>(s) / 60 % 60);
  }
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  int64_t first_, last_;
};

std::string epoch_line(const EpochReport& r, int64_t epochs) {
  std::string line = fmt::format("epoch {}/{}:", r.epoch, epochs);
  if (r.mean_loss) line += fmt::format(" loss {:.6f}", *r.mean_loss);
  // Three digits at least: a slow model's rate (ResNet-18 on one core) is in the tens.
  line += fmt::format(" ({} steps, {:.{}f} samples/s)", r.steps, r.samples_per_second,
                      r.samples_per_second < 100 ? 1 : 0);
  if (r.eval.empty()) return line;
  line += r.eval_samples == r.eval_total
              ? std::string("; eval:")
              : fmt::format("; eval on {} of {} samples:", r.eval_samples, r.eval_total);
  for (size_t i = 0; i < r.eval.size(); ++i) {
    line += fmt::format("{} {} {:.6f}", i == 0 ? "" : ",", r.eval[i].name, r.eval[i].value);
  }
  return line;
}

std::string step_line(const StepReport& r, int64_t epochs) {
  constexpr int kWidth = 20;
  int filled = static_cast<int>(kWidth * r.step / r.steps_per_epoch);
  std::string bar = std::string(filled, '=') + std::string(kWidth - filled, ' ');
  std::string loss = r.loss ? fmt::format("  loss {:.4f}", *r.loss) : "";
  return fmt::format("epoch {}/{} [{}] step {}/{}{}  {:.0f} samples/s", r.epoch, epochs, bar,
                     r.step, r.steps_per_epoch, loss, r.samples_per_second);
}

void declare(CLI::App& sub, TrainCli& o) {
  sub.add_option("STEP_TAPE", o.step, "The training step's tape (JSON)")->required();
  sub.add_option("--data", o.data,
                 "Training data (safetensors): each tensor's last dim counts samples; inputs "
                 "named like a tensor take batches of it")
      ->required();
  sub.add_option("--init", o.init,
                 "Initial values of the other inputs by name (the trace's --save-inputs file)");
  sub.add_option("--epochs", o.train.epochs, "Passes over the data (default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub.add_option("--seed", o.train.seed,
                 "Seed of the order of each epoch and of the random key of each step (default 0)");
  sub.add_flag("--no-shuffle", o.no_shuffle, "Visit the samples in the file's order every epoch");
  sub.add_option("--keep-last", o.keep_last,
                 "Keep each epoch's last incomplete batch: this tape is the step traced at its "
                 "size (N mod the batch size); without it the batch is dropped");
  auto* eval = sub.add_option("--eval", o.eval, "A tape to evaluate after each epoch");
  auto* eval_data = sub.add_option("--eval-data", o.eval_data, "The eval tape's data");
  eval->needs(eval_data);
  eval_data->needs(eval);
  auto* checkpoint =
      sub.add_option("--checkpoint", o.checkpoint,
                     "Checkpoint file: written every --every steps, at the end and on Ctrl-C");
  sub.add_option("--every", o.train.every, "Steps between checkpoints (default: only at the end)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40))
      ->needs(checkpoint);
  sub.add_flag("--resume", o.resume, "Continue from the --checkpoint file")->needs(checkpoint);
  sub.add_option("--max-steps", o.train.max_steps,
                 "Stop once this many steps are done in all, with a checkpoint")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub.add_option("-o,--output", o.out, "Write the final carried tensors to this safetensors file");
  sub.add_option("--log-every", o.log_every,
                 "Print the epoch line every N epochs (the last always; default 1)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 40));
  sub.add_option("--profile-out", o.profile_out,
                 "Write a trace of the first steps (Chrome trace event JSON, as run "
                 "--profile-out writes: Perfetto and chrome://tracing open it) to this file");
  sub.add_option("--profile-steps", o.profile_steps,
                 "How many steps --profile-out records (default 20)")
      ->check(CLI::Range(int64_t{1}, int64_t{1} << 20));
  sub.add_option("--step-log", o.step_log,
                 "Write each step's global step and loss (%.9g), one line each, to this file");
  add_distributed_options(sub, o.distributed, o.comm_timeout);
  add_execution_options(sub, o.execution);
  sub.add_flag("--fixed-threads", o.fixed_threads,
               "Run every step on --threads threads, however busy the machine (default: as many "
               "of them as are fastest now, the same results at any count)");
}

// Prints what an interrupted run leaves and returns its exit status, 128 + the signal.
int interrupted(const Trainer& t, const TrainCli& o) {
  const Position& p = t.position();
  fmt::print(stderr,
             "ytape: interrupted ({}) after global step {} (epoch {}, step {} of {}); checkpoint "
             "written to {}: continue with --resume\n",
             stop_signal() == SIGINT ? "SIGINT" : "SIGTERM", p.global_step, p.epoch, p.step,
             t.steps_per_epoch(), o.checkpoint);
  return 128 + stop_signal();
}

// The inputs of `step` that take batches of `data`: the ones the ranks split.
std::vector<std::string> data_inputs(const Tape& step, const DataSet& data) {
  std::vector<std::string> names;
  for (const Op& op : step.ops) {
    if (op.kind == OpKind::input && data.find(op.name) != nullptr) names.push_back(op.name);
  }
  return names;
}

// This rank's step tape, once every rank is known to start from the same tape, weights
// and data (checked before the first step, which would otherwise mix them).
Tape rank_step(Communicator& group, const Tape& step, const DataSet& data, const TrainCli& o,
               std::pair<std::string_view, std::string_view> init_and_data) {
  group.require_same(fnv1a(tape_digest(step)), fmt::format("the step tape {}", o.step));
  group.require_same(fnv1a(init_and_data.first), fmt::format("--init {}", o.init));
  group.require_same(fnv1a(init_and_data.second), fmt::format("--data {}", o.data));
  return distribute(step, {.ranks = group.size(), .split = data_inputs(step, data)});
}

int train(const TrainCli& o) {
  // With --resume the checkpoint is read and written again: it is an output only here.
  refuse_overwrites({{"STEP_TAPE", o.step},
                     {"--data", o.data},
                     {"--init", o.init},
                     {"--eval", o.eval},
                     {"--eval-data", o.eval_data},
                     {"--keep-last", o.keep_last}},
                    {{"--checkpoint", o.checkpoint},
                     {"-o", o.out},
                     {"--profile-out", o.profile_out},
                     {"--step-log", o.step_log}});
  std::unique_ptr<Communicator> group = start_group(o.distributed, o.comm_timeout);
  const bool leader = group == nullptr || group->rank() == 0;
  TrainOptions options = o.train;
  options.shuffle = !o.no_shuffle;
  options.adapt_threads = !o.fixed_threads && group == nullptr;  // ranks share the cores
  ExecutionChoice execution = o.execution;
  if (group != nullptr && execution.threads == 0) execution.threads = threads_per_rank();
  execution.adaptive = options.adapt_threads;
  options.executor = execution.apply();
  // The tapes outlive the trainer, which refers to them.
  Tape step = load_tape(o.step);
  Tape eval = o.eval.empty() ? Tape{} : load_tape(o.eval);
  Tape last = o.keep_last.empty() ? Tape{} : load_tape(o.keep_last);
  const std::string init_bytes = o.init.empty() ? std::string() : read_file(o.init);
  const std::string data_bytes = read_file(o.data);
  TensorMap init =
      o.init.empty() ? TensorMap{} : read_tensor_file(as_bytes(init_bytes), source_name(o.init));
  DataSet data = make_data_set(read_tensor_file(as_bytes(data_bytes), source_name(o.data)),
                               source_name(o.data));
  Tape dist;
  if (group != nullptr) {
    dist = rank_step(*group, step, data, o, {init_bytes, data_bytes});
    options.tape_digest = tape_digest(step);
    options.comm = group.get();
  }
  Trainer trainer(group != nullptr ? dist : step, source_name(o.step), std::move(data),
                  std::move(init), o.init.empty() ? "" : source_name(o.init), options);
  if (!o.keep_last.empty()) trainer.set_last_step(last, source_name(o.keep_last));
  if (!o.eval.empty()) {
    trainer.set_eval(eval, source_name(o.eval),
                     make_data_set(read_tensors(o.eval_data), source_name(o.eval_data)));
  }
  if (o.resume) {
    std::string name = source_name(o.checkpoint);
    trainer.resume(read_checkpoint(as_bytes(read_file(o.checkpoint)), name), name);
  }
  StepTrace trace{.steps = o.profile_steps};
  if (!o.profile_out.empty()) trainer.set_trace(&trace);
  Progress progress;
  TrainHooks hooks;
  int64_t end_step =
      checked::mul(options.epochs, trainer.steps_per_epoch(), "the steps of the run");
  if (options.max_steps > 0) end_step = std::min(end_step, options.max_steps);
  Clock clock(trainer.position().global_step, end_step);
  std::string step_log;
  hooks.step = [&](const StepReport& r) {
    if (!leader) return;
    progress.update(step_line(r, options.epochs) + "  " + clock.at(r.global_step));
    if (!o.step_log.empty()) {
      step_log += r.loss ? fmt::format("{} {:.9g}\n", r.global_step, *r.loss)
                         : fmt::format("{}\n", r.global_step);
    }
  };
  hooks.epoch = [&](const EpochReport& r) {
    if (!leader) return;
    progress.done();
    if (r.epoch % o.log_every != 0 && r.epoch != options.epochs) return;
    fmt::print("{}; {}\n", epoch_line(r, options.epochs), clock.at(trainer.position().global_step));
    std::fflush(stdout);
  };
  if (!o.checkpoint.empty()) {
    // Rank 0 writes; every rank holds the same state.
    hooks.save = [&](std::span<const uint8_t> bytes) {
      if (leader)
        write_file(o.checkpoint, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    };
    // The ranks stop after the same step: a signal that reached one rank stops them all.
    hooks.stop = [&] {
      int64_t stop = stop_signal() != 0;
      if (group != nullptr) group->allreduce(&stop, 1, DType::i64, Reduction::max);
      return stop != 0;
    };
    set_graceful_stop(true);
  }
  const int64_t first_step = trainer.position().global_step;
  TrainEnd end = trainer.run(hooks);
  set_graceful_stop(false);  // what is left is short: a signal now ends ytape as usual
  progress.done();
  if (group != nullptr && leader) {
    fmt::print("{}",
               communication_line(*group, trainer.position().global_step - first_step, "step"));
  }
  if (leader && !o.step_log.empty()) write_file(o.step_log, step_log);
  if (!leader) return end == TrainEnd::stopped ? 128 + std::max(stop_signal(), 2) : kOk;
  if (end == TrainEnd::stopped) return interrupted(trainer, o);
  if (end == TrainEnd::max_steps) {
    fmt::print("stopped after global step {} (--max-steps)\n", trainer.position().global_step);
  }
  if (!o.profile_out.empty()) {
    write_file(o.profile_out, chrome_trace(trainer.step_executor(), trace.events, trace.runs,
                                           "ytape train " + source_name(o.step)));
  }
  if (!o.out.empty()) write_safetensors_file(o.out, trainer.state());
  return kOk;
}

}  // namespace

Run setup_train(CLI::App& sub) {
  auto o = std::make_shared<TrainCli>();
  declare(sub, *o);
  return [o] { return train(*o); };
}

}  // namespace ytape::cli
