// What `diff_tapes` (inspect/diff.h) compares ops by: hashes of what an op computes, exact
// equality of attributes, and a hash index. Internal to the diff.
#pragma once

#include <algorithm>
#include <cstdint>
#include <span>
#include <string_view>
#include <vector>

#include "tape/tape.h"

namespace ytape::diff_keys {

inline constexpr uint32_t kNone = ~uint32_t{0};

/// Combines `v` into the hash `h` (a splitmix64 finalizer over both).
inline uint64_t mix(uint64_t h, uint64_t v) {
  uint64_t x = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  x ^= x >> 30;
  x *= 0xbf58476d1ce4e5b9ull;
  x ^= x >> 27;
  x *= 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hash_bytes(uint64_t h, const uint8_t* p, size_t n);
uint64_t hash_string(uint64_t h, std::string_view s);
uint64_t hash_attrs(uint64_t h, const Attrs& attrs);

/// Attributes equal bit for bit: NaN equals NaN, -0.0 differs from 0.0.
bool same_attrs(const Attrs& x, const Attrs& y);
/// Regions (Op::regions) that compute the same: the same names and tape digests, their
/// parameters' names not counted (a region's parameters are positional).
bool same_regions(std::span<const Tape> x, std::span<const Tape> y);

/// A call of a commutative primitive on two arguments.
inline bool commutative(const Op& op) {
  return op.kind == OpKind::call && prim_info(op.prim).commutative() && op.args.size() == 2;
}

inline bool effectful(const Op& op) {
  return op.kind == OpKind::call && prim_info(op.prim).effectful();
}

/// The hash of what a call or constant of `t` computes, given the hashes of its arguments'
/// values, `arg(var)`; commutative arguments in either order hash alike.
template <typename F>
uint64_t op_key_hash(const Tape& t, const Op& op, F arg) {
  uint64_t h = mix(static_cast<uint64_t>(op.kind), op.outs.size());
  if (op.kind == OpKind::constant) {
    const Type& type = t.type(op.outs[0]);
    h = mix(h, static_cast<uint64_t>(type.dtype));
    for (int64_t d : type.shape) h = mix(h, static_cast<uint64_t>(d));
    return hash_bytes(h, op.value.data(), op.value.size());
  }
  h = hash_attrs(mix(h, static_cast<uint64_t>(op.prim)), op.attrs);
  if (commutative(op)) {
    uint64_t x = arg(op.args[0]), y = arg(op.args[1]);
    return mix(mix(h, std::min(x, y)), std::max(x, y));
  }
  for (Var v : op.args) h = mix(h, arg(v));
  return h;
}

/// Structural hashes, bottom-up: of each op (op_key_hash; an input hashes its name), and of
/// each var in `vars`. Equal computations hash alike in any tape under any numbering.
std::vector<uint64_t> structural_hashes(const Tape& t, std::vector<uint64_t>* vars);

/// Hash -> op index, open addressing: a node-based map costs an allocation and a cache miss
/// per op, which dominate at 10^6 ops. Keys must be well mixed.
class HashIndex {
 public:
  /// Room for `n` keys.
  explicit HashIndex(size_t n);

  /// The value of `key`, after inserting `value` for it when absent (then `*fresh`).
  uint32_t find_or_insert(uint64_t key, uint32_t value, bool* fresh) {
    Slot& s = slot(key);
    *fresh = s.value == kNone;
    if (*fresh) s = {key, value};
    return s.value;
  }

  /// The value of `key`, or kNone.
  uint32_t find(uint64_t key) const { return const_cast<HashIndex*>(this)->slot(key).value; }

  /// Starts loading the place of `key`: lookups miss the cache, and overlap when prefetched.
  void prefetch(uint64_t key) const { __builtin_prefetch(&slots_[key & mask_]); }

 private:
  struct Slot {
    uint64_t key = 0;
    uint32_t value = kNone;
  };

  Slot& slot(uint64_t key) {
    size_t i = key & mask_;
    while (slots_[i].value != kNone && slots_[i].key != key) i = (i + 1) & mask_;
    return slots_[i];
  }

  std::vector<Slot> slots_;  // key and value side by side: one cache miss per probe
  size_t mask_ = 0;
};

}  // namespace ytape::diff_keys
