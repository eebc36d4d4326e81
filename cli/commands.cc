#include "cli/commands.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <string>
#include <vector>

#include "runtime/parallel.h"
#include "tape/strings.h"

namespace ytape::cli {

std::span<const Command> commands() {
  static const Command table[] = {
      {"show", "Print a tape in text form (or canonical JSON)", setup_show},
      {"check", "Validate a tape and summarise it in one line", setup_check},
      {"trace", "Trace a function of a model program into a tape", setup_trace},
      {"import", "Import an ONNX model (opset 13 to 17) as a tape, its initializers as weights",
       setup_import},
      {"export", "Export a tape as an ONNX model (opset 17), given inputs as initializers",
       setup_export},
      {"grad", "Differentiate a tape (reverse mode) into a gradient tape", setup_grad},
      {"jvp", "Differentiate a tape in forward mode: outputs and their tangents", setup_jvp},
      {"vmap", "Batch a tape: named inputs get a last dim of B, and what depends on them",
       setup_vmap},
      {"gradcheck", "Check a tape's gradient against finite differences in f64", setup_gradcheck,
       false},
      {"opt", "Optimize a tape: fold, simplify, merge and remove ops to a fixed point", setup_opt},
      {"remat",
       "Rematerialize: a gradient tape that recomputes what it does not keep, to fit a budget",
       setup_remat},
      {"distribute",
       "Data parallelism: the tape each of N ranks runs, the batch split, gradients summed",
       setup_distribute},
      {"run", "Execute a tape on real tensors", setup_run, false},
      {"train", "Train: run a step tape over batches of data for epochs, carrying its state",
       setup_train, false},
      {"plan", "Print how ytape run would execute a tape: kernels, layouts, reorders, buffers",
       setup_plan, false},
      {"diff", "Compare two tapes by what they compute; exit 1 when they differ", setup_diff},
      {"dot", "Draw a tape as a Graphviz graph, ops grouped by source line", setup_dot},
      {"stats", "Count ops, FLOPs, parameters and the memory a run needs", setup_stats},
  };
  return table;
}

namespace {

CLI::Validator bounded_below(bool allow_zero) {
  return CLI::Validator(
      [allow_zero](std::string& text) -> std::string {
        double v = 0;
        if (!CLI::detail::lexical_cast(text, v) || !std::isfinite(v)) {
          return fmt::format("must be a number, got '{}'", text);
        }
        if (v > 0 || (allow_zero && v == 0)) return "";
        return fmt::format("must be {} 0, got {}", allow_zero ? "at least" : "greater than", text);
      },
      allow_zero ? "NUMBER >= 0" : "NUMBER > 0");
}

std::string command_list() {
  std::string list;
  for (const Command& c : commands()) list += (list.empty() ? "" : ", ") + std::string(c.name);
  return list;
}

// The first argument of `sub` that looks like an option and is not one of its options.
std::string unknown_option(const CLI::App& sub, int argc, char** argv) {
  for (int i = 2; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--") break;
    if (arg.size() < 2 || arg[0] != '-' || std::isdigit(static_cast<unsigned char>(arg[1])))
      continue;
    std::string name = arg.substr(0, arg.find('='));
    bool known = false;
    for (const CLI::Option* o : sub.get_options()) known = known || o->check_name(name);
    if (!known) return name;
  }
  return "";
}

std::string option_hint(const CLI::App& sub, const std::string& option) {
  std::vector<std::string> names;
  for (const CLI::Option* o : sub.get_options()) {
    for (const std::string& n : o->get_lnames()) names.push_back("--" + n);
    for (const std::string& n : o->get_snames()) names.push_back("-" + n);
  }
  return did_you_mean(option, names);
}

}  // namespace

CLI::Validator one_of(std::vector<std::string> words) {
  return CLI::Validator(
      [words](std::string& text) -> std::string {
        if (std::find(words.begin(), words.end(), text) != words.end()) return "";
        std::string names;
        for (size_t i = 0; i < words.size(); ++i) {
          names += (i == 0 ? "" : i + 1 == words.size() ? " or " : ", ") + words[i];
        }
        return fmt::format("must be {}, got '{}'{}", names, text, did_you_mean(text, words));
      },
      "WORD");
}

void add_execution_options(CLI::App& sub, ExecutionChoice& choice) {
  sub.add_option(
         "--kernels", choice.kernels,
         "fast (default: oneDNN for f32 convolutions) or reference (ytape's own kernels only)")
      ->check(one_of({"fast", "reference"}));
  sub.add_option("--layouts", choice.layouts,
                 "blocked (default: images stay channel-blocked between the kernels that allow it, "
                 "in blocks of 16 channels with AVX-512, 8 with AVX2, as oneDNN's convolutions "
                 "want), c8 or c16 (that block), or plain (every value plain)")
      ->check(one_of({"blocked", "c8", "c16", "plain"}));
  sub.add_option("--fusion", choice.fusion,
                 "on (default: runs of ops such as batch norm + relu as one kernel each, with the "
                 "same results) or off")
      ->check(one_of({"on", "off"}));
  sub.add_option("--threads", choice.threads,
                 "Threads for ytape, OpenBLAS and oneDNN (default: all cores, at most 8)")
      ->check(CLI::Range(1, 256));
  sub.add_option("--work-memory", choice.work_memory,
                 "Memory beyond what the values need that faster kernels (Winograd convolutions) "
                 "may take, e.g. 64M; 0: only room the plan has anyway (default: a fifth of what "
                 "the values need)")
      ->transform(CLI::AsSizeValue(false));
}

void add_memory_option(CLI::App& sub, std::optional<int64_t>& bytes) {
  sub.add_option("--max-memory", bytes,
                 "The most memory tensors may take at once, e.g. 8G; 0: no limit (default: the "
                 "machine's memory)")
      ->transform(CLI::AsSizeValue(false));
}

int64_t default_memory_limit() {
  int64_t physical = static_cast<int64_t>(::sysconf(_SC_PHYS_PAGES)) * ::sysconf(_SC_PAGESIZE);
  if (physical <= 0) physical = INT64_MAX;
  // cgroup v2 writes "max" when there is no limit, which does not parse as a number.
  std::ifstream cgroup("/sys/fs/cgroup/memory.max");
  int64_t limit = 0;
  if (cgroup >> limit && limit > 0) physical = std::min(physical, limit);
  return physical;
}

namespace {

// On a terminal: a note when other threads keep cores busy that this run's threads need.
// Each step of a team of threads waits for the slowest, and one sharing a core with another
// process runs at half speed or waits for its turn: a digits CNN's training took 3x its
// one-thread time beside one busy loop, 25x beside another ytape (docs/training.md). Not
// where the count follows the load (train), nor on a pipe or file, where it would make
// output depend on the machine's load.
void warn_busy_cores() {
  int threads = num_threads();
  if (threads <= 1 || isatty(STDERR_FILENO) == 0) return;
  int cores = usable_cores(), busy = other_running_threads();
  if (busy == 0 || busy + threads <= cores) return;
  fmt::print(stderr,
             "ytape: note: {} other thread{} running on this machine's {} core{}: with --threads "
             "{} each step waits for a thread that shares a core, which can be slower than "
             "--threads {} (docs/training.md, \"Threads on a busy machine\")\n",
             busy, busy == 1 ? " is" : "s are", cores, cores == 1 ? "" : "s", threads,
             std::max(cores - busy, 1));
}

}  // namespace

ExecutorOptions ExecutionChoice::apply() const {
  if (threads > 0) set_num_threads(threads);
  if (!adaptive) warn_busy_cores();
  ExecutorOptions options;
  options.kernels = kernels == "fast" ? KernelSet::fast : KernelSet::reference;
  options.blocked_layouts = layouts != "plain";
  options.block = layouts == "c8" ? Layout::c8 : layouts == "c16" ? Layout::c16 : Layout::plain;
  options.fusion = fusion == "on";
  options.extra_work_bytes = work_memory;
  return options;
}

CLI::Validator positive() {
  return bounded_below(false);
}
CLI::Validator non_negative() {
  return bounded_below(true);
}

std::string usage_message(const CLI::App& app, const CLI::ParseError& e, int argc, char** argv) {
  if (argc < 2) return fmt::format("give a command: {} (ytape --help says more)", command_list());
  std::string word = argv[1];
  const CLI::App* sub = nullptr;
  for (const CLI::App* s : app.get_subcommands([](const CLI::App*) { return true; })) {
    if (s->get_name() == word) sub = s;
  }
  if (sub == nullptr && !word.starts_with("-")) {
    std::vector<std::string> names;
    for (const Command& c : commands()) names.emplace_back(c.name);
    std::string hint = did_you_mean(word, names);
    if (!hint.empty()) return fmt::format("unknown command '{}'{}", word, hint);
    return fmt::format("unknown command '{}'; the commands are {}", word, command_list());
  }
  if (sub == nullptr) {
    return fmt::format("unknown option '{}': options follow the command (ytape COMMAND --help)",
                       word);
  }
  std::string option = unknown_option(*sub, argc, argv);
  if (!option.empty()) {
    return fmt::format("{}: unknown option '{}'{}", word, option, option_hint(*sub, option));
  }
  return fmt::format("{}: {} (ytape {} --help says more)", word, e.what(), word);
}

}  // namespace ytape::cli
