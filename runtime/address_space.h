// Room in the address space under a limit (ulimit -v, RLIMIT_AS), checked before the
// libraries that do not survive running out of it: OpenBLAS retries its buffer's allocation
// forever, and oneDNN's code generator crashes when it cannot map the code it writes.
#pragma once

#include <cstdint>
#include <string_view>

namespace ytape {

/// The address space the process holds now, from /proc/self/statm (0 if unknown).
uint64_t mapped_bytes();

/// Throws UserError ("out of memory: the limit of ulimit -v N kB leaves too little for
/// `what`...") when the process could not map `bytes` more under its address-space limit.
/// Does nothing without a limit.
void require_address_space(uint64_t bytes, std::string_view what);

}  // namespace ytape
