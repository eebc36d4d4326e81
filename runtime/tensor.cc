#include "runtime/tensor.h"

#include <algorithm>
#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "tape/float16.h"

namespace ytape {

namespace {

std::atomic<int64_t> live_bytes{0};
std::atomic<int64_t> memory_limit{INT64_MAX};

// Freed buffers kept for reuse (keep_freed_buffers), by their padded size. Never
// destroyed: a tensor freed during static destruction may still return its buffer here.
struct FreedBuffers {
  std::mutex mutex;
  std::unordered_map<size_t, std::vector<void*>> by_size;
  int64_t kept = 0;   // bytes in by_size
  int64_t limit = 0;  // most bytes kept; 0: none
};

FreedBuffers& freed_buffers() {
  static auto* freed = new FreedBuffers;
  return *freed;
}

// Buffers this small come and go with no faults: the heap reuses them well.
constexpr size_t kSmallestKept = size_t{64} << 10;

void* reuse_buffer(size_t size) {
  if (size < kSmallestKept) return nullptr;
  FreedBuffers& f = freed_buffers();
  std::lock_guard<std::mutex> lock(f.mutex);
  auto it = f.by_size.find(size);
  if (it == f.by_size.end() || it->second.empty()) return nullptr;
  void* p = it->second.back();
  it->second.pop_back();
  f.kept -= static_cast<int64_t>(size);
  return p;
}

void release_buffer(void* p, size_t size) {
  if (size >= kSmallestKept) {
    FreedBuffers& f = freed_buffers();
    std::lock_guard<std::mutex> lock(f.mutex);
    if (f.kept + static_cast<int64_t>(size) <= f.limit) {
      f.by_size[size].push_back(p);
      f.kept += static_cast<int64_t>(size);
      return;
    }
  }
  std::free(p);
}

// Frees the kept buffers beyond `limit` bytes.
void trim_kept(FreedBuffers& f, int64_t limit) {
  for (auto& [size, buffers] : f.by_size) {
    while (f.kept > limit && !buffers.empty()) {
      std::free(buffers.back());
      buffers.pop_back();
      f.kept -= static_cast<int64_t>(size);
    }
  }
}

// A new buffer from the heap; when the heap has none, the kept ones, which may be of
// other sizes, are given back to it first.
void* fresh_buffer(size_t size) {
  if (void* p = std::aligned_alloc(64, size)) return p;
  FreedBuffers& f = freed_buffers();
  {
    std::lock_guard<std::mutex> lock(f.mutex);
    if (f.kept == 0) return nullptr;
    trim_kept(f, 0);
  }
  return std::aligned_alloc(64, size);
}

}  // namespace

double element_value(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32:
      return t.data<float>()[i];
    case DType::f64:
      return t.data<double>()[i];
    case DType::i64:
      return static_cast<double>(t.data<int64_t>()[i]);
    case DType::boolean:
      return t.data<bool>()[i] ? 1 : 0;
    case DType::f16:
      return f16_to_f32(t.data<uint16_t>()[i]);
  }
  return 0;
}

bool same_bits(const Tensor& a, const Tensor& b) {
  return a.type() == b.type() && std::memcmp(a.raw(), b.raw(), static_cast<size_t>(a.bytes())) == 0;
}

bool same_bits(std::span<const Tensor> a, std::span<const Tensor> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                    [](const Tensor& x, const Tensor& y) { return same_bits(x, y); });
}

namespace {

template <class T>
bool is_zero(T x) {
  return x == 0;
}
// f16 is held as its bits: zero is either sign with nothing else set.
template <>
bool is_zero(uint16_t bits) {
  return (bits & 0x7fff) == 0;
}

template <class T>
bool same_up_to_zero_sign(const Tensor& a, const Tensor& b) {
  for (int64_t i = 0; i < a.size(); ++i) {
    T x = a.data<T>()[i], y = b.data<T>()[i];
    if (std::memcmp(&x, &y, sizeof(T)) != 0 && !(is_zero(x) && is_zero(y))) return false;
  }
  return true;
}

}  // namespace

bool same_values(std::span<const Tensor> a, std::span<const Tensor> b) {
  return std::equal(a.begin(), a.end(), b.begin(), b.end(), [](const Tensor& x, const Tensor& y) {
    if (x.type() != y.type()) return false;
    if (x.dtype() == DType::f32) return same_up_to_zero_sign<float>(x, y);
    if (x.dtype() == DType::f64) return same_up_to_zero_sign<double>(x, y);
    if (x.dtype() == DType::f16) return same_up_to_zero_sign<uint16_t>(x, y);
    return same_bits(x, y);
  });
}

void set_tensor_memory_limit(int64_t bytes) {
  memory_limit = bytes;
}

std::shared_ptr<void> allocate_buffer(int64_t bytes) {
  // aligned_alloc needs a size that is a multiple of the alignment; never ask for zero.
  size_t padded = std::max<size_t>((static_cast<size_t>(bytes) + 63) / 64 * 64, 64);
  auto size = static_cast<int64_t>(padded);
  if (live_bytes.fetch_add(size) + size > memory_limit) {
    live_bytes -= size;
    user_error(
        "out of memory allocating {} bytes: tensors may take {} bytes at once (--max-memory)",
        bytes, memory_limit.load());
  }
  void* p = reuse_buffer(padded);
  if (p == nullptr) p = fresh_buffer(padded);
  if (p == nullptr) {
    live_bytes -= size;
    user_error(
        "out of memory allocating {} bytes: more than this machine or its limit "
        "(ulimit -v) allows",
        bytes);
  }
  return std::shared_ptr<void>(p, [size](void* q) {
    live_bytes -= size;
    release_buffer(q, static_cast<size_t>(size));
  });
}

void keep_freed_buffers(int64_t bytes) {
  FreedBuffers& f = freed_buffers();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.limit = bytes;
  trim_kept(f, f.limit);
}

Tensor Tensor::uninitialized(Type type) {
  Tensor t;
  t.type_ = std::move(type);
  t.size_ = t.type_.size();
  t.owner_ = allocate_buffer(t.bytes());
  t.data_ = t.owner_.get();
  return t;
}

Tensor Tensor::of_bytes(Type type, std::span<const uint8_t> bytes) {
  Tensor t = uninitialized(std::move(type));
  if (static_cast<int64_t>(bytes.size()) != t.bytes()) {
    internal_error("{} bytes for a tensor of type {}", bytes.size(), type_str(t.type_));
  }
  if (!bytes.empty()) std::memcpy(t.data_, bytes.data(), bytes.size());
  return t;
}

Tensor::Tensor(Type type) : Tensor(uninitialized(std::move(type))) {
  if (bytes() > 0) std::memset(data_, 0, static_cast<size_t>(bytes()));
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
