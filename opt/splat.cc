#include "opt/splat.h"

#include <cmath>
#include <cstring>

#include "tape/float16.h"

namespace ytape {

std::optional<double> splat_value(std::span<const uint8_t> bytes, DType dtype) {
  size_t size = dtype_size(dtype);
  if (bytes.size() < size) return std::nullopt;
  for (size_t i = size; i < bytes.size(); i += size) {
    if (std::memcmp(bytes.data(), bytes.data() + i, size) != 0) return std::nullopt;
  }
  switch (dtype) {
    case DType::f32: {
      float f;
      std::memcpy(&f, bytes.data(), 4);
      return std::isnan(f) ? std::nullopt : std::optional<double>(f);
    }
    case DType::f64: {
      double d;
      std::memcpy(&d, bytes.data(), 8);
      return std::isnan(d) ? std::nullopt : std::optional<double>(d);
    }
    case DType::i64: {
      int64_t i;
      std::memcpy(&i, bytes.data(), 8);
      constexpr int64_t kExact = int64_t{1} << 53;
      return i >= -kExact && i <= kExact ? std::optional<double>(static_cast<double>(i))
                                         : std::nullopt;
    }
    case DType::boolean:
      return bytes[0] ? 1.0 : 0.0;
    case DType::f16: {
      uint16_t h;
      std::memcpy(&h, bytes.data(), 2);
      float f = f16_to_f32(h);
      return std::isnan(f) ? std::nullopt : std::optional<double>(f);
    }
  }
  return std::nullopt;
}

}  // namespace ytape
