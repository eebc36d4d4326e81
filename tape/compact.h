// Containers of one pointer for the fields of Op that most ops leave empty: an input's
// name, a constant's bytes, a region op's tapes, attributes. A tape of 10^7 ops holds 10^7
// of each, so their empty size is what counts (docs/benchmarks.md, "Scaling of the tape
// stages").
#pragma once

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <initializer_list>
#include <memory>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <utility>
#include <vector>

namespace ytape {

/// A vector that is one null pointer while empty; its elements live in a std::vector on
/// the heap. Copies copy the elements.
template <typename T>
class RareVector {
 public:
  RareVector() = default;
  RareVector(std::vector<T> v)  // NOLINT(google-explicit-constructor): a vector converts
      : p_(v.empty() ? nullptr : std::make_unique<std::vector<T>>(std::move(v))) {}
  RareVector(std::initializer_list<T> items) : RareVector(std::vector<T>(items)) {}
  RareVector(const RareVector& o) : p_(o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr) {}
  RareVector(RareVector&&) noexcept = default;
  RareVector& operator=(const RareVector& o) {
    if (this != &o) p_ = o.p_ ? std::make_unique<std::vector<T>>(*o.p_) : nullptr;
    return *this;
  }
  RareVector& operator=(RareVector&&) noexcept = default;
  ~RareVector() = default;

  size_t size() const { return p_ ? p_->size() : 0; }
  bool empty() const { return size() == 0; }
  T* data() { return p_ ? p_->data() : nullptr; }
  const T* data() const { return p_ ? p_->data() : nullptr; }
  T* begin() { return data(); }
  T* end() { return data() + size(); }
  const T* begin() const { return data(); }
  const T* end() const { return data() + size(); }
  T& operator[](size_t i) { return (*p_)[i]; }
  const T& operator[](size_t i) const { return (*p_)[i]; }
  const T& at(size_t i) const {
    if (i >= size()) throw std::out_of_range("RareVector::at");
    return (*p_)[i];
  }
  T& front() { return p_->front(); }
  const T& front() const { return p_->front(); }
  T& back() { return p_->back(); }
  const T& back() const { return p_->back(); }

  void push_back(T v) { vec().push_back(std::move(v)); }
  template <typename... Args>
  T& emplace_back(Args&&... args) {
    return vec().emplace_back(std::forward<Args>(args)...);
  }
  void clear() { p_.reset(); }

  operator std::span<const T>() const { return {data(), size()}; }  // NOLINT: a view

  friend bool operator==(const RareVector& a, const RareVector& b) {
    return std::ranges::equal(a, b);
  }

 private:
  std::vector<T>& vec() {
    if (!p_) p_ = std::make_unique<std::vector<T>>();
    return *p_;
  }
  std::unique_ptr<std::vector<T>> p_;
};

/// Bytes, or the characters of a string, in one heap block after their count; one null
/// pointer while empty. Copies copy them. `Char` is uint8_t for a constant's bytes
/// (RareBytes), char for a name (RareString).
template <typename Char>
class RareArray {
 public:
  RareArray() = default;
  RareArray(std::span<const Char> items) { assign(items.data(), items.size()); }  // NOLINT
  RareArray(const std::vector<Char>& v) { assign(v.data(), v.size()); }           // NOLINT
  RareArray(const RareArray& o) { assign(o.data(), o.size()); }
  RareArray(RareArray&& o) noexcept : raw_(std::exchange(o.raw_, 0)) {}
  RareArray& operator=(const RareArray& o) {
    if (this != &o) assign(o.data(), o.size());
    return *this;
  }
  RareArray& operator=(RareArray&& o) noexcept {
    std::swap(raw_, o.raw_);
    return *this;
  }
  ~RareArray() {
    if (!small()) std::free(block());
  }

  size_t size() const { return small() ? (raw_ & 0xff) >> 1 : raw_ != 0 ? block()->size : 0; }
  bool empty() const { return raw_ == 0; }
  Char* data() { return const_cast<Char*>(std::as_const(*this).data()); }
  const Char* data() const {
    if (small()) return reinterpret_cast<const Char*>(&raw_) + kSmallAt;
    return raw_ != 0 ? block()->items : nullptr;
  }
  Char* begin() { return data(); }
  Char* end() { return data() + size(); }
  const Char* begin() const { return data(); }
  const Char* end() const { return data() + size(); }
  Char& operator[](size_t i) { return data()[i]; }
  Char operator[](size_t i) const { return data()[i]; }
  void clear() { assign(nullptr, 0); }
  /// Replaces the contents with `n` items from `items` (which may be null when n is 0).
  void assign(const Char* items, size_t n);

