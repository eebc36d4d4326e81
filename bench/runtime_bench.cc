// Runtime benchmark: ResNet-18 forward (224x224, train-mode batch norm) at batch 1 and 8,
// and a tape of 10^6 scalar ops for the per-op overhead of the executor.
//
//   bench_runtime [--threads N] [--repeat R] [--json] [--program FILE.jl] [CONFIG...]
//
// CONFIG is resnet18-b1, resnet18-b8 or scalar-1e6 (default: all). The ResNet-18 tape is
// traced from samples/resnet18.jl (or --program), as `ytape trace samples/resnet18.jl -f loss
// model f32[224,224,3,N]`; the scalar tape is built with the C++ builder. Inputs are made up
// (complete_inputs, seed 1). Each config runs in a child process of its own, so that its
// peak memory is its own; the tracing runs in another child before it, so that the
// interpreter's memory (the program's own weights) never counts. Reported: median and
// minimum time per run, achieved GFLOP/s (convolutions and matmul counted exactly), the
// executor's planned buffer bytes, and the growth of the process's peak resident memory
// during the first run (what the run itself allocated, comparable with PyTorch's).
#include <fmt/format.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <string>
#include <vector>

#include "io/json.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/parallel.h"
#include "samples/cpp/models.h"
#include "tape/cost.h"
#include "tape/error.h"
#include "tracer/program.h"
#include "tracer/trace.h"

using namespace ytape;

