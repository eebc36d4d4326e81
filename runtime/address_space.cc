#include "runtime/address_space.h"

#include <sys/resource.h>
#include <unistd.h>

#include <fstream>

#include "tape/error.h"

namespace ytape {

uint64_t mapped_bytes() {
  std::ifstream statm("/proc/self/statm");
  uint64_t pages = 0;
  statm >> pages;
  return pages * static_cast<uint64_t>(::sysconf(_SC_PAGESIZE));
}

void require_address_space(uint64_t bytes, std::string_view what) {
  rlimit limit{};
  if (::getrlimit(RLIMIT_AS, &limit) != 0 || limit.rlim_cur == RLIM_INFINITY) return;
  uint64_t needed = mapped_bytes() + bytes;
  if (needed > limit.rlim_cur) {
    user_error(
        "out of memory: the limit of ulimit -v {} kB leaves too little for {} ({} kB are "
        "needed); raise the limit",
        limit.rlim_cur >> 10, what, needed >> 10);
  }
}

}  // namespace ytape
