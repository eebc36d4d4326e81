// Element types, static shapes and the type of a tape value.
#pragma once

#include <array>
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

namespace ytape {

/// Element type of a tensor. f16 (IEEE binary16) is a storage type: ops on f16 values
/// compute in f32 and round each result to f16 (docs/primitives.md, Types).
enum class DType : uint8_t { f32, f64, i64, boolean, f16 };

inline constexpr int kNumDTypes = 5;

/// "f32", "f64", "i64", "bool", "f16".
std::string_view dtype_name(DType t);
/// Parses a dtype name; false if `name` is not one.
bool parse_dtype(std::string_view name, DType* out);
/// Size of one element in bytes (bool is one byte).
int dtype_size(DType t);

/// The bytes of one element of `dtype` holding `value`, as `convert` makes it: rounded to
/// f32; truncated toward zero for i64, NaN giving 0 and values beyond the range the
/// nearest end; value != 0 for bool; rounded to nearest even for f16. The first dtype_size(dtype)
/// bytes are the element.
std::array<uint8_t, 8> scalar_bytes(DType dtype, double value);
/// An i64 element holding `value` exactly (doubles hold integers exactly up to 2^53).
std::array<uint8_t, 8> scalar_bytes(int64_t value);
constexpr bool is_float(DType t) {
  return t == DType::f32 || t == DType::f64 || t == DType::f16;
}
/// Floats and i64: the types arithmetic is defined on.
constexpr bool is_numeric(DType t) {
  return t != DType::boolean;
}

/// Dimensions of a column-major tensor, first dimension fastest. Empty for a scalar.
using Shape = std::vector<int64_t>;

/// Largest element count a tensor may have: 2^48, far beyond any real tensor, far below
/// overflow of int64 byte offsets.
inline constexpr int64_t kMaxElements = int64_t{1} << 48;

/// Number of elements; the caller must have checked the shape with `check_shape`.
int64_t num_elements(const Shape& shape);
/// Empty string if every dimension is non-negative and the product of the nonzero ones is
/// at most kMaxElements (so that no count or stride overflows, in any order of the dims);
/// otherwise what is wrong with it.
std::string shape_problem(const Shape& shape);
/// "[2,3]", "[]".
std::string shape_str(const Shape& shape);
/// Whether permuting the dims of `shape` by `perm` (1-based, as permutedims) keeps those
/// larger than 1 in their order: it only moves dims of size 1, so it is a reshape.
bool moves_only_ones(const std::vector<int64_t>& perm, const Shape& shape);

/// Type of a tape value: dtype and static shape.
struct Type {
  DType dtype = DType::f32;
  Shape shape;

  int rank() const { return static_cast<int>(shape.size()); }
  int64_t size() const { return num_elements(shape); }
  friend bool operator==(const Type&, const Type&) = default;
};

/// "f32[224,224,3,1]", "f64[]".
std::string type_str(const Type& t);
/// Parses the text form of a type; on failure returns false and says why in `why`.
bool parse_type(std::string_view text, Type* out, std::string* why);

}  // namespace ytape
