#include "cli/mpi.h"

#include <fmt/format.h>
#include <mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "runtime/parallel.h"
#include "tape/error.h"

namespace ytape::cli {

namespace {

using Clock = std::chrono::steady_clock;

// MPI_Finalize at a normal exit; a process that exits with an error skips it, and mpirun
// then ends the job's other ranks.
struct Finalizer {
  ~Finalizer() {
    int finalized = 0;
    MPI_Finalized(&finalized);
    if (!finalized && std::uncaught_exceptions() == 0) MPI_Finalize();
  }
};

void check(int code, const char* what) {
  if (code == MPI_SUCCESS) return;
  char text[MPI_MAX_ERROR_STRING];
  int length = 0;
  MPI_Error_string(code, text, &length);
  user_error("MPI {} failed: {}", what, std::string_view(text, static_cast<size_t>(length)));
}

class MpiTransport final : public Transport {
 public:
  MpiTransport(std::chrono::milliseconds timeout, bool multiple_threads)
      : timeout_(timeout), multiple_threads_(multiple_threads) {
    MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
    MPI_Comm_size(MPI_COMM_WORLD, &size_);
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
      MPI_Request requests[2];
      check(MPI_Irecv(in + std::min(done, recv_bytes), r, MPI_BYTE, from, channel, MPI_COMM_WORLD,
                      &requests[0]),
            "receive");
      check(MPI_Isend(out + std::min(done, send_bytes), s, MPI_BYTE, to, channel, MPI_COMM_WORLD,
                      &requests[1]),
            "send");
      wait(requests, from, to, channel);
    }
  }

 private:
  // Channel 1 (what the step waits for) polls, yielding the core, for up to 10 ms; then,
  // and on channel 0 (a bucket that the step overlaps) after a few polls, the wait sleeps
  // between polls, so as not to take the core from the rank's computing thread.
  void wait(MPI_Request* requests, int from, int to, int channel) {
    const Clock::time_point start = Clock::now(), deadline = start + timeout_;
    const auto spin = channel == 1 ? std::chrono::milliseconds(10) : std::chrono::milliseconds(0);
    for (int polls = 0;; ++polls) {
      int done[2] = {0, 0};
      check(MPI_Test(&requests[0], &done[0], MPI_STATUS_IGNORE), "receive");
      check(MPI_Test(&requests[1], &done[1], MPI_STATUS_IGNORE), "send");
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
  static Finalizer finalizer;
  int started = 0, provided = MPI_THREAD_SINGLE;
  MPI_Initialized(&started);
  if (!started) {
    check(MPI_Init_thread(nullptr, nullptr, MPI_THREAD_MULTIPLE, &provided), "start");
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  } else {
    MPI_Query_thread(&provided);
  }
  // Below MPI_THREAD_SERIALIZED the communicator's thread could not call MPI at all.
  if (provided < MPI_THREAD_SERIALIZED) {
    user_error(
        "this MPI library runs no threads (it provides thread level {}); ytape needs "
        "MPI_THREAD_SERIALIZED at least",
        provided);
  }
  return std::make_unique<MpiTransport>(timeout, provided == MPI_THREAD_MULTIPLE);
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
  int started = 0, finalized = 0;
  MPI_Initialized(&started);
  MPI_Finalized(&finalized);
  if (!started || finalized) return "";
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  return "rank " + std::to_string(rank) + ": ";
}

void mpi_abort(int code) {
  std::fflush(stdout);
  std::fflush(stderr);
  MPI_Abort(MPI_COMM_WORLD, code);
  std::_Exit(code);
}

}  // namespace ytape::cli
