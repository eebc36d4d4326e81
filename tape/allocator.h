// Process-wide allocator settings for programs that build and drop big tapes.
#pragma once

namespace ytape {

/// Keeps freed memory in the process for reuse. Every pass builds a new tape and drops
/// the old one; by default glibc maps each block over 32 MB afresh and unmaps it when it
/// is freed, so each pass faults and zeroes its memory in again: about half the time of
/// `opt` on a 10^6-op tape. The price is a higher peak when blocks of many sizes come and
/// go, as tensors do, so the CLI calls it for its tape commands, not for `run`. Call once,
/// before any allocation of note. Does nothing where the allocator has no such setting.
void keep_freed_memory();

}  // namespace ytape
