#include "runtime/parallel.h"

#include <omp.h>
#include <sched.h>
#include <sys/resource.h>

#include <algorithm>
#include <chrono>
#include <exception>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>

#include "runtime/address_space.h"

extern "C" void openblas_set_num_threads(int num_threads);
// OpenBLAS's pthreads build only (weak: null in the OpenMP build or another BLAS). Its
// threads start again at its next threaded call (exec_blas), as after a fork.
extern "C" __attribute__((weak)) int blas_thread_shutdown_();

namespace ytape {

namespace {

struct State {
  int threads = 0;
};

State& state() {
  static State s;
  if (s.threads == 0) {
    s.threads = default_num_threads();
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
  openblas_set_num_threads(n);
}

int num_threads() {
  return state().threads;
}

int default_num_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n, 1u, 8u));
}

int usable_cores() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof set, &set) != 0) return std::max(default_num_threads(), 1);
  return std::max(CPU_COUNT(&set), 1);
}

namespace {

// The kernel's count of runnable tasks on the machine (/proc/stat's procs_running), or -1.
int machine_running() {
  std::ifstream stat("/proc/stat");
  std::string word;
  while (stat >> word) {
    if (word == "procs_running") {
      int running = -1;
      stat >> running;
      return running;
    }
  }
  return -1;
}

// This process's threads that are running or runnable: the caller, and pool threads
// (OpenMP's, OpenBLAS's) still spinning after their last loop.
int own_running() {
  int running = 0;
  std::error_code error;
  // Threads come and go while the directory is read: errors end the count, never throw.
  for (std::filesystem::directory_iterator it("/proc/self/task", error), end; !error && it != end;
       it.increment(error)) {
    std::ifstream stat(it->path() / "stat");
    std::string line;
    std::getline(stat, line);
    // "tid (name) S ...": the state follows the name's closing parenthesis.
    size_t close = line.rfind(')');
    if (close != std::string::npos && close + 2 < line.size() && line[close + 2] == 'R') ++running;
  }
  return std::max(running, 1);
}

}  // namespace

int other_running_threads(int samples) {
  int least = -1;
  for (int sample = 0; sample < std::max(samples, 1); ++sample) {
    if (sample > 0) std::this_thread::sleep_for(std::chrono::milliseconds(2));
    int running = machine_running();
    if (running < 0) return 0;
    running -= own_running();
    least = least < 0 ? running : std::min(least, running);
  }
  return std::max(least, 0);
}

int free_cores(int samples) {
  return usable_cores() - other_running_threads(samples);
}

void start_threads() {
  int n = num_threads();
  if (n == 1) return;
  // libgomp ends the process when it cannot make a thread, and OpenBLAS's exit handler
  // then waits forever for its own threads: under a limit on the address space, the
  // threads' stacks are checked first.
  rlimit stack{};
  uint64_t stack_bytes = 8ull << 20;
  if (getrlimit(RLIMIT_STACK, &stack) == 0 && stack.rlim_cur != RLIM_INFINITY) {
    stack_bytes = stack.rlim_cur;
  }
  require_address_space(static_cast<uint64_t>(n - 1) * stack_bytes + (8ull << 20),
                        "the stacks of OpenMP's threads");
  // An empty region would be compiled away; each thread must run something.
  volatile int started = 0;
#pragma omp parallel num_threads(n)
  started = 1;
  (void)started;
}

void park_blas_threads() {
  // Under a limit, a thread that could not allocate its buffer retries for ever, and
  // waiting for it to end would never return.
  rlimit address{}, data{};
  if (getrlimit(RLIMIT_AS, &address) != 0 || address.rlim_cur != RLIM_INFINITY) return;
  if (getrlimit(RLIMIT_DATA, &data) != 0 || data.rlim_cur != RLIM_INFINITY) return;
  state();  // OpenBLAS takes the setting first: taking one starts its threads
  if (blas_thread_shutdown_ != nullptr) blas_thread_shutdown_();
}

void parallel_for(int64_t n, int64_t grain, const std::function<void(int64_t, int64_t)>& body) {
  if (n <= 0) return;
  int threads = num_threads();
  if (threads == 1 || n < std::max<int64_t>(grain, 2)) {
    body(0, n);
    return;
  }
  int chunks = static_cast<int>(std::min<int64_t>(threads, n));
  std::exception_ptr error;
#pragma omp parallel num_threads(chunks)
  {
    int c = omp_get_thread_num(), team = omp_get_num_threads();
    for (; c < chunks; c += team) {
      int64_t begin = n * c / chunks, end = n * (c + 1) / chunks;
      try {
        if (begin < end) body(begin, end);
      } catch (...) {
#pragma omp critical(ytape_parallel_error)
        if (!error) error = std::current_exception();
      }
    }
  }
  if (error) std::rethrow_exception(error);
}

}  // namespace ytape
