#include "runtime/file_dtype.h"

#include <fmt/format.h>

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <limits>
#include <string>

#include "tape/error.h"
#include "tape/float16.h"
#include "tape/strings.h"

namespace ytape {

namespace {

struct Info {
  FileDType dtype;
  int size;
  std::string_view safetensors, name;
};

constexpr Info kInfo[] = {
    {FileDType::boolean, 1, "BOOL", "bool"}, {FileDType::u8, 1, "U8", "u8"},
    {FileDType::u16, 2, "U16", "u16"},       {FileDType::u32, 4, "U32", "u32"},
    {FileDType::u64, 8, "U64", "u64"},       {FileDType::i8, 1, "I8", "i8"},
    {FileDType::i16, 2, "I16", "i16"},       {FileDType::i32, 4, "I32", "i32"},
    {FileDType::i64, 8, "I64", "i64"},       {FileDType::f16, 2, "F16", "f16"},
    {FileDType::bf16, 2, "BF16", "bf16"},    {FileDType::f32, 4, "F32", "f32"},
    {FileDType::f64, 8, "F64", "f64"}};

const Info& info(FileDType d) {
  return kInfo[static_cast<int>(d)];
}

bool is_signed(FileDType d) {
  return d == FileDType::i8 || d == FileDType::i16 || d == FileDType::i32 || d == FileDType::i64;
}
bool is_unsigned(FileDType d) {
  return d == FileDType::u8 || d == FileDType::u16 || d == FileDType::u32 || d == FileDType::u64;
}

// Little-endian integer of `size` bytes at `p`.
uint64_t load_le(const uint8_t* p, int size) {
  uint64_t v = 0;
  for (int i = size - 1; i >= 0; --i) v = v << 8 | p[i];
  return v;
}
void store_le(uint8_t* p, uint64_t v, int size) {
  for (int i = 0; i < size; ++i) p[i] = static_cast<uint8_t>(v >> (8 * i));
}

// bfloat16 is the high half of an f32.
float bf16_to_f32(uint16_t h) {
  return std::bit_cast<float>(static_cast<uint32_t>(h) << 16);
}
uint16_t bf16_from_f32(float f) {
  auto bits = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return static_cast<uint16_t>(bits >> 16 | 0x40);  // quiet, sign kept
  uint32_t bias = 0x7FFF + (bits >> 16 & 1);                           // ties to even
  return static_cast<uint16_t>((bits + bias) >> 16);
}
// From a double in one rounding: to f32 rounding to odd (toward zero, the last bit set if
// inexact), which keeps enough bits that rounding that to nearest is the double's rounding.
uint16_t bf16_from_double(double x) {
  if (std::isnan(x) || std::isinf(x)) return bf16_from_f32(static_cast<float>(x));
  auto f = static_cast<float>(x);
  if (std::abs(static_cast<double>(f)) > std::abs(x)) f = std::nextafter(f, 0.0f);
  if (static_cast<double>(f) != x) f = std::bit_cast<float>(std::bit_cast<uint32_t>(f) | 1u);
  return bf16_from_f32(f);
}

std::string value_str(double v) {
  return fmt::format("{}", v);
}

}  // namespace

int file_dtype_size(FileDType d) {
  return info(d).size;
}
std::string_view safetensors_name(FileDType d) {
  return info(d).safetensors;
}
std::string_view file_dtype_name(FileDType d) {
  return info(d).name;
}
std::optional<FileDType> parse_safetensors_dtype(std::string_view name) {
  for (const Info& i : kInfo) {
    if (i.safetensors == name) return i.dtype;
  }
  return std::nullopt;
}
std::optional<FileDType> parse_file_dtype(std::string_view name) {
  for (const Info& i : kInfo) {
    if (i.name == name) return i.dtype;
  }
  return std::nullopt;
}

DType widened(FileDType d) {
  switch (d) {
    case FileDType::boolean:
      return DType::boolean;
    case FileDType::f16:
      return DType::f16;
    case FileDType::bf16:
    case FileDType::f32:
      return DType::f32;
    case FileDType::f64:
      return DType::f64;
    default:
      return DType::i64;
  }
}

FileDType file_dtype_of(DType d) {
  switch (d) {
    case DType::boolean:
      return FileDType::boolean;
    case DType::f16:
      return FileDType::f16;
    case DType::f32:
      return FileDType::f32;
    case DType::f64:
      return FileDType::f64;
    case DType::i64:
      return FileDType::i64;
  }
  internal_error("no file dtype for {}", dtype_name(d));
}

Tensor decode_elements(FileDType from, std::span<const uint8_t> bytes, const Shape& shape,
                       std::string_view what) {
  Tensor t = Tensor::uninitialized(Type{widened(from), shape});
  const int size = file_dtype_size(from);
  if (static_cast<int64_t>(bytes.size()) != t.size() * size) {
    internal_error("{}: {} bytes for {} elements of {}", what, bytes.size(), t.size(),
                   safetensors_name(from));
  }
  const uint8_t* p = bytes.data();
  for (int64_t k = 0; k < t.size(); ++k, p += size) {
    uint64_t v = load_le(p, size);
    if (from == FileDType::boolean) {
      if (v > 1) user_error("{}: BOOL element {} is the byte {}, not 0 or 1", what, k, v);
      t.data<bool>()[k] = v == 1;
    } else if (is_unsigned(from)) {
      if (v > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
        user_error("{}: U64 element {} is {}, beyond i64, which ytape's integers are", what, k, v);
      }
      t.data<int64_t>()[k] = static_cast<int64_t>(v);
    } else if (is_signed(from)) {
      int shift = 64 - 8 * size;  // sign-extends
      t.data<int64_t>()[k] = static_cast<int64_t>(v << shift) >> shift;
    } else if (from == FileDType::f16) {
      t.data<uint16_t>()[k] = static_cast<uint16_t>(v);
    } else if (from == FileDType::bf16) {
      t.data<float>()[k] = bf16_to_f32(static_cast<uint16_t>(v));
    } else if (from == FileDType::f32) {
      t.data<float>()[k] = std::bit_cast<float>(static_cast<uint32_t>(v));
    } else {
      t.data<double>()[k] = std::bit_cast<double>(v);
    }
  }
  return t;
}

namespace {

// The integer range of `d`, as doubles (the bounds of u64 and i64 are powers of two,
// exact): lo <= v < hi_exclusive.
std::pair<double, double> int_range(FileDType d) {
  int bits = 8 * file_dtype_size(d);
  if (is_unsigned(d)) return {0.0, std::ldexp(1.0, bits)};
  return {-std::ldexp(1.0, bits - 1), std::ldexp(1.0, bits - 1)};
}

// Element k of `t` as its integer bits for an integer `to`, checked to be whole and in range.
uint64_t integer_bits(const Tensor& t, int64_t k, FileDType to, std::string_view what) {
  auto [lo, hi] = int_range(to);
  if (t.dtype() == DType::i64) {
    int64_t v = t.data<int64_t>()[k];
    bool fits = to == FileDType::i64 ? true
                : to == FileDType::u64
                    ? v >= 0
                    : static_cast<double>(v) >= lo && static_cast<double>(v) < hi;
    if (!fits) {
      user_error("{}: element {} is {}, outside {}'s range", what, k, v, file_dtype_name(to));
    }
    return static_cast<uint64_t>(v);
  }
  if (t.dtype() == DType::boolean) return t.data<bool>()[k] ? 1 : 0;
  double v = element_value(t, k);
  if (!(v >= lo && v < hi) || std::trunc(v) != v) {
    user_error("{}: element {} is {}, which {} does not hold (whole numbers in [{}, {}))", what, k,
               value_str(v), file_dtype_name(to), value_str(lo), value_str(hi));
  }
  if (v >= std::ldexp(1.0, 63)) return static_cast<uint64_t>(v);  // u64's upper half
  return static_cast<uint64_t>(static_cast<int64_t>(v));
}

}  // namespace

std::vector<uint8_t> encode_elements(const Tensor& t, FileDType to, std::string_view what) {
  const int size = file_dtype_size(to);
  std::vector<uint8_t> out(static_cast<size_t>(t.size() * size));
  if (to == file_dtype_of(t.dtype())) {
    if (!out.empty()) std::memcpy(out.data(), t.raw(), out.size());
    return out;
  }
  uint8_t* p = out.data();
  for (int64_t k = 0; k < t.size(); ++k, p += size) {
    uint64_t bits = 0;
    double v = element_value(t, k);  // an i64 rounded to the nearest double, as numpy's astype
    switch (to) {
      case FileDType::boolean:
        if (v != 0 && v != 1) {
          user_error("{}: element {} is {}, not 0 or 1, which BOOL holds", what, k,
                     t.dtype() == DType::i64 ? std::to_string(t.data<int64_t>()[k]) : value_str(v));
        }
        bits = v == 1;
        break;
      case FileDType::f16:
        bits = f16_from_double(v);
        break;
      case FileDType::bf16:
        bits = bf16_from_double(v);
        break;
      case FileDType::f32:
        bits = std::bit_cast<uint32_t>(static_cast<float>(v));
        break;
      case FileDType::f64:
        bits = std::bit_cast<uint64_t>(v);
        break;
      default:
        bits = integer_bits(t, k, to, what);
    }
    store_le(p, bits, size);
  }
  return out;
}

namespace {

// Whether the double `v` converts to `to` and back unchanged (NaN to NaN).
bool holds(DType to, double v) {
  if (std::isnan(v)) return to != DType::i64 && to != DType::boolean;
  switch (to) {
    case DType::f64:
      return true;
    case DType::f32:
      return std::isinf(v) || static_cast<double>(static_cast<float>(v)) == v;
    case DType::f16:
      return static_cast<double>(f16_to_f32(f16_from_double(v))) == v;
    case DType::i64:
      return v >= -std::ldexp(1.0, 63) && v < std::ldexp(1.0, 63) && std::trunc(v) == v;
    case DType::boolean:
      return v == 0 || v == 1;
  }
  return false;
}

}  // namespace

Tensor convert_exact(const Tensor& t, DType dtype, std::string_view what) {
  if (t.dtype() == dtype) return t;
  Tensor out = Tensor::uninitialized(Type{dtype, t.shape()});
  for (int64_t k = 0; k < t.size(); ++k) {
    double v = element_value(t, k);
    bool exact = holds(dtype, v);
    if (t.dtype() == DType::i64) {  // the double may have rounded the integer
      int64_t i = t.data<int64_t>()[k];
      exact = exact && v >= -std::ldexp(1.0, 63) && v < std::ldexp(1.0, 63) &&
              static_cast<int64_t>(v) == i;
    }
    if (!exact) {
      std::string shown =
          t.dtype() == DType::i64 ? std::to_string(t.data<int64_t>()[k]) : value_str(v);
      user_error(
          "{} is {}, and its element {} (0-based, in memory order) is {}, which {} does "
          "not hold exactly: the tape declares {}",
          what, dtype_name(t.dtype()), k, shown, dtype_name(dtype), dtype_name(dtype));
    }
    switch (dtype) {
      case DType::f64:
        out.data<double>()[k] = v;
        break;
      case DType::f32:
        out.data<float>()[k] = static_cast<float>(v);
        break;
      case DType::f16:
        out.data<uint16_t>()[k] = f16_from_double(v);
        break;
      case DType::i64:
        out.data<int64_t>()[k] =
            t.dtype() == DType::i64 ? t.data<int64_t>()[k] : static_cast<int64_t>(v);
        break;
      case DType::boolean:
        out.data<bool>()[k] = v == 1;
        break;
    }
  }
  return out;
}

std::string reversed_shape_hint(const Shape& got, const Shape& want) {
  if (got == want || !std::equal(got.rbegin(), got.rend(), want.begin(), want.end())) return "";
  std::string numpy;
  for (int64_t d : got) numpy += (numpy.empty() ? "" : ", ") + std::to_string(d);
  return fmt::format(
      " (the declared shape reversed: ytape's shapes are column-major, numpy's and PyTorch's "
      "row-major, so the tape's {} is an array of shape ({}) there; save its transpose, x.T in "
      "numpy, x.permute(...).contiguous() in PyTorch)",
      shape_str(want), numpy);
}

}  // namespace ytape
