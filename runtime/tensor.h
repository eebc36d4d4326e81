// Tensors: typed, column-major, contiguous buffers with the shapes of the tape.
#pragma once

#include <cstdint>
#include <memory>
#include <span>
#include <string>
#include <utility>
#include <vector>

#include "tape/dtype.h"
#include "tape/error.h"

namespace ytape {

/// A dense column-major tensor. Copies share the buffer (like a handle); `clone` copies
/// the data. The buffer is 64-byte aligned.
class Tensor {
 public:
  Tensor() = default;
  /// Allocates a tensor of `type`; the elements are zero.
  explicit Tensor(Type type);
  /// Allocates a tensor of `type` without clearing it: for outputs a kernel fills.
  static Tensor uninitialized(Type type);
  /// A tensor of `type` holding a copy of `bytes`, its elements in native layout as a
  /// constant op keeps them (Op::value); their count must match the type.
  static Tensor of_bytes(Type type, std::span<const uint8_t> bytes);
  /// A tensor of `type` over a caller-owned buffer that must outlive every use.
  static Tensor view(Type type, void* data);

  const Type& type() const { return type_; }
  DType dtype() const { return type_.dtype; }
  const Shape& shape() const { return type_.shape; }
  int rank() const { return type_.rank(); }
  int64_t size() const { return size_; }
  int64_t bytes() const { return size_ * dtype_size(type_.dtype); }
  /// Size of dim `d` (1-based), 1 past the rank.
  int64_t dim(int d) const { return d <= rank() ? type_.shape[d - 1] : 1; }

  void* raw() { return data_; }
  const void* raw() const { return data_; }
  /// Typed access; T must match the dtype (float, double, int64_t, bool, and uint16_t for
  /// the bits of f16: tape/float16.h converts them).
  template <typename T>
  T* data() {
    check<T>();
    return static_cast<T*>(data_);
  }
  template <typename T>
  const T* data() const {
    check<T>();
    return static_cast<const T*>(data_);
  }
  template <typename T>
  std::span<T> span() {
    return {data<T>(), static_cast<size_t>(size_)};
  }
  template <typename T>
  std::span<const T> span() const {
    return {data<T>(), static_cast<size_t>(size_)};
  }

  /// Whether this handle is the only one to its buffer (false for views): the buffer can
  /// be written without anyone else seeing it.
  bool sole_owner() const { return owner_ != nullptr && owner_.use_count() == 1; }

  /// A deep copy.
  Tensor clone() const;
  /// The same buffer seen with another type of the same byte size.
  Tensor reinterpret(Type type) const;

 private:
  template <typename T>
  void check() const;

  Type type_;
  int64_t size_ = 0;
  std::shared_ptr<void> owner_;
  void* data_ = nullptr;
};

/// Named tensors, in order: inputs, outputs, the contents of a tensor file.
using TensorMap = std::vector<std::pair<std::string, Tensor>>;

/// Element `i` (0-based, column-major) of `t` as a double; a Bool is 0 or 1.
double element_value(const Tensor& t, int64_t i);

/// Whether `a` and `b` have the same type and bytes: equal to the bit, NaNs and -0 too.
bool same_bits(const Tensor& a, const Tensor& b);
/// Whether the lists are as long and each pair has the same bits.
bool same_bits(std::span<const Tensor> a, std::span<const Tensor> b);
/// same_bits, except that a float -0.0 and +0.0 count as the same: what `opt` keeps
/// (opt/simplify.h: x + 0 gives x, so -0.0 where a run gives +0.0).
bool same_values(std::span<const Tensor> a, std::span<const Tensor> b);

/// A 64-byte aligned buffer of at least `bytes` bytes (not cleared). Throws UserError when
/// memory runs out.
std::shared_ptr<void> allocate_buffer(int64_t bytes);
/// Caps the bytes of all tensor buffers alive at once (allocate_buffer); an allocation
/// beyond it is a UserError, as when memory runs out. None by default; the fuzz targets
/// set one, so that a fuzzed program asking for huge tensors ends in an error.
void set_tensor_memory_limit(int64_t bytes);
/// Keeps the buffers of freed tensors, up to `bytes` of them at once (256 MiB unless
/// given: what the tape commands keep), for new tensors of the same size to reuse (0, the
/// setting until this is called: each goes back to the heap, and those kept are freed).
/// For a process that makes many large tensors of few sizes one after another, as the
/// tracer's example values are (a draw, then arithmetic on it, for each weight): the heap
/// splits a freed block for small allocations, and the next tensor of its size then takes
/// fresh memory, which the kernel faults in page by page (ResNet-18's 47 MB of weights
/// took 130 MB so). Buffers under 64 KiB are never kept. Kept buffers do not count
/// against set_tensor_memory_limit, and go back to the heap when it runs out.
void keep_freed_buffers(int64_t bytes = int64_t{256} << 20);

/// The dtype that stores C++ type T.
template <typename T>
constexpr DType dtype_of();
template <>
constexpr DType dtype_of<float>() {
  return DType::f32;
}
template <>
constexpr DType dtype_of<double>() {
  return DType::f64;
}
template <>
constexpr DType dtype_of<int64_t>() {
  return DType::i64;
}
template <>
constexpr DType dtype_of<bool>() {
  return DType::boolean;
}
template <>
constexpr DType dtype_of<uint16_t>() {
  return DType::f16;
}

template <typename T>
void Tensor::check() const {
  if (dtype_of<std::remove_const_t<T>>() != type_.dtype) {
    internal_error("tensor of {} read as {}", type_str(type_),
                   dtype_name(dtype_of<std::remove_const_t<T>>()));
  }
}

}  // namespace ytape
