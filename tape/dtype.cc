#include "tape/dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <charconv>
#include <cstring>
#include <limits>

#include "tape/float16.h"

namespace ytape {

namespace {
constexpr std::string_view kNames[kNumDTypes] = {"f32", "f64", "i64", "bool", "f16"};
constexpr int kSizes[kNumDTypes] = {4, 8, 8, 1, 2};
}  // namespace

std::string_view dtype_name(DType t) {
  return kNames[static_cast<int>(t)];
}

bool parse_dtype(std::string_view name, DType* out) {
  for (int i = 0; i < kNumDTypes; ++i) {
    if (kNames[i] == name) {
      *out = static_cast<DType>(i);
      return true;
    }
  }
  return false;
}

int dtype_size(DType t) {
  return kSizes[static_cast<int>(t)];
}

std::array<uint8_t, 8> scalar_bytes(int64_t value) {
  std::array<uint8_t, 8> bytes{};
  std::memcpy(bytes.data(), &value, 8);
  return bytes;
}

std::array<uint8_t, 8> scalar_bytes(DType dtype, double value) {
  std::array<uint8_t, 8> bytes{};
  switch (dtype) {
    case DType::f32: {
      float f = static_cast<float>(value);
      std::memcpy(bytes.data(), &f, 4);
      break;
    }
    case DType::f64:
      std::memcpy(bytes.data(), &value, 8);
      break;
    case DType::i64: {
      constexpr double lo = -0x1p63, hi = 0x1p63;
      int64_t i = value != value ? 0
                  : value <= lo  ? std::numeric_limits<int64_t>::min()
                  : value >= hi  ? std::numeric_limits<int64_t>::max()
                                 : static_cast<int64_t>(value);
      return scalar_bytes(i);
    }
    case DType::boolean:
      bytes[0] = value != 0;
      break;
    case DType::f16: {
      uint16_t h = f16_from_double(value);
      std::memcpy(bytes.data(), &h, 2);
      break;
    }
  }
  return bytes;
}

int64_t num_elements(const Shape& shape) {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

bool moves_only_ones(const std::vector<int64_t>& perm, const Shape& shape) {
  int64_t last = 0;
  for (int64_t d : perm) {
    if (shape[d - 1] == 1) continue;
    if (d < last) return false;
    last = d;
  }
  return true;
}

std::string shape_problem(const Shape& shape) {
  // The product of the nonzero dims, whatever their order: an empty tensor's shape may not
  // hide a huge one behind its zero, which a permutation would bring to the front, where
  // every prefix product (a count, a stride) would overflow.
  int64_t n = 1;
  for (int64_t d : shape) {
    if (d < 0) return fmt::format("dimension {} is negative", d);
    if (d > kMaxElements) return fmt::format("dimension {} is too large", d);
    if (d != 0 && d > kMaxElements / n) {
      bool empty = std::count(shape.begin(), shape.end(), 0) > 0;
      return fmt::format(
          "shape {}{}", shape_str(shape),
          empty ? ": its nonzero dims multiply to more than 2^48" : " has more than 2^48 elements");
    }
    if (d != 0) n *= d;
  }
  return {};
}

std::string shape_str(const Shape& shape) {
  return fmt::format("[{}]", fmt::join(shape, ","));
}

std::string type_str(const Type& t) {
  return fmt::format("{}{}", dtype_name(t.dtype), shape_str(t.shape));
}

bool parse_type(std::string_view text, Type* out, std::string* why) {
  size_t open = text.find('[');
  if (open == std::string_view::npos || text.back() != ']') {
    *why = fmt::format("'{}' is not a type such as f32[3,4]", text);
    return false;
  }
  if (!parse_dtype(text.substr(0, open), &out->dtype)) {
    *why = fmt::format("unknown dtype '{}' (expected f32, f64, f16, i64 or bool)",
                       text.substr(0, open));
    return false;
  }
  out->shape.clear();
  std::string_view dims = text.substr(open + 1, text.size() - open - 2);
  while (!dims.empty()) {
    size_t comma = dims.find(',');
    std::string_view d = dims.substr(0, comma);
    int64_t v = 0;
    auto [end, ec] = std::from_chars(d.data(), d.data() + d.size(), v);
    if (ec != std::errc() || end != d.data() + d.size()) {
      *why = fmt::format("bad dimension '{}' in type '{}'", d, text);
      return false;
    }
    out->shape.push_back(v);
    if (comma == std::string_view::npos) break;
    dims.remove_prefix(comma + 1);
    if (dims.empty()) {
      *why = fmt::format("trailing comma in type '{}'", text);
      return false;
    }
  }
  std::string problem = shape_problem(out->shape);
  if (!problem.empty()) {
    *why = fmt::format("bad type '{}': {}", text, problem);
    return false;
  }
  return true;
}

}  // namespace ytape
