// Process-wide allocator settings for programs that build and drop big tapes, and a thread
// that faults in the pages a growing tape is about to write.
#pragma once

#include <atomic>
#include <cstddef>
#include <thread>

namespace ytape {

/// Keeps freed memory in the process for reuse. Every pass builds a new tape and drops
/// the old one; by default glibc maps each block over 32 MB afresh and unmaps it when it
/// is freed, so each pass faults and zeroes its memory in again: about half the time of
/// `opt` on a 10^6-op tape. The price is a higher peak when blocks of many sizes come and
/// go, as tensors do, so the CLI calls it for its tape commands, not for `run`. Call once,
/// before any allocation of note. Does nothing where the allocator has no such setting.
void keep_freed_memory();

/// Faults in the pages of buffers written front to back (a tape's ops and types) on a
/// thread of its own, at most kAhead bytes ahead of the writer. A fresh page's first write
/// costs 1-3 us on the VMs ytape is measured on, 0.3-0.7 ns a byte: about a third of the
/// time of reading a tape, or of a pass, at 10^6 ops and more. With a second core free,
/// that work moves there. Contents are never touched (the kernel's MADV_POPULATE_WRITE,
/// Linux 5.14); where the kernel lacks it, the thread ends and nothing else changes.
class PageWarmer {
 public:
  static constexpr int kBuffers = 2;
  static constexpr size_t kAhead = size_t{4} << 20;
  /// Below this many bytes a buffer is not worth a thread.
  static constexpr size_t kWorthFrom = size_t{32} << 20;

  PageWarmer();
  ~PageWarmer();
  PageWarmer(const PageWarmer&) = delete;
  PageWarmer& operator=(const PageWarmer&) = delete;

  /// Buffer `i` (< kBuffers) spans `capacity` bytes from `data`, of which `used` are written.
  void update(int i, const void* data, size_t used, size_t capacity) noexcept {
    Buffer& b = buffers_[i];
    b.capacity.store(capacity, std::memory_order_relaxed);
    b.used.store(used, std::memory_order_relaxed);
    b.data.store(static_cast<const char*>(data), std::memory_order_relaxed);
  }

 private:
  struct Buffer {
    std::atomic<const char*> data{nullptr};
    std::atomic<size_t> used{0}, capacity{0};
  };
  void run();

  Buffer buffers_[kBuffers];
  std::atomic<bool> stop_{false};
  std::thread thread_;
};

}  // namespace ytape
