// Vars, and the short lists of them that ops read and write.
#pragma once

#include <cstddef>
#include <cstdint>
#include <initializer_list>
#include <vector>

namespace ytape {

/// A value on a tape: an index into Tape::types. Printed 1-based, as %1, %2, ...
struct Var {
  uint32_t id = 0;
  friend bool operator==(Var, Var) = default;
};

/// The arguments or outputs of an op: a vector of vars that keeps up to four of them in
/// place. Nearly every op has at most four of each, so building a tape allocates nothing
/// per op for them; it is the size of a std::vector. Longer lists (concat) use the heap.
class VarList {
 public:
  VarList() : inline_{} {}
  VarList(std::initializer_list<Var> vars) : VarList(vars.begin(), vars.size()) {}
  VarList(const std::vector<Var>& vars) : VarList(vars.data(), vars.size()) {}  // NOLINT
  VarList(const VarList& o) : VarList(o.data(), o.size_) {}
  VarList(VarList&& o) noexcept;
  VarList& operator=(const VarList& o);
  VarList& operator=(VarList&& o) noexcept;
  ~VarList() { release(); }

  std::size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  Var* data() { return capacity_ > kInline ? heap_ : inline_; }
  const Var* data() const { return capacity_ > kInline ? heap_ : inline_; }
  Var* begin() { return data(); }
  Var* end() { return data() + size_; }
  const Var* begin() const { return data(); }
  const Var* end() const { return data() + size_; }
  Var& operator[](std::size_t i) { return data()[i]; }
  Var operator[](std::size_t i) const { return data()[i]; }
  Var front() const { return data()[0]; }
  Var back() const { return data()[size_ - 1]; }

  void push_back(Var v) {
    if (size_ == capacity_) grow(2 * size_);
    data()[size_++] = v;
  }
  void clear() { size_ = 0; }
  void reserve(std::size_t n) {
    if (n > capacity_) grow(n);
  }
  /// New elements are %0 (id 0).
  void resize(std::size_t n);
  std::vector<Var> vector() const { return {begin(), end()}; }

  friend bool operator==(const VarList& a, const VarList& b);

 private:
  static constexpr uint32_t kInline = 4;
  VarList(const Var* vars, std::size_t n);
  void grow(std::size_t capacity);
  void release();

  uint32_t size_ = 0;
  uint32_t capacity_ = kInline;
  union {
    Var inline_[kInline];
    Var* heap_;
  };
};

}  // namespace ytape
