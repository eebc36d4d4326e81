#include "cli/mpi.h"

#include <dlfcn.h>
#include <fmt/format.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <thread>

#include "cli/mpi_module.h"
#include "cli/own_folder.h"
#include "runtime/parallel.h"
#include "tape/error.h"

namespace ytape::cli {

namespace {

using Clock = std::chrono::steady_clock;

const YtapeMpi* loaded = nullptr;  // the module, once a run has asked for MPI

// Where the module is, built and installed alike: <binary's folder>/../<libdir>/ytape/.
// Only that folder, so that no library planted where ytape runs is loaded.
std::filesystem::path module_path() {
  return own_folder().parent_path() / YTAPE_LIBDIR / "ytape" / "libytape_mpi.so";
}

// Sets `loaded`, once.
void load_module() {
  if (loaded != nullptr) return;
  const std::string path = module_path().string();
  void* handle = ::dlopen(path.c_str(), RTLD_NOW | RTLD_GLOBAL);
  if (handle == nullptr) {
    user_error("cannot load the MPI module of ytape (Open MPI, libopenmpi-dev): {}", ::dlerror());
  }
  auto get = reinterpret_cast<const YtapeMpi* (*)()>(::dlsym(handle, "ytape_mpi_module"));
  if (get == nullptr) user_error("'{}' is not ytape's MPI module: {}", path, ::dlerror());
  loaded = get();
}

// MPI_Finalize at a normal exit; a process that exits with an error skips it, and mpirun
// then ends the job's other ranks.
struct Finalizer {
  ~Finalizer() {
    int started = 0, finalized = 0;
    loaded->started(&started, &finalized);
    if (started && !finalized && std::uncaught_exceptions() == 0) loaded->finalize();
  }
};

void check(int code, const char* what) {
  if (code == 0) return;
  char text[512];
  loaded->error_string(code, text, sizeof text);
  user_error("MPI {} failed: {}", what, text);
}

// A send and a receive in flight, released however the wait ends.
struct Pair {
  void* requests = nullptr;
  ~Pair() {
    if (requests != nullptr) loaded->release(requests);
  }
};

class MpiTransport final : public Transport {
 public:
  MpiTransport(std::chrono::milliseconds timeout, bool multiple_threads)
      : timeout_(timeout), multiple_threads_(multiple_threads) {
    check(loaded->rank(&rank_), "rank");
    check(loaded->size(&size_), "size");
  }
  int rank() const override { return rank_; }
  int size() const override { return size_; }

  // Messages of up to 1 GiB at a time (MPI counts in int); the wait polls, so that a rank
  // that never answers ends in an error, not a hang.
  // Each channel is a message tag. MPI_THREAD_MULTIPLE lets both be used at once.
  bool concurrent() const override { return multiple_threads_; }
  void sendrecv(const void* send, int64_t send_bytes, int to, void* recv, int64_t recv_bytes,
                int from, int channel) override {
    constexpr int64_t kPiece = int64_t{1} << 30;
    const auto* out = static_cast<const char*>(send);
    auto* in = static_cast<char*>(recv);
    for (int64_t done = 0; done < std::max(send_bytes, recv_bytes); done += kPiece) {
      const int s = static_cast<int>(std::clamp<int64_t>(send_bytes - done, 0, kPiece));
      const int r = static_cast<int>(std::clamp<int64_t>(recv_bytes - done, 0, kPiece));
      Pair pair;
      check(loaded->exchange(out + std::min(done, send_bytes), s, to,
                             in + std::min(done, recv_bytes), r, from, channel, &pair.requests),
            "exchange");
      wait(pair.requests, from, to, channel);
    }
  }

