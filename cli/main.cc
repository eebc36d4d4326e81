// ytape: the command-line tool. The only place that prints errors and chooses exit codes.
#include <fmt/format.h>
#include <sys/resource.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>
#include <optional>
#include <vector>

#include "cli/commands.h"
#include "cli/mpi.h"
#include "cli/own_folder.h"
#include "cli/signals.h"
#include "runtime/tensor.h"
#include "tape/allocator.h"
#include "tape/error.h"
#include "tape/strings.h"

namespace {

using namespace ytape::cli;

// `import` and `export` run in ytape-onnx, beside this binary, which has them and the ONNX
// libraries (cli/CMakeLists.txt): it takes this process's place.
void run_onnx_binary_for(int argc, char** argv) {
  if (argc < 2) return;
  for (const Command& c : commands()) {
    if (c.setup != nullptr || c.name != argv[1]) continue;
    const std::string path = (own_folder() / "ytape-onnx").string();
    ::execv(path.c_str(), argv);
    ytape::user_error("{} needs ytape-onnx, beside ytape, which cannot be run: '{}': {}", c.name,
                      path, std::strerror(errno));
  }
}

int run(int argc, char** argv) {
  run_onnx_binary_for(argc, argv);
  CLI::App app{"ytape: tape-based automatic differentiation", "ytape"};
  app.set_version_flag("--version", "ytape " YTAPE_VERSION);
  app.require_subcommand(1);
  struct Sub {
    CLI::App* app;
    Run run;
    const Command* command;
  };
  std::vector<Sub> subs;
  std::optional<int64_t> max_memory;
  for (const Command& c : commands()) {
    CLI::App* sub = app.add_subcommand(std::string(c.name), std::string(c.help));
    if (c.setup == nullptr) continue;  // in ytape-onnx
    subs.push_back({sub, c.setup(*sub), &c});
    add_memory_option(*sub, max_memory);
  }
  try {
    app.parse(argc, argv);
  } catch (const CLI::Success& e) {
    return app.exit(e);  // --help, --version
  } catch (const CLI::ParseError& e) {
    fmt::print(stderr, "ytape: error: {}\n", ytape::printable(usage_message(app, e, argc, argv)));
    return kBadInput;
  }
  int64_t limit = max_memory.value_or(default_memory_limit());
  ytape::set_tensor_memory_limit(limit == 0 ? INT64_MAX : limit);
  for (const Sub& sub : subs) {
    if (!sub.app->parsed()) continue;
    if (sub.command->tape_work) {
      ytape::keep_freed_memory();
      ytape::keep_freed_buffers();
    }
    return sub.run();
  }
  return kBadInput;
}

// Runs the command and reports what went wrong, as the exit status says.
int run_and_report(int argc, char** argv) {
  try {
    return run(argc, argv);
  } catch (const ytape::UserError& e) {
    fmt::print(stderr, "ytape: error: {}{}\n", mpi_rank_prefix(), ytape::printable_lines(e.what()));
    return kBadInput;
  } catch (const ytape::InternalError& e) {
    fmt::print(stderr, "ytape: internal error (a bug in ytape, please report it): {}\n",
               ytape::printable_lines(e.what()));
    return kInternal;
  } catch (const std::bad_alloc&) {
    fmt::print(stderr,
               "ytape: error: out of memory: the work needs more than this machine or its limit "
               "(ulimit -v) allows\n");
    return kBadInput;
  } catch (const std::exception& e) {
    fmt::print(stderr, "ytape: internal error (a bug in ytape, please report it): {}\n",
               ytape::printable_lines(e.what()));
    return kInternal;
  }
}

}  // namespace

int main(int argc, char** argv) {
  install_signal_handlers();
  int status = run_and_report(argc, argv);
  // A rank of a distributed run that failed ends the others, which would wait for it.
  if (status != 0 && !mpi_rank_prefix().empty()) mpi_abort(status);
  // Under an address-space limit, an OpenBLAS thread that could not get its buffer retries
  // forever, and OpenBLAS joins its threads when the process exits normally: end at once.
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) == 0 && limit.rlim_cur != RLIM_INFINITY) {
    std::fflush(stdout);
    std::fflush(stderr);
    std::_Exit(status);
  }
  return status;
}
