#include "tape/var.h"

#include <algorithm>
#include <new>
#include <stdexcept>

namespace ytape {

VarList::VarList(const Var* vars, size_t n) : inline_{} {
  reserve(n);
  std::copy(vars, vars + n, data());
  bits_ |= static_cast<uint32_t>(n);
}

VarList::VarList(VarList&& o) noexcept : bits_(o.bits_) {
  std::copy(o.inline_, o.inline_ + kInline, inline_);  // the vars, or the heap's pointer
  o.bits_ = 0;                                         // o is left empty with its inline room
}

VarList& VarList::operator=(const VarList& o) {
  if (this != &o) {
    clear();
    reserve(o.size());
    std::copy(o.begin(), o.end(), data());
    bits_ = (bits_ & kOnHeap) | static_cast<uint32_t>(o.size());
  }
  return *this;
}

VarList& VarList::operator=(VarList&& o) noexcept {
  if (this != &o) {
    release();
    new (this) VarList(std::move(o));
  }
  return *this;
}

void VarList::resize(size_t n) {
  reserve(n);
  if (n > size()) std::fill(data() + size(), data() + n, Var{});
  bits_ = (bits_ & kOnHeap) | static_cast<uint32_t>(n);
}

void VarList::grow(size_t capacity) {
  capacity = std::max<size_t>(capacity, kInline + 1);
  if (capacity >= kOnHeap) throw std::length_error("VarList: too many vars");
  Var* heap = new Var[capacity];
  size_t n = size();
  std::copy(begin(), end(), heap);
  release();
  std::memcpy(inline_, &heap, sizeof heap);
  inline_[2].id = static_cast<uint32_t>(capacity);
  bits_ = kOnHeap | static_cast<uint32_t>(n);
}

void VarList::release() {
  if (on_heap()) delete[] heap();
  bits_ &= ~kOnHeap;
}

bool operator==(const VarList& a, const VarList& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace ytape
