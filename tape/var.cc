#include "tape/var.h"

#include <algorithm>
#include <new>

namespace ytape {

VarList::VarList(const Var* vars, size_t n) : inline_{} {
  reserve(n);
  std::copy(vars, vars + n, data());
  size_ = static_cast<uint32_t>(n);
}

VarList::VarList(VarList&& o) noexcept : size_(o.size_), capacity_(o.capacity_), inline_{} {
  if (o.capacity_ > kInline) {
    heap_ = o.heap_;
    o.capacity_ = kInline;  // o is left empty with its inline room
  } else {
    std::copy(o.inline_, o.inline_ + o.size_, inline_);
  }
  o.size_ = 0;
}

VarList& VarList::operator=(const VarList& o) {
  if (this != &o) {
    clear();
    reserve(o.size_);
    std::copy(o.begin(), o.end(), data());
    size_ = o.size_;
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
  if (n > size_) std::fill(data() + size_, data() + n, Var{});
  size_ = static_cast<uint32_t>(n);
}

void VarList::grow(size_t capacity) {
  capacity = std::max<size_t>(capacity, kInline + 1);
  Var* heap = new Var[capacity];
  std::copy(begin(), end(), heap);
  release();
  heap_ = heap;
  capacity_ = static_cast<uint32_t>(capacity);
}

void VarList::release() {
  if (capacity_ > kInline) delete[] heap_;
  capacity_ = kInline;
}

bool operator==(const VarList& a, const VarList& b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end());
}

}  // namespace ytape
