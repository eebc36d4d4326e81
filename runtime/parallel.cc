#include "runtime/parallel.h"

#include <algorithm>
#include <atomic>
#include <condition_variable>
#include <exception>
#include <mutex>
#include <thread>
#include <vector>

extern "C" void openblas_set_num_threads(int num_threads);

namespace ytape {

namespace {

// A fixed pool of workers that sleep between jobs: starting threads per loop would cost
// tens of microseconds, more than many kernels take.
class Pool {
 public:
  ~Pool() { resize(0); }

  void resize(int workers) {
    {
      std::lock_guard lock(mu_);
      stop_ = true;
    }
    wake_.notify_all();
    for (std::thread& t : threads_) t.join();
    threads_.clear();
    stop_ = false;
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { work(); });
  }

  // Runs chunks [0, chunks) of `body` on the workers and the calling thread.
  void run(int chunks, const std::function<void(int)>& body) {
    std::unique_lock run_lock(run_mu_);  // one parallel loop at a time
    {
      std::lock_guard lock(mu_);
      body_ = &body;
      chunks_ = chunks;
      next_.store(0);
      pending_ = chunks;
      error_ = nullptr;
      ++generation_;
    }
    wake_.notify_all();
    drain();
    std::unique_lock lock(mu_);
    done_.wait(lock, [this] { return pending_ == 0; });
    body_ = nullptr;
    if (error_) std::rethrow_exception(error_);
  }

 private:
  void drain() {
    for (int c = next_.fetch_add(1); c < chunks_; c = next_.fetch_add(1)) {
      try {
        (*body_)(c);
      } catch (...) {
        std::lock_guard lock(mu_);
        if (!error_) error_ = std::current_exception();
      }
      std::lock_guard lock(mu_);
      if (--pending_ == 0) done_.notify_all();
    }
  }

  void work() {
    uint64_t seen = 0;
    for (;;) {
      {
        std::unique_lock lock(mu_);
        wake_.wait(lock, [&] { return stop_ || (generation_ != seen && body_ != nullptr); });
        if (stop_) return;
        seen = generation_;
      }
      drain();
    }
  }

  std::mutex run_mu_;
  std::mutex mu_;
  std::condition_variable wake_, done_;
  std::vector<std::thread> threads_;
  const std::function<void(int)>* body_ = nullptr;
  int chunks_ = 0;
  std::atomic<int> next_{0};
  int pending_ = 0;
  uint64_t generation_ = 0;
  bool stop_ = false;
  std::exception_ptr error_;
};

int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n, 1u, 8u));
}

struct State {
  int threads = 0;
  Pool pool;
};

State& state() {
  static State s;
  if (s.threads == 0) {
    s.threads = default_threads();
    s.pool.resize(s.threads - 1);
    openblas_set_num_threads(s.threads);
  }
  return s;
}

}  // namespace

void set_num_threads(int n) {
  State& s = state();
  n = std::max(n, 1);
  if (n == s.threads) return;
  s.threads = n;
  s.pool.resize(n - 1);
  openblas_set_num_threads(n);
}

int num_threads() { return state().threads; }

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  int threads = num_threads();
  if (threads == 1 || n < std::max<int64_t>(grain, 2)) {
    body(0, n);
    return;
  }
  int chunks = static_cast<int>(std::min<int64_t>(threads, n));
  state().pool.run(chunks, [&](int c) {
    int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
    if (begin < end) body(begin, end);
  });
}

}  // namespace ytape
