#include "tape/allocator.h"

#include <cstdlib>  // defines __GLIBC__ where it applies
#include <limits>

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

}  // namespace ytape
