#include "tape/allocator.h"

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdlib>  // defines __GLIBC__ where it applies
#include <limits>
#include <system_error>

#if defined(__linux__)
#include <sys/mman.h>
#include <unistd.h>
#endif

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ytape {

void keep_freed_memory() {
#if defined(__GLIBC__)
  // Blocks up to 2 GB (the most mallopt takes) come from the heap instead of their own
  // mappings, and up to 2 GB of free memory at the top of the heap stays there: the ops of
  // a 10^7-op tape take 1.8 GB, and each pass's new tape reuses what the last one freed
  // instead of faulting fresh pages in. Either call failing only means the default
  // behaviour, so the results are not checked.
  constexpr int kLimit = std::numeric_limits<int>::max();
  mallopt(M_MMAP_THRESHOLD, kLimit);
  mallopt(M_TRIM_THRESHOLD, kLimit);
#endif
}

// A thread that cannot start (a process limit, `ulimit -v` short of its stack) only means
// the pages are faulted in where they are written, as without a warmer.
PageWarmer::PageWarmer() {
  try {
    thread_ = std::thread([this] { run(); });
  } catch (const std::system_error&) {
  }
}

PageWarmer::~PageWarmer() {
  stop_.store(true, std::memory_order_relaxed);
  if (thread_.joinable()) thread_.join();
}

// Polls the buffers: a writer fills a few MB in a millisecond or more, so a poll every
// 200 us keeps kAhead in front of it. What a buffer's fields say may be a moment stale
// or torn across a reallocation; populating a page that is not the buffer's any more
// costs a little memory, never a byte of anyone's data.
void PageWarmer::run() {
#if defined(__linux__)
  constexpr int kPopulateWrite = 23;  // MADV_POPULATE_WRITE, absent from older headers
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  const char* base[kBuffers] = {};
  size_t warmed[kBuffers] = {};  // bytes of the buffer from base[i] faulted in or written
  while (!stop_.load(std::memory_order_relaxed)) {
    bool idle = true;
    for (int i = 0; i < kBuffers; ++i) {
      const char* data = buffers_[i].data.load(std::memory_order_relaxed);
      size_t used = buffers_[i].used.load(std::memory_order_relaxed);
      size_t capacity = buffers_[i].capacity.load(std::memory_order_relaxed);
      if (data != base[i]) {
        base[i] = data;
        warmed[i] = 0;
      }
      if (data == nullptr) continue;
      const uintptr_t at = reinterpret_cast<uintptr_t>(data);
      auto down = [&](uintptr_t a) { return a / page * page; };
      uintptr_t from = down(at + std::max(warmed[i], used) + page - 1);
      uintptr_t to = down(at + std::min(capacity, used + kAhead));
      // In steps of a quarter of kAhead, and the rest at the buffer's end.
      if (to <= from || (to < from + kAhead / 4 && to < down(at + capacity))) continue;
      if (madvise(reinterpret_cast<void*>(from), to - from, kPopulateWrite) != 0 &&
          errno == EINVAL) {
        return;  // the kernel has no MADV_POPULATE_WRITE
      }
      warmed[i] = to - at;
      idle = false;
    }
    if (idle) std::this_thread::sleep_for(std::chrono::microseconds(200));
  }
#endif
}

}  // namespace ytape
