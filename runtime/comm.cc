#include "runtime/comm.h"

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <future>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "tape/error.h"

namespace ytape {

namespace {

using Clock = std::chrono::steady_clock;

template <typename T>
void reduce_into(T* own, const T* other, int64_t n, Reduction op) {
  switch (op) {
    case Reduction::sum:
      for (int64_t i = 0; i < n; ++i) own[i] = other[i] + own[i];
      break;
    case Reduction::max:
      for (int64_t i = 0; i < n; ++i) own[i] = std::max(own[i], other[i]);
      break;
    case Reduction::min:
      for (int64_t i = 0; i < n; ++i) own[i] = std::min(own[i], other[i]);
      break;
  }
}

void reduce_into(void* own, const void* other, int64_t n, DType dtype, Reduction op) {
  switch (dtype) {
    case DType::f32:
      return reduce_into(static_cast<float*>(own), static_cast<const float*>(other), n, op);
    case DType::f64:
      return reduce_into(static_cast<double*>(own), static_cast<const double*>(other), n, op);
    case DType::i64:
      return reduce_into(static_cast<int64_t*>(own), static_cast<const int64_t*>(other), n, op);
    default:
      internal_error("allreduce of {}", dtype_name(dtype));
  }
}

}  // namespace

// The thread that runs the collectives, one at a time, in the order they were queued.
struct Communicator::Worker {
  std::mutex mutex;
  std::condition_variable queued;
  std::deque<std::function<void()>> jobs;
  bool closing = false;
  std::thread thread;
  std::unordered_map<uint64_t, std::future<void>> pending;  // by ticket

