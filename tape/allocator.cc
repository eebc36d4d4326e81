#include "tape/allocator.h"

#include <cstdlib>  // defines __GLIBC__ where it applies

#if defined(__GLIBC__)
#include <malloc.h>
#endif

namespace ytape {

void keep_freed_memory() {
#if defined(__GLIBC__)
  // Blocks up to 1 GB come from the heap instead of their own mappings, and up to 1 GB
  // of free memory at the top of the heap stays there. Either call failing only means
  // the default behaviour, so the results are not checked.
  constexpr int kLimit = 1 << 30;
  mallopt(M_MMAP_THRESHOLD, kLimit);
  mallopt(M_TRIM_THRESHOLD, kLimit);
#endif
}

}  // namespace ytape
