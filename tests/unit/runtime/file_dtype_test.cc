// Tensor files' element types (runtime/file_dtype.h): a file's tensor takes a tape input's
// dtype where every value converts exactly, and the first that does not is named.
#include "runtime/file_dtype.h"

#include <doctest/doctest.h>

#include <cmath>
#include <cstdint>
#include <limits>

#include "tape/float16.h"
#include "unit/runtime/tensor_bytes.h"

namespace ytape {
namespace {

template <typename T>
Tensor tensor_of(std::initializer_list<T> values) {
  return testing::tensor_of<T>({static_cast<int64_t>(values.size())}, values);
}

TEST_CASE("convert_exact widens integers and narrows floats that hold their values") {
  Tensor pixels = tensor_of<int64_t>({0, 128, 255});
  Tensor f = convert_exact(pixels, DType::f32, "x");
  CHECK(f.dtype() == DType::f32);
  CHECK(f.data<float>()[2] == 255.0f);
  Tensor d = tensor_of<double>({0.5, -2, std::numeric_limits<double>::infinity(), NAN});
  Tensor narrow = convert_exact(d, DType::f32, "x");
  CHECK(narrow.data<float>()[0] == 0.5f);
  CHECK(std::isinf(narrow.data<float>()[2]));
  CHECK(std::isnan(narrow.data<float>()[3]));
  CHECK(convert_exact(tensor_of<double>({3, -7}), DType::i64, "x").data<int64_t>()[1] == -7);
  CHECK(convert_exact(tensor_of<int64_t>({1, 0}), DType::boolean, "x").data<bool>()[0]);
  Tensor half = convert_exact(tensor_of<int64_t>({2048, -3}), DType::f16, "x");
  CHECK(f16_to_f32(half.data<uint16_t>()[0]) == 2048.0f);
  CHECK(convert_exact(tensor_of<float>({1.5f}), DType::f64, "x").data<double>()[0] == 1.5);
  // The same dtype is the same tensor.
  CHECK(convert_exact(pixels, DType::i64, "x").raw() == pixels.raw());
}

TEST_CASE("convert_exact names the first value the declared dtype does not hold") {
  CHECK_THROWS_WITH_AS(
      convert_exact(tensor_of<int64_t>({1, 16777217}), DType::f32, "a: tensor 'x'"),
      "a: tensor 'x' is i64, and its element 1 (0-based, in memory order) is "
      "16777217, which f32 does not hold exactly: the tape declares f32",
      UserError);
  CHECK_THROWS_WITH_AS(convert_exact(tensor_of<double>({0.5, 0.1}), DType::f32, "x"),
                       "x is f64, and its element 1 (0-based, in memory order) is 0.1, which f32 "
                       "does not hold exactly: the tape declares f32",
                       UserError);
  CHECK_THROWS_AS(convert_exact(tensor_of<float>({2.5f}), DType::i64, "x"), UserError);
  CHECK_THROWS_AS(convert_exact(tensor_of<double>({NAN}), DType::i64, "x"), UserError);
  CHECK_THROWS_AS(convert_exact(tensor_of<int64_t>({2}), DType::boolean, "x"), UserError);
  CHECK_THROWS_AS(convert_exact(tensor_of<int64_t>({2049}), DType::f16, "x"), UserError);
  // i64's largest rounds to 2^63 as a double: not exact, though f64 holds 2^63.
  CHECK_THROWS_AS(convert_exact(tensor_of<int64_t>({INT64_MAX}), DType::f64, "x"), UserError);
  CHECK(convert_exact(tensor_of<int64_t>({INT64_MIN}), DType::f64, "x").data<double>()[0] ==
        -0x1p63);
  CHECK_THROWS_AS(convert_exact(tensor_of<double>({0x1p63}), DType::i64, "x"), UserError);
}

TEST_CASE("every file dtype has its names, and decodes and encodes its extremes") {
  for (FileDType d : kAllFileDTypes) {
    CAPTURE(file_dtype_name(d));
    CHECK(parse_file_dtype(file_dtype_name(d)) == d);
    CHECK(parse_safetensors_dtype(safetensors_name(d)) == d);
  }
  Tensor ints = tensor_of<int64_t>({-32768, 32767});
  std::vector<uint8_t> bytes = encode_elements(ints, FileDType::i16, "x");
  CHECK(bytes == std::vector<uint8_t>{0x00, 0x80, 0xff, 0x7f});
  Tensor back = decode_elements(FileDType::i16, bytes, {2}, "x");
  CHECK(back.data<int64_t>()[0] == -32768);
  CHECK_THROWS_WITH_AS(encode_elements(tensor_of<int64_t>({-1}), FileDType::u64, "o"),
                       "o: element 0 is -1, outside u64's range", UserError);
  CHECK_THROWS_WITH_AS(encode_elements(tensor_of<double>({0.5}), FileDType::boolean, "o"),
                       "o: element 0 is 0.5, not 0 or 1, which BOOL holds", UserError);
  // BF16 from f64 in one rounding: 1 + 2^-8 + 2^-30 is just above the tie, so it rounds up
  // (through f32 it would tie, and go to even, down to 1).
  bytes = encode_elements(tensor_of<double>({1 + 0x1p-8 + 0x1p-30}), FileDType::bf16, "x");
  CHECK(bytes == std::vector<uint8_t>{0x81, 0x3f});
}

TEST_CASE("a shape that is the declared one reversed gets a hint about row-major order") {
  CHECK(reversed_shape_hint({4, 8}, {8, 4}).find("the tape's [8,4] is an array of shape (4, 8)") !=
        std::string::npos);
  CHECK(reversed_shape_hint({8, 4}, {8, 4}).empty());
  CHECK(reversed_shape_hint({4, 8}, {8, 5}).empty());
}

}  // namespace
}  // namespace ytape