  Worker() : thread([this] { loop(); }) {}
  ~Worker() {
    {
      std::lock_guard lock(mutex);
      closing = true;
    }
    queued.notify_all();
    thread.join();
  }
  void push(std::function<void()> job) {
    {
      std::lock_guard lock(mutex);
      jobs.push_back(std::move(job));
    }
    queued.notify_all();
  }
  void loop() {
    for (;;) {
      std::function<void()> job;
      {
        std::unique_lock lock(mutex);
        queued.wait(lock, [this] { return closing || !jobs.empty(); });
        if (jobs.empty()) return;
        job = std::move(jobs.front());
        jobs.pop_front();
      }
      job();
    }
  }
};

Communicator::Communicator(std::unique_ptr<Transport> transport)
    : transport_(std::move(transport)) {
  if (transport_->size() > 1) worker_ = std::make_unique<Worker>();
}

Communicator::~Communicator() = default;

void Communicator::run_now(const std::function<void(int)>& job) {
  const Clock::time_point start = Clock::now();
  if (worker_ == nullptr) return job(1);
  if (transport_->concurrent()) {
    job(1);
  } else {
    auto promise = std::make_shared<std::promise<void>>();
    std::future<void> done = promise->get_future();
    worker_->push([&job, promise] {
      try {
        job(0);
        promise->set_value();
      } catch (...) {
        promise->set_exception(std::current_exception());
      }
    });
    done.get();
  }
  waited_ += std::chrono::duration<double>(Clock::now() - start).count();
}

void Communicator::allreduce(void* data, int64_t count, DType dtype, Reduction op) {
  run_now([=, this](int channel) { reduce_ring(data, count, dtype, op, channel); });
}

void Communicator::allgather(const void* mine, int64_t bytes, void* out) {
  run_now([=, this](int channel) { gather_ring(mine, bytes, out, channel); });
}

// A bucket travels as one message per ring step: on a machine whose cores all compute,
// each message costs both ranks' communicating threads a wake-up. Its buffer is kept from
// step to step, so it costs no fresh pages. It is packed here, since an argument may lie
// where the next step writes (a reordered copy); the sums are unpacked on the worker.
void Communicator::start_allreduce(uint64_t ticket, std::span<const Tensor* const> from,
                                   std::vector<Tensor*> to, Reduction op) {
  int64_t bytes = 0;
  for (const Tensor* x : from) bytes += x->bytes();
  std::vector<uint8_t>& buffer = buffers_[ticket];
  buffer.resize(static_cast<size_t>(bytes));
  uint8_t* at = buffer.data();
  for (const Tensor* x : from) {
    if (x->bytes() > 0) std::memcpy(at, x->raw(), static_cast<size_t>(x->bytes()));
    at += x->bytes();
  }
  const DType dtype = from.empty() ? DType::f32 : from[0]->dtype();
  auto job = [this, &buffer, to = std::move(to), dtype, op](int channel) {
    reduce_ring(buffer.data(), static_cast<int64_t>(buffer.size()) / dtype_size(dtype), dtype, op,
                channel);
    const uint8_t* at = buffer.data();
    for (Tensor* y : to) {
      if (y->bytes() > 0) std::memcpy(y->raw(), at, static_cast<size_t>(y->bytes()));
      at += y->bytes();
    }
  };
  if (worker_ == nullptr || bytes <= kSmallBytes) return run_now(job);
  auto promise = std::make_shared<std::promise<void>>();
  std::lock_guard lock(worker_->mutex);
  worker_->pending.emplace(ticket, promise->get_future());
  worker_->jobs.push_back([job = std::move(job), promise] {
    try {
      job(0);
      promise->set_value();
    } catch (...) {
      promise->set_exception(std::current_exception());
    }
  });
  worker_->queued.notify_all();
}

void Communicator::finish(uint64_t ticket) {
  if (worker_ == nullptr) return;
  const Clock::time_point start = Clock::now();
  std::future<void> done;
  {
    std::lock_guard lock(worker_->mutex);
    auto it = worker_->pending.find(ticket);
    if (it == worker_->pending.end()) return;  // a small one, done at its start
    done = std::move(it->second);
    worker_->pending.erase(it);
  }
  done.get();
  waited_ += std::chrono::duration<double>(Clock::now() - start).count();
}

void Communicator::sendrecv(const void* send, int64_t send_bytes, void* recv, int64_t recv_bytes,
                            int channel) {
  const int n = size(), r = rank();
  transport_->sendrecv(send, send_bytes, (r + 1) % n, recv, recv_bytes, (r + n - 1) % n, channel);
  bytes_sent_ += send_bytes;
}

// The ring: a reduce-scatter of N - 1 steps leaves chunk r + 1 complete on rank r, then an
// allgather of N - 1 steps passes the complete chunks round. Chunk c of element i's is
// reduced starting at rank c + 1 and going round, the same order on every run.
void Communicator::reduce_ring(void* data, int64_t count, DType dtype, Reduction op, int channel) {
  const int n = size();
  if (n == 1 || count == 0) return;
  const Clock::time_point start = Clock::now();
  const int r = rank();
  const int64_t elem = dtype_size(dtype);
  // Chunk c (taken mod n) holds elements count*c/n up to count*(c+1)/n.
  auto wrap = [n](int c) { return static_cast<int64_t>((c % n + n) % n); };
  auto at = [&](int c) { return static_cast<uint8_t*>(data) + count * wrap(c) / n * elem; };
  auto chunk_length = [&](int c) { return count * (wrap(c) + 1) / n - count * wrap(c) / n; };
  std::vector<uint8_t>& scratch = scratch_[channel];
  scratch.resize(static_cast<size_t>((count / n + 1) * elem));
  for (int s = 0; s < n - 1; ++s) {
    const int out = r - s, in = r - s - 1;
    sendrecv(at(out), chunk_length(out) * elem, scratch.data(), chunk_length(in) * elem, channel);
    reduce_into(at(in), scratch.data(), chunk_length(in), dtype, op);
  }
  for (int s = 0; s < n - 1; ++s) {
    const int out = r + 1 - s, in = r - s;
    sendrecv(at(out), chunk_length(out) * elem, at(in), chunk_length(in) * elem, channel);
  }
  seconds_.fetch_add(std::chrono::duration<double>(Clock::now() - start).count());
}

void Communicator::gather_ring(const void* mine, int64_t bytes, void* out, int channel) {
  const int n = size(), r = rank();
  auto* base = static_cast<uint8_t*>(out);
  if (bytes > 0) std::memcpy(base + r * bytes, mine, static_cast<size_t>(bytes));
  if (n == 1 || bytes == 0) return;
  const Clock::time_point start = Clock::now();
  for (int s = 0; s < n - 1; ++s) {
    const int send = ((r - s) % n + n) % n, recv = ((r - s - 1) % n + n) % n;
    sendrecv(base + send * bytes, bytes, base + recv * bytes, bytes, channel);
  }
  seconds_.fetch_add(std::chrono::duration<double>(Clock::now() - start).count());
}

void Communicator::require_same(uint64_t digest, std::string_view what) {
  std::vector<uint64_t> all(static_cast<size_t>(size()));
  allgather(&digest, sizeof digest, all.data());
  for (size_t r = 1; r < all.size(); ++r) {
    if (all[r] != all[0]) {
      user_error("{} of rank {} differs from rank 0's: every rank must read the same files", what,
                 r);
    }
  }
}

// ---- ranks as threads ---------------------------------------------------------------

struct ThreadGroup::Shared {
  int ranks;
  std::chrono::milliseconds timeout;
  std::mutex mutex;
  std::condition_variable arrived;
  // mail[(channel * ranks + to) * ranks + from]: the messages sent and not yet received,
  // in order.
  std::vector<std::deque<std::vector<uint8_t>>> mail;
};

namespace {

class ThreadTransport final : public Transport {
 public:
  ThreadTransport(std::shared_ptr<ThreadGroup::Shared> shared, int rank)
      : shared_(std::move(shared)), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return shared_->ranks; }
  void sendrecv(const void* send, int64_t send_bytes, int to, void* recv, int64_t recv_bytes,
                int from, int channel) override;

