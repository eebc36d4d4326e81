// Vars, and the short lists of them that ops read and write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

namespace ytape {

/// A value on a tape: an index into Tape::types. Printed 1-based, as %1, %2, ...
struct Var {
  uint32_t id = 0;
  friend bool operator==(Var, Var) = default;
};

/// The arguments or outputs of an op: a vector of vars that keeps up to three of them in
/// place, in 16 bytes. Nearly every op has at most three of each, so building a tape
/// allocates nothing per op for them (a tape of 10^7 ops holds 2 * 10^7 of these: their
/// size is a fifth of an op's). Longer lists (concat, batch norm) use the heap.
class VarList {
 public:
  VarList() : inline_{} {}
  VarList(std::initializer_list<Var> vars) : VarList(vars.begin(), vars.size()) {}
  VarList(const std::vector<Var>& vars) : VarList(vars.data(), vars.size()) {}  // NOLINT
  VarList(const VarList& o) : VarList(o.data(), o.size()) {}
  VarList(VarList&& o) noexcept;
  VarList& operator=(const VarList& o);
  VarList& operator=(VarList&& o) noexcept;
  ~VarList() { release(); }

  std::size_t size() const { return bits_ & ~kOnHeap; }
  bool empty() const { return size() == 0; }
  Var* data() { return on_heap() ? heap() : inline_; }
  const Var* data() const { return on_heap() ? heap() : inline_; }
  Var* begin() { return data(); }
  Var* end() { return data() + size(); }
  const Var* begin() const { return data(); }
  const Var* end() const { return data() + size(); }
  Var& operator[](std::size_t i) { return data()[i]; }
  Var operator[](std::size_t i) const { return data()[i]; }
  Var front() const { return data()[0]; }
  Var back() const { return data()[size() - 1]; }

  void push_back(Var v) {
    if (size() == capacity()) grow(2 * size());
    data()[size()] = v;
    ++bits_;
  }
  void clear() { bits_ &= kOnHeap; }
  void reserve(std::size_t n) {
    if (n > capacity()) grow(n);
  }
  /// New elements are %0 (id 0).
  void resize(std::size_t n);
  std::vector<Var> vector() const { return {begin(), end()}; }

  friend bool operator==(const VarList& a, const VarList& b);

 private:
  static constexpr uint32_t kInline = 3;
  static constexpr uint32_t kOnHeap = uint32_t{1} << 31;
  VarList(const Var* vars, std::size_t n);
  bool on_heap() const { return (bits_ & kOnHeap) != 0; }
  std::size_t capacity() const { return on_heap() ? inline_[2].id : kInline; }
  Var* heap() const {
    Var* p;
    std::memcpy(&p, inline_, sizeof p);
    return p;
  }
  void grow(std::size_t capacity);
  void release();

  uint32_t bits_ = 0;  // the size, with kOnHeap while the vars live on the heap
  // In place: the vars. On the heap: the pointer to them (in the first two) and the
  // capacity (the id of the third); copied as bytes, the pointer needs no alignment.
  Var inline_[kInline];
};
static_assert(sizeof(VarList) == 16);

}  // namespace ytape