 private:
  // Channel 1 (what the step waits for) polls, yielding the core, for up to 10 ms; then,
  // and on channel 0 (a bucket that the step overlaps) after a few polls, the wait sleeps
  // between polls, so as not to take the core from the rank's computing thread.
  void wait(void* requests, int from, int to, int channel) {
    const Clock::time_point start = Clock::now(), deadline = start + timeout_;
    const auto spin = channel == 1 ? std::chrono::milliseconds(10) : std::chrono::milliseconds(0);
    for (int polls = 0;; ++polls) {
      int done[2] = {0, 0};
      check(loaded->test(requests, done), "exchange");
      if (done[0] && done[1]) return;
      if (polls < 200) continue;
      const Clock::time_point now = Clock::now();
      if (now - start < spin) {
        std::this_thread::yield();
        continue;
      }
      if (now > deadline) {
        user_error("rank {} has not {} for {} s: it has stopped or hangs (--comm-timeout)",
                   done[0] ? to : from, done[0] ? "taken a message" : "sent a message",
                   timeout_.count() / 1000.0);
      }
      std::this_thread::sleep_for(std::chrono::microseconds(polls < 1000 ? 5 : 50));
    }
  }

  std::chrono::milliseconds timeout_;
  bool multiple_threads_;
  int rank_ = 0, size_ = 1;
};

}  // namespace

bool launched_by_mpirun() {
  return std::getenv("OMPI_COMM_WORLD_SIZE") != nullptr || std::getenv("PMIX_RANK") != nullptr;
}

std::unique_ptr<Transport> mpi_world(std::chrono::milliseconds timeout) {
  load_module();
  static Finalizer finalizer;
  int level = 0;
  check(loaded->start(&level), "start");
  // Below MPI_THREAD_SERIALIZED the communicator's thread could not call MPI at all.
  if (level < 1) {
    user_error(
        "this MPI library runs no threads (it provides MPI_THREAD_SINGLE or FUNNELED); ytape "
        "needs MPI_THREAD_SERIALIZED at least");
  }
  return std::make_unique<MpiTransport>(timeout, level == 2);
}

void add_distributed_options(CLI::App& sub, std::string& mode, double& timeout_seconds) {
  sub.add_option("--distributed", mode,
                 "auto (the default): data-parallel over MPI when mpirun started ytape; mpi; "
                 "off (docs/distributed.md)")
      ->check(CLI::IsMember({"auto", "mpi", "off"}));
  sub.add_option("--comm-timeout", timeout_seconds,
                 "Seconds a rank waits for another before it stops the run (default 30)")
      ->check(CLI::Range(0.001, 1e6));
}

std::unique_ptr<Communicator> start_group(const std::string& mode, double timeout_seconds) {
  if (mode == "off" || (mode == "auto" && !launched_by_mpirun())) return nullptr;
  auto timeout = std::chrono::milliseconds(static_cast<int64_t>(timeout_seconds * 1000));
  return std::make_unique<Communicator>(mpi_world(timeout));
}

std::string communication_line(const Communicator& c, int64_t runs, std::string_view what) {
  if (runs <= 0) return "";
  const double n = static_cast<double>(runs);
  const double took = c.seconds() / n, waited = c.waited_seconds() / n;
  return fmt::format(
      "communication on rank 0: {:.3f} MB sent a {}; collectives {:.1f} ms a {}, {:.1f} ms of "
      "it waited for ({:.0f}% overlapped)\n",
      static_cast<double>(c.bytes_sent()) / n / 1e6, what, took * 1e3, what, waited * 1e3,
      took > 0 ? std::clamp(100 * (1 - waited / took), 0.0, 100.0) : 100.0);
}

int threads_per_rank() {
  const char* local = std::getenv("OMPI_COMM_WORLD_LOCAL_SIZE");
  const int ranks = local != nullptr ? std::max(1, std::atoi(local)) : 1;
  return std::max(1, usable_cores() / ranks);
}

std::string mpi_rank_prefix() {
  if (loaded == nullptr) return "";  // MPI starts only through the module
  int started = 0, finalized = 0, rank = 0;
  loaded->started(&started, &finalized);
  if (!started || finalized || loaded->rank(&rank) != 0) return "";
  return "rank " + std::to_string(rank) + ": ";
}

void mpi_abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  if (loaded != nullptr) loaded->abort(code);
  std::_Exit(code);
}

}  // namespace ytape::cli
