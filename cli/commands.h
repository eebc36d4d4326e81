// The table of subcommands. Each is a thin function over the libraries: parse options,
// load, call one library function, write.
#pragma once

#include <CLI/CLI.hpp>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/executor.h"

namespace ytape::cli {

/// Exit codes of every subcommand.
enum Exit : int { kOk = 0, kNegative = 1, kBadInput = 2, kInternal = 3 };

/// Runs a subcommand after its options are parsed; returns its exit code.
using Run = std::function<int()>;

struct Command {
  std::string_view name;
  std::string_view help;
  /// Declares the subcommand's options on `sub` and returns what runs it.
  Run (*setup)(CLI::App& sub);
  /// Whether its work is building and reading tapes rather than running them: such
  /// commands keep freed memory for reuse (tape/allocator.h) and freed tensor buffers for
  /// tensors of their size (keep_freed_buffers: the tracer's example values), which saves
  /// time on big tapes but would raise the peak memory that `run` is measured by.
  bool tape_work = true;
};

/// Every subcommand, in the order `ytape --help` lists them.
std::span<const Command> commands();

/// Option checks whose messages say what to give ("must be greater than 0, got 0"):
/// a finite number greater than 0, or at least 0.
CLI::Validator positive();
CLI::Validator non_negative();
/// An option check that accepts one of `words`, and names the closest one otherwise.
CLI::Validator one_of(std::vector<std::string> words);

/// How `run`, `plan`, `train` and `gradcheck` execute a tape: the --kernels, --layouts,
/// --fusion, --threads and --work-memory options.
struct ExecutionChoice {
  std::string kernels = "fast", layouts = "blocked", fusion = "on";
  int threads = 0;                     ///< 0: the default
  std::optional<int64_t> work_memory;  ///< ExecutorOptions::extra_work_bytes
  bool adaptive = false;  ///< the thread count follows the load (no note on busy cores)
  /// Sets the thread count, if given, and returns the executor's options.
  ExecutorOptions apply() const;
};
void add_execution_options(CLI::App& sub, ExecutionChoice& choice);

/// The --max-memory option of every subcommand: the most bytes that tensors may take at
/// once (`8G`, `512M`; 0 for no limit). Without it, default_memory_limit().
void add_memory_option(CLI::App& sub, std::optional<int64_t>& bytes);
/// The machine's physical memory, or the memory limit of its control group if that is
/// lower: past it a process would swap or be killed without a word, where the limit
/// gives a message instead.
int64_t default_memory_limit();

/// The one-line message (without "ytape: error: ") for a command line that `app` refused
/// with `e`: an unknown command or option names the closest valid one.
std::string usage_message(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv);

Run setup_show(CLI::App& sub);
Run setup_check(CLI::App& sub);
Run setup_run(CLI::App& sub);
Run setup_train(CLI::App& sub);
Run setup_plan(CLI::App& sub);
Run setup_trace(CLI::App& sub);
/// In ytape-onnx alone (cli/CMakeLists.txt): null in ytape, which runs ytape-onnx for them.
[[gnu::weak]] Run setup_import(CLI::App& sub);
[[gnu::weak]] Run setup_export(CLI::App& sub);
Run setup_grad(CLI::App& sub);
Run setup_jvp(CLI::App& sub);
Run setup_vmap(CLI::App& sub);
Run setup_gradcheck(CLI::App& sub);
Run setup_opt(CLI::App& sub);
Run setup_remat(CLI::App& sub);
Run setup_diff(CLI::App& sub);
Run setup_dot(CLI::App& sub);
Run setup_stats(CLI::App& sub);
Run setup_distribute(CLI::App& sub);

}  // namespace ytape::cli
