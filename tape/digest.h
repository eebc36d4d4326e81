// Digests: short, stable fingerprints of bytes and of what a tape computes.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "tape/tape.h"

namespace ytape {

/// The offset basis of 64-bit FNV-1a.
inline constexpr uint64_t kFnv1aBasis = 14695981039346656037ull;

/// 64-bit FNV-1a of `bytes`, continuing from `h`: the same on every platform and run. Not
/// a cryptographic hash: it tells files apart, it does not authenticate them.
uint64_t fnv1a(std::string_view bytes, uint64_t h = kFnv1aBasis);

/// 16 hex digits that identify what `t` computes: its inputs (names and types), its ops
/// (kind, primitive, arguments, attributes, result types, every byte of each constant)
/// and its outputs (names and vars), in order. The tape's name, metadata and source
/// locations are left out, so that tracing the same code again, from a file whose lines
/// moved, gives the same digest. Training checkpoints carry the digest of their step tape.
std::string tape_digest(const Tape& t);

}  // namespace ytape
