// How the ranks of a distributed run talk (docs/distributed.md): a Transport moves bytes
// between two ranks; the collectives the comm ops need (allreduce, allgather) are written
// once over it, as rings, so that every transport gives the same bits.
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "runtime/tensor.h"
#include "tape/dtype.h"

namespace ytape {

/// Point-to-point messages between the ranks of a group. Implementations: ThreadGroup's
/// (ranks as threads of one process, for tests) and MPI's (cli/mpi.cc).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sends `send_bytes` bytes to rank `to` while receiving `recv_bytes` from rank `from`
  /// (both at once, so that every rank of a ring can send before it receives), on
  /// `channel` (0 or 1): two threads may each use one channel at the same time, and a
  /// message is received on the channel it was sent on. Throws UserError naming the rank
  /// that has not answered within the group's timeout, or that has gone.
  virtual void sendrecv(const void* send, int64_t send_bytes, int to, void* recv,
                        int64_t recv_bytes, int from, int channel) = 0;
  /// Whether two threads may use the two channels at once (else only one thread at a
  /// time may call sendrecv).
  virtual bool concurrent() const { return true; }
};

/// The reductions of allreduce.
enum class Reduction { sum, max, min };

/// The collectives of a group, over its transport. Both are rings (each rank sends to
/// rank + 1 and receives from rank - 1), bandwidth-optimal: allreduce moves 2(N-1)/N of the
/// buffer in and out of each rank in 2(N-1) steps, allgather (N-1)/N. The reduction of
/// each element happens in an order fixed by N alone, so every rank gets the same bits,
/// run after run.
///
/// Collectives of more than kSmallBytes run on a thread of the communicator's own
/// (channel 0), in the order they were asked for (every rank asks in the same order), so
/// that the caller may go on computing while one travels: start_allreduce issues one,
/// finish waits for it. Smaller ones (a loss, batch norm's statistics: values the next
/// step needs) and the synchronous calls run at once on the caller's thread (channel 1),
/// not behind a bucket of gradients in flight.
class Communicator {
 public:
  static constexpr int64_t kSmallBytes = int64_t{1} << 20;
  explicit Communicator(std::unique_ptr<Transport> transport);
  ~Communicator();
  Communicator(const Communicator&) = delete;
  Communicator& operator=(const Communicator&) = delete;
  int rank() const { return transport_->rank(); }
  int size() const { return transport_->size(); }
  /// Reduces `count` elements of `dtype` (f32, f64 or i64) at `data` over every rank, in
  /// place.
  void allreduce(void* data, int64_t count, DType dtype, Reduction op);
  /// Joins every rank's `bytes` bytes at `mine` into `out` (size() * bytes), rank order.
  void allgather(const void* mine, int64_t bytes, void* out);
  /// Issues the allreduce of the tensors `from` (f32, f64 or i64, all of one dtype) into
  /// `to` (as many, of the same sizes) under `ticket`, a number the caller chooses and no
  /// unfinished allreduce has. `from` is read before this returns (packed into one
  /// message, in a buffer the communicator keeps for the ticket); `to` is written until
  /// finish, so the caller keeps both the tensors and their memory until then.
  void start_allreduce(uint64_t ticket, std::span<const Tensor* const> from,
                       std::vector<Tensor*> to, Reduction op);
  /// Waits for the allreduce of `ticket`. Rethrows its error (a rank that does not answer).
  void finish(uint64_t ticket);
  /// Seconds the caller has spent in finish and the synchronous calls, waiting.
  double waited_seconds() const { return waited_; }
  /// Throws UserError on every rank when some rank's `digest` differs from rank 0's,
  /// naming the first such rank and `what` the digest is of ("the step tape").
  void require_same(uint64_t digest, std::string_view what);
  /// How many bytes this rank has sent, and the seconds its collectives took.
  int64_t bytes_sent() const { return bytes_sent_.load(); }
  double seconds() const { return seconds_.load(); }

 private:
  struct Worker;
  void reduce_ring(void* data, int64_t count, DType dtype, Reduction op, int channel);
  void gather_ring(const void* mine, int64_t bytes, void* out, int channel);
  void sendrecv(const void* send, int64_t send_bytes, void* recv, int64_t recv_bytes, int channel);
  // Runs `job` (taking its channel) now on channel 1, or on the worker after the jobs
  // queued when the transport allows one thread at a time; waits for it.
  void run_now(const std::function<void(int)>& job);
  std::unique_ptr<Transport> transport_;
  std::vector<uint8_t> scratch_[2];                             // per channel
  std::unordered_map<uint64_t, std::vector<uint8_t>> buffers_;  // start_allreduce's, by ticket
  std::atomic<int64_t> bytes_sent_ = 0;                         // written by both channels' threads
  std::atomic<double> seconds_ = 0;
  double waited_ = 0;
  std::unique_ptr<Worker> worker_;  // null for a group of one: everything runs inline
};

/// `ranks` ranks as threads of this process: communicators(), one per rank, to be used
/// each by its own thread. A rank waits at most `timeout` for another.
class ThreadGroup {
 public:
  explicit ThreadGroup(int ranks, std::chrono::milliseconds timeout = std::chrono::seconds(60));
  ~ThreadGroup();
  /// The communicator of rank `r` (0-based).
  Communicator& communicator(int r) { return *comms_[r]; }
  int size() const { return static_cast<int>(comms_.size()); }

  struct Shared;  // the mailboxes, shared by the ranks' transports

 private:
  std::shared_ptr<Shared> shared_;
  std::vector<std::unique_ptr<Communicator>> comms_;
};

}  // namespace ytape
