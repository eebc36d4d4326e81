#include "runtime/tensor.h"

#include <cstdlib>
#include <cstring>

namespace ytape {

Tensor::Tensor(Type type) : type_(std::move(type)), size_(type_.size()) {
  size_t n = static_cast<size_t>(bytes());
  // aligned_alloc needs a size that is a multiple of the alignment.
  size_t padded = (n + 63) / 64 * 64;
  void* p = std::aligned_alloc(64, padded == 0 ? 64 : padded);
  if (p == nullptr) user_error("out of memory allocating {} ({} bytes)", type_str(type_), n);
  std::memset(p, 0, padded == 0 ? 64 : padded);
  owner_ = std::shared_ptr<void>(p, std::free);
  data_ = p;
}

Tensor Tensor::view(Type type, void* data) {
  Tensor t;
  t.type_ = std::move(type);
  t.size_ = t.type_.size();
  t.data_ = data;
  return t;
}

Tensor Tensor::clone() const {
  Tensor t(type_);
  if (bytes() > 0) std::memcpy(t.data_, data_, static_cast<size_t>(bytes()));
  return t;
}

Tensor Tensor::reinterpret(Type type) const {
  if (type.size() * dtype_size(type.dtype) != bytes()) {
    internal_error("cannot see {} as {}", type_str(type_), type_str(type));
  }
  Tensor t = *this;
  t.type_ = std::move(type);
  t.size_ = t.type_.size();
  return t;
}

}  // namespace ytape
