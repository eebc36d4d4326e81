// The element types of tensor files (safetensors, numpy's .npy and .npz), which are more
// than ytape's own: how each reads into a ytape dtype, and how a tensor is written as one.
//
// Reading widens without loss to the nearest ytape dtype (integers to i64, BF16 to f32);
// a tape input then takes the value in its declared dtype where every element converts
// exactly (convert_exact), so a U8 image feeds an f32 input and an I32 token id an i64 one.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"

namespace ytape {

enum class FileDType { boolean, u8, u16, u32, u64, i8, i16, i32, i64, f16, bf16, f32, f64 };

/// Every file dtype, in the order above.
inline constexpr FileDType kAllFileDTypes[] = {
    FileDType::boolean, FileDType::u8,  FileDType::u16, FileDType::u32, FileDType::u64,
    FileDType::i8,      FileDType::i16, FileDType::i32, FileDType::i64, FileDType::f16,
    FileDType::bf16,    FileDType::f32, FileDType::f64};

/// Bytes per element.
int file_dtype_size(FileDType d);
/// safetensors' name: "BOOL", "U8", ..., "BF16", "F64".
std::string_view safetensors_name(FileDType d);
std::optional<FileDType> parse_safetensors_dtype(std::string_view name);
/// The lower-case name `--dtype` takes: "bool", "u8", ..., "bf16", "f64".
std::string_view file_dtype_name(FileDType d);
std::optional<FileDType> parse_file_dtype(std::string_view name);
/// The ytape dtype a file dtype reads into: itself where ytape has it (bool, i64, f16, f32,
/// f64), else i64 for the integers and f32 for BF16, all exact.
DType widened(FileDType d);
/// The file dtype of a ytape dtype.
FileDType file_dtype_of(DType d);

/// The tensor of ytape shape `shape` whose elements, little-endian `from`, are `bytes`,
/// read into widened(from). Throws UserError naming `what` (the file and tensor, as
/// "a.safetensors: tensor 'x'") for a BOOL byte other than 0 or 1 or a U64 above i64's
/// range. `bytes` must hold exactly the shape's elements.
Tensor decode_elements(FileDType from, std::span<const uint8_t> bytes, const Shape& shape,
                       std::string_view what);

/// The elements of `t` as little-endian `to`: floats rounded to nearest, ties to even
/// (as PyTorch's .to(torch.bfloat16)); integers and BOOL must hold the values exactly
/// (whole numbers in range; 0 or 1), else UserError naming `what`, the element and value.
std::vector<uint8_t> encode_elements(const Tensor& t, FileDType to, std::string_view what);

/// `t` as `dtype` where each element converts exactly (integers widen, f16 and BF16's f32
/// widen, an f64 that f32 holds narrows); `t` itself when it has that dtype. Else UserError
/// naming `what` and the first element that does not fit, as "element 3 (0-based, in memory
/// order) is 16777217, which f32 does not hold".
Tensor convert_exact(const Tensor& t, DType dtype, std::string_view what);

/// "" unless `got` is `want` reversed (and differs from it); then why, for a message that
/// names both: ytape's shapes are column-major, numpy's and PyTorch's row-major, so a
/// tensor saved from them must be the transpose.
std::string reversed_shape_hint(const Shape& got, const Shape& want);

}  // namespace ytape
