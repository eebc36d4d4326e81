// How the ranks of a distributed run talk (docs/distributed.md): a Transport moves bytes
// between two ranks; the collectives the comm ops need (allreduce, allgather) are written
// once over it, as rings, so that every transport gives the same bits.
#pragma once

#include <chrono>
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "tape/dtype.h"

namespace ytape {

/// Point-to-point messages between the ranks of a group. Implementations: ThreadGroup's
/// (ranks as threads of one process, for tests and `run --ranks`) and MPI's (cli/).
class Transport {
 public:
  virtual ~Transport() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;
  /// Sends `send_bytes` bytes to rank `to` while receiving `recv_bytes` from rank `from`
  /// (both at once, so that every rank of a ring can send before it receives). Throws
  /// UserError naming the rank that has not answered within the group's timeout, or that
  /// has gone.
  virtual void sendrecv(const void* send, int64_t send_bytes, int to, void* recv,
                        int64_t recv_bytes, int from) = 0;
};

/// The reductions of allreduce.
enum class Reduction { sum, max, min };

/// The collectives of a group, over its transport. Both are rings (each rank sends to
/// rank + 1 and receives from rank - 1), bandwidth-optimal: allreduce moves 2(N-1)/N of the
/// buffer in and out of each rank in 2(N-1) steps, allgather (N-1)/N. The reduction of
/// each element happens in an order fixed by N alone, so every rank gets the same bits,
/// run after run.
class Communicator {
 public:
  explicit Communicator(std::unique_ptr<Transport> transport);
  int rank() const { return transport_->rank(); }
  int size() const { return transport_->size(); }
  /// Reduces `count` elements of `dtype` (f32, f64 or i64) at `data` over every rank, in
  /// place.
  void allreduce(void* data, int64_t count, DType dtype, Reduction op);
  /// Joins every rank's `bytes` bytes at `mine` into `out` (size() * bytes), rank order.
  void allgather(const void* mine, int64_t bytes, void* out);
  /// Throws UserError on every rank when some rank's `digest` differs from rank 0's,
  /// naming the first such rank and `what` the digest is of ("the step tape").
  void require_same(uint64_t digest, std::string_view what);
  /// How many bytes this rank has sent, and the seconds it spent in collectives.
  int64_t bytes_sent() const { return bytes_sent_; }
  double seconds() const { return seconds_; }

 private:
  void sendrecv(const void* send, int64_t send_bytes, void* recv, int64_t recv_bytes);
  std::unique_ptr<Transport> transport_;
  std::vector<uint8_t> scratch_;
  int64_t bytes_sent_ = 0;
  double seconds_ = 0;
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
