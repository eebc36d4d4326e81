#include "tape/allocator.h"

#include <doctest/doctest.h>
#include <sys/mman.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "tape/builder.h"
#include "tape/print.h"

using namespace ytape;

namespace {

const size_t kPage = static_cast<size_t>(sysconf(_SC_PAGESIZE));

// Whether the page at `p` (page-aligned) is in memory.
bool resident(const char* p) {
  unsigned char in = 0;
  REQUIRE(mincore(const_cast<char*>(p), kPage, &in) == 0);
  return in & 1;
}

// Whether this kernel populates pages on request (Linux 5.14 and later).
bool kernel_populates() {
  void* p = mmap(nullptr, kPage, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  REQUIRE(p != MAP_FAILED);
  bool ok = madvise(p, kPage, 23 /* MADV_POPULATE_WRITE */) == 0;
  munmap(p, kPage);
  return ok;
}

}  // namespace

TEST_CASE("PageWarmer faults pages in ahead of the writer, no further, and changes no byte") {
  const size_t size = 8 * PageWarmer::kAhead;
  char* buffer = static_cast<char*>(
      mmap(nullptr, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0));
  REQUIRE(buffer != MAP_FAILED);
  const size_t written = 2 * PageWarmer::kAhead;
  for (size_t i = 0; i < written; ++i) buffer[i] = static_cast<char>(i * 7 + 1);
  {
    PageWarmer warmer;
    warmer.update(1, buffer, written, size);
    // The last page it should fault in; waited for, not timed: the limit only ends a test
    // that has failed.
    const char* last = buffer + written + PageWarmer::kAhead - kPage;
    auto give_up = std::chrono::steady_clock::now() + std::chrono::seconds(20);
    while (kernel_populates() && !resident(last) && std::chrono::steady_clock::now() < give_up) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
    if (kernel_populates()) {
      CHECK(resident(last));
      CHECK(resident(buffer + written));
    }
  }
  // Joined: nothing beyond kAhead was touched, and what was written is as it was.
  CHECK_FALSE(resident(buffer + written + PageWarmer::kAhead + kPage));
  CHECK_FALSE(resident(buffer + size - kPage));
  bool same = true;
  for (size_t i = 0; i < written; ++i) same = same && buffer[i] == static_cast<char>(i * 7 + 1);
  CHECK(same);
  for (size_t i = written; i < size; i += kPage) same = same && buffer[i] == 0;
  CHECK(same);
  munmap(buffer, size);
}

TEST_CASE("a big tape built with its pages warmed is the tape built without") {
  // Over the builder's threshold (32 MB of ops) when reserved, and far below it when not.
  auto build = [](size_t reserve) {
    Builder b("chain");
    b.reserve(reserve, reserve);
    Var x = b.input("x", {DType::f32, {}});
    for (int i = 0; i < 200000; ++i) x = i % 2 ? b.sin(x) : b.mul(x, x);
    b.output(x, "y");
    return b.finish();
  };
  CHECK(print_tape(build(1000000)) == print_tape(build(0)));
}