namespace {

struct Options {
  int threads = 0;
  int repeat = 0;  // 0: a count that suits the config
  bool json = false;
  std::string program = YTAPE_SOURCE_DIR "/samples/resnet18.jl";
};

double peak_rss_mb() {
  rusage u{};
  getrusage(RUSAGE_SELF, &u);
  return static_cast<double>(u.ru_maxrss) / 1024.0;
}

// The batch of a ResNet-18 config, or 0 for another config.
int64_t resnet_batch(const std::string& config) {
  if (config == "resnet18-b1") return 1;
  if (config == "resnet18-b8") return 8;
  return 0;
}

// Traces ResNet-18 at `batch` in a child process and returns the tape's JSON: the
// interpreter's threads and memory stay in that child. Throws UserError if it fails.
std::string trace_resnet18(const std::string& program, int64_t batch) {
  int fds[2];
  if (pipe(fds) != 0) throw UserError(fmt::format("pipe: {}", std::strerror(errno)));
  std::fflush(stdout);
  pid_t pid = fork();
  if (pid < 0) throw UserError(fmt::format("fork: {}", std::strerror(errno)));
  if (pid == 0) {
    close(fds[0]);
    int rc = 0;
    try {
      tracer::Program interp;
      interp.set_print([](std::string_view) {});
      interp.run_file(program);
      std::string image = fmt::format("f32[224,224,3,{}]", batch);
      std::string json = write_tape_json(tracer::trace(interp, "loss", {"model", image}).tape);
      for (size_t done = 0; done < json.size();) {
        ssize_t n = write(fds[1], json.data() + done, json.size() - done);
        if (n <= 0) throw UserError(fmt::format("write: {}", std::strerror(errno)));
        done += static_cast<size_t>(n);
      }
    } catch (const std::exception& e) {
      fmt::print(stderr, "tracing {}: {}\n", program, e.what());
      rc = 1;
    }
    close(fds[1]);
    _exit(rc);
  }
  close(fds[1]);
  std::string json;
  char buf[1 << 16];
  for (ssize_t n; (n = read(fds[0], buf, sizeof buf)) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) break;
    json.append(buf, static_cast<size_t>(n));
  }
  close(fds[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    throw UserError(fmt::format("tracing {} failed", program));
  }
  return json;
}

// `json`: the traced tape of a ResNet-18 config, empty for the scalar config.
void run_config(const std::string& config, const std::string& json, const Options& o) {
  if (o.threads > 0) set_num_threads(o.threads);
  Tape t = json.empty() ? samples::scalar_chain(1000000) : read_tape_json(json, config);
  TensorMap inputs = complete_inputs(t, {}, 1);
  Executor ex(t);
  double before = peak_rss_mb();
  std::vector<double> ms;
  int repeat = o.repeat > 0 ? o.repeat : config == "resnet18-b8" ? 5 : 10;
  for (int i = 0; i < repeat + 1; ++i) {  // the first run allocates buffers: not timed
    auto start = std::chrono::steady_clock::now();
    ex.run(inputs);
    if (i > 0)
      ms.push_back(
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
              .count());
  }
  double growth = peak_rss_mb() - before;
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2], best = ms.front();
  double gflops = tape_flops(t) / (best * 1e-3) / 1e9;
  double ns_per_op = best * 1e6 / static_cast<double>(t.ops.size() - t.num_inputs());
  if (o.json) {
    fmt::print(
        "{{\"config\":\"{}\",\"threads\":{},\"median_ms\":{:.3f},\"min_ms\":{:.3f},\"gflops\":{:."
        "2f},"
        "\"planned_mb\":{:.1f},\"rss_growth_mb\":{:.1f},\"ns_per_op\":{:.1f}}}\n",
        config, num_threads(), median, best, gflops, ex.plan().planned_bytes() / 1e6, growth,
        ns_per_op);
  } else {
    // Time per op is the executor's overhead only where ops are trivial: the scalar tape.
    bool scalar = config.starts_with("scalar");
    fmt::print("{:<13} {:>8} {:>10.2f} {:>10.2f} {:>9} {:>10.1f} {:>10.1f} {:>9}\n", config,
               t.ops.size() - t.num_inputs(), median, best,
               scalar ? "-" : fmt::format("{:.1f}", gflops), ex.plan().planned_bytes() / 1e6,
               growth, scalar ? fmt::format("{:.1f}", ns_per_op) : "-");
  }
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  std::vector<std::string> configs;
  for (int i = 1; i < argc; ++i) {
    std::string arg = argv[i];
    if (arg == "--threads" && i + 1 < argc)
      o.threads = std::atoi(argv[++i]);
    else if (arg == "--repeat" && i + 1 < argc)
      o.repeat = std::atoi(argv[++i]);
    else if (arg == "--json")
      o.json = true;
    else if (arg == "--program" && i + 1 < argc)
      o.program = argv[++i];
    else
      configs.push_back(arg);
  }
  if (configs.empty()) configs = {"resnet18-b1", "resnet18-b8", "scalar-1e6"};
  for (const std::string& config : configs) {
    if (config != "scalar-1e6" && resnet_batch(config) == 0) {
      fmt::print(stderr, "unknown config '{}': resnet18-b1, resnet18-b8 or scalar-1e6\n", config);
      return 2;
    }
  }
  if (!o.json) {
    fmt::print("{:<13} {:>8} {:>10} {:>10} {:>9} {:>10} {:>10} {:>9}\n", "config", "ops",
               "median ms", "min ms", "GFLOP/s", "plan MB", "RSS+ MB", "ns/op");
  }
  for (const std::string& config : configs) {
    std::string json;  // the tape, traced in a child of its own
    if (int64_t batch = resnet_batch(config); batch > 0) {
      try {
        json = trace_resnet18(o.program, batch);
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", config, e.what());
        return 1;
      }
    }
    std::fflush(stdout);
    pid_t pid = fork();  // before any thread exists in this process
    if (pid == 0) {
      try {
        run_config(config, json, o);
      } catch (const std::exception& e) {
        fmt::print(stderr, "{}: {}\n", config, e.what());
        _exit(1);
      }
      std::fflush(stdout);
      _exit(0);
    }
    int status = 0;
    waitpid(pid, &status, 0);
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) return 1;
  }
  return 0;
}