 private:
  std::shared_ptr<ThreadGroup::Shared> shared_;
  int rank_;
};

void ThreadTransport::sendrecv(const void* send, int64_t send_bytes, int to, void* recv,
                               int64_t recv_bytes, int from, int channel) {
  ThreadGroup::Shared& s = *shared_;
  const auto* bytes = static_cast<const uint8_t*>(send);
  std::unique_lock lock(s.mutex);
  const int base = channel * s.ranks;
  s.mail[static_cast<size_t>((base + to) * s.ranks + rank_)].emplace_back(bytes,
                                                                          bytes + send_bytes);
  s.arrived.notify_all();
  auto& box = s.mail[static_cast<size_t>((base + rank_) * s.ranks + from)];
  if (!s.arrived.wait_for(lock, s.timeout, [&] { return !box.empty(); })) {
    user_error("rank {} has sent nothing for {} ms: it has stopped or hangs", from,
               s.timeout.count());
  }
  std::vector<uint8_t> message = std::move(box.front());
  box.pop_front();
  if (static_cast<int64_t>(message.size()) != recv_bytes) {
    internal_error("rank {} sent {} bytes where rank {} expected {}", from, message.size(), rank_,
                   recv_bytes);
  }
  if (!message.empty()) std::memcpy(recv, message.data(), message.size());
}

}  // namespace

ThreadGroup::ThreadGroup(int ranks, std::chrono::milliseconds timeout)
    : shared_(std::make_shared<Shared>()) {
  shared_->ranks = ranks;
  shared_->timeout = timeout;
  shared_->mail.resize(static_cast<size_t>(2 * ranks * ranks));
  for (int r = 0; r < ranks; ++r) {
    comms_.push_back(std::make_unique<Communicator>(std::make_unique<ThreadTransport>(shared_, r)));
  }
}

ThreadGroup::~ThreadGroup() = default;

}  // namespace ytape