  operator std::span<const Char>() const { return {data(), size()}; }  // NOLINT: a view

  friend bool operator==(const RareArray& a, const RareArray& b) {
    return a.size() == b.size() &&
           (a.size() == 0 || std::memcmp(a.data(), b.data(), a.size()) == 0);
  }

 protected:
  struct Block {
    size_t size;
    Char items[1];  // `size` of them, and a terminating zero
  };
  // Up to kSmall items (a scalar constant of 4 bytes or fewer, a name of 3 characters
  // and its terminating zero) live in raw_ itself, from byte kSmallAt (aligned as a
  // float is): its lowest byte then holds the count times 2 plus 1, which a heap
  // pointer's (16-aligned) never has. A tape of 10^7 ops has millions of such constants.
  static constexpr size_t kSmallAt = 4;
  static constexpr size_t kSmall = std::is_same_v<Char, char> ? 3 : 4;
  static_assert(std::endian::native == std::endian::little, "the tag is the lowest byte");
  bool small() const { return (raw_ & 1) != 0; }
  Block* block() const { return reinterpret_cast<Block*>(raw_); }
  uintptr_t raw_ = 0;  // 0 when empty, a Block's address, or the items in place
};

template <typename Char>
void RareArray<Char>::assign(const Char* items, size_t n) {
  if (n > 0 && n <= kSmall) {
    uintptr_t small = 2 * n + 1;  // the zeros past the items terminate a name
    std::memcpy(reinterpret_cast<char*>(&small) + kSmallAt, items, n * sizeof(Char));
    if (!this->small()) std::free(block());
    raw_ = small;
    return;
  }
  Block* fresh = nullptr;
  if (n > 0) {
    fresh = static_cast<Block*>(std::malloc(offsetof(Block, items) + n + 1));
    if (fresh == nullptr) throw std::bad_alloc();
    fresh->size = n;
    std::memcpy(fresh->items, items, n);
    fresh->items[n] = Char{};
  }
  if (!small()) std::free(block());
  raw_ = reinterpret_cast<uintptr_t>(fresh);
}

/// A constant's bytes (Op::value).
using RareBytes = RareArray<uint8_t>;

/// A name most ops do not have (Op::name): a string of one pointer. Converts to a
/// string_view; compares with strings.
class RareString : public RareArray<char> {
 public:
  RareString() = default;
  RareString(std::string_view s) { assign(s.data(), s.size()); }  // NOLINT: a string converts
  RareString(const std::string& s) : RareString(std::string_view(s)) {}  // NOLINT
  RareString(const char* s) : RareString(std::string_view(s)) {}         // NOLINT
  RareString& operator=(std::string_view s) {
    assign(s.data(), s.size());
    return *this;
  }
  RareString& operator=(const std::string& s) { return *this = std::string_view(s); }
  RareString& operator=(const char* s) { return *this = std::string_view(s); }

  std::string_view view() const { return {data(), size()}; }
  operator std::string_view() const { return view(); }          // NOLINT: a view
  operator std::string() const { return std::string(view()); }  // NOLINT: a copy

  friend bool operator==(const RareString& a, const RareString& b) { return a.view() == b.view(); }
  friend bool operator==(const RareString& a, std::string_view b) { return a.view() == b; }
  friend bool operator==(const RareString& a, const std::string& b) { return a.view() == b; }
  friend bool operator==(const RareString& a, const char* b) { return a.view() == b; }
  friend auto operator<=>(const RareString& a, const RareString& b) {
    return a.view() <=> b.view();
  }
};

}  // namespace ytape

/// Formats a RareString as its text.
template <>
struct fmt::formatter<ytape::RareString> : fmt::formatter<std::string_view> {
  template <typename Context>
  auto format(const ytape::RareString& s, Context& ctx) const {
    return fmt::formatter<std::string_view>::format(s.view(), ctx);
  }
};
