// The types of a tape's vars, each distinct type kept once.
#pragma once

#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <unordered_map>
#include <vector>

#include "tape/dtype.h"

namespace ytape {

/// The type of each var of a tape, indexed by Var::id, as a vector of Type reads. A tape
/// of millions of ops has a few distinct types (a scalar chain has one), so each var holds
/// the index of its type among the distinct ones: 4 bytes a var where a Type is 32 (a
/// tape whose every var has a type of its own holds more: a hash node a type). A
/// reference to a type stays valid as long as the table, whatever is pushed after it.
class TypeTable {
 public:
  TypeTable();
  TypeTable(const TypeTable& o);
  TypeTable(TypeTable&& o) noexcept;
  TypeTable& operator=(const TypeTable& o);
  TypeTable& operator=(TypeTable&& o) noexcept;
  ~TypeTable();

  size_t size() const { return ids_.size(); }
  bool empty() const { return ids_.empty(); }
  const Type& operator[](size_t i) const { return *distinct_[ids_[i]]; }
  const Type& back() const { return (*this)[size() - 1]; }

  void push_back(const Type& t) { ids_.push_back(intern(t)); }
  /// Replaces the type of var `i`.
  void set(size_t i, const Type& t) { ids_[i] = intern(t); }
  void reserve(size_t n) { ids_.reserve(n); }
  void clear();
  /// The per-var indices (for the page warmer: what grows with the tape).
  const uint32_t* ids() const { return ids_.data(); }
  size_t capacity() const { return ids_.capacity(); }
  /// Distinct types held.
  size_t distinct() const { return distinct_.size(); }

  class const_iterator {
   public:
    using iterator_category = std::forward_iterator_tag;
    using value_type = Type;
    using difference_type = std::ptrdiff_t;
    using pointer = const Type*;
    using reference = const Type&;
    const_iterator() = default;
    const_iterator(const TypeTable* table, size_t i) : table_(table), i_(i) {}
    const Type& operator*() const { return (*table_)[i_]; }
    const Type* operator->() const { return &(*table_)[i_]; }
    const_iterator& operator++() {
      ++i_;
      return *this;
    }
    const_iterator operator++(int) {
      const_iterator old = *this;
      ++i_;
      return old;
    }
    friend bool operator==(const_iterator a, const_iterator b) { return a.i_ == b.i_; }

   private:
    const TypeTable* table_ = nullptr;
    size_t i_ = 0;
  };
  const_iterator begin() const { return {this, 0}; }
  const_iterator end() const { return {this, size()}; }

  /// Equal when every var has an equal type, however the distinct types are numbered.
  friend bool operator==(const TypeTable& a, const TypeTable& b);

 private:
  struct Hash {
    size_t operator()(const Type& t) const;
  };
  uint32_t intern(const Type& t);

  std::vector<uint32_t> ids_;  // per var: its type's index in distinct_
  // The distinct types are the index's keys (whose nodes never move), numbered in
  // distinct_ in the order they came.
  std::unordered_map<Type, uint32_t, Hash> index_;
  std::vector<const Type*> distinct_;
  uint32_t last_ = 0;  // the last type interned: runs of one type skip the hash
};

}  // namespace ytape
