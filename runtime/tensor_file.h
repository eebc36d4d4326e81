// Tensor files: safetensors for weights and results, and small JSON inputs.
//
// ytape tensors are column-major; numpy and PyTorch are row-major. Both formats store the
// row-major view of a tensor: the same bytes (nothing is transposed) under the reversed
// shape, so a ytape f32[3,2] is a (2, 3) array in numpy, and weights exchange byte for byte.
#pragma once

#include <cstdint>
#include <functional>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/file_dtype.h"
#include "runtime/tensor.h"

namespace ytape {

/// Highest rank a tensor file may hold (a bound on hostile input, far above real models).
inline constexpr int kMaxFileRank = 32;

/// The string pairs of a safetensors header's "__metadata__", in header order.
using TensorFileMetadata = std::vector<std::pair<std::string, std::string>>;

/// Reads the bytes of a safetensors file: an 8-byte little-endian header length N, N bytes of
/// JSON header {name: {"dtype", "shape", "data_offsets"}, "__metadata__": {..}}, then the data.
/// Every dtype the format has but the 8-bit floats is read (BOOL, U8-U64, I8-I64, F16, BF16,
/// F32, F64), widened to the nearest ytape dtype (file_dtype.h: integers to i64, BF16 to
/// f32), each tensor's shape reversed. Tensors come back in
/// the order of their data (for files the reference library writes, the header's order).
/// "__metadata__" must map strings to strings; it is stored in `metadata` when that is not
/// null (empty when the file has none), and otherwise ignored, as are unknown fields of a
/// tensor entry. As in the reference implementation, the tensors must tile the data
/// exactly: no gaps, no overlaps, nothing after the last one.
/// Throws UserError naming `source` (and the tensor, if one is at fault) for anything
/// malformed; never reads out of bounds, and allocates no more than the file's size.
TensorMap read_safetensors(std::span<const uint8_t> bytes, std::string_view source,
                           TensorFileMetadata* metadata = nullptr);

/// The bytes of a safetensors file holding `tensors`, byte for byte what the reference
/// Python library writes for them without metadata: data ordered by dtype as it orders them
/// (U64, I64, F64, F32, ..., U8, BOOL: decreasing alignment, which keeps every tensor
/// aligned) then by name bytewise, header keys in data order as compact JSON padded with
/// spaces to a multiple of 8 bytes, no "__metadata__".
/// Throws UserError if two tensors share a name, a name is "__metadata__" or not UTF-8.
std::vector<uint8_t> write_safetensors(const TensorMap& tensors);

/// As write_safetensors(tensors), with `metadata` as the header's first entry,
/// "__metadata__": {key: value, ...} in the given order, as the reference library places it
/// (no entry when `metadata` is empty), and each tensor's elements written as `as` where
/// given (encode_elements: floats rounded, integers exact or a UserError). Throws UserError
/// as above, and if a key appears twice or a key or value is not UTF-8 (the message then
/// says "a tensor name").
std::vector<uint8_t> write_safetensors(const TensorMap& tensors, const TensorFileMetadata& metadata,
                                       std::optional<FileDType> as = std::nullopt);

/// A safetensors file as the pieces it is made of, in file order: the 8-byte header
/// length with the header, then each tensor's data. A piece points into `header`, into
/// `encoded` (a tensor written as another dtype) or into the tensor's own buffer, so a
/// file is written without a copy of its tensors: they must outlive the pieces, unchanged.
struct SafetensorsPieces {
  std::vector<uint8_t> header;
  std::vector<std::vector<uint8_t>> encoded;
  std::vector<std::span<const uint8_t>> pieces;
};

/// The pieces whose concatenation is write_safetensors(tensors, metadata, as), with the
/// same checks and errors.
SafetensorsPieces safetensors_pieces(const TensorMap& tensors,
                                     const TensorFileMetadata& metadata = {},
                                     std::optional<FileDType> as = std::nullopt);

/// The type wanted for the tensor `name`, or nullptr to take what the JSON gives. The
/// pointer is used only during the call.
using WantedType = std::function<const Type*(std::string_view name)>;

/// Reads {"name": value, ...} where a value is a number, true/false, or nested arrays of
/// them, into tensors in document order.
/// - Nesting is row-major as numpy prints it: the outermost array is the last (slowest)
///   dimension, so [[1,2,3],[4,5,6]] is f64[3,2] holding 1..6 in memory order.
/// - Without a wanted type, numbers give f64 and true/false give bool; an empty array ends
///   the nesting ([] is f64[0], [[],[]] is f64[0,2]).
/// - With one (`want` may be empty), the nesting must give its shape, and numbers are
///   converted to its dtype: i64 values must be integers in range, f32 values in f32's
///   range; bool takes only true/false. An empty array stands for every shape with a zero
///   at its level, as numpy prints np.zeros((0, 3)) as [].
/// Names the caller expects but the JSON lacks are not reported here. Throws UserError
/// naming `source` and the element (0-based positions in the nesting, 'x[1][0]') for
/// invalid JSON, duplicate names, ragged nesting, nesting deeper than kMaxFileRank,
/// values of the wrong kind, values out of the dtype's range and non-integers for i64.
TensorMap read_tensor_json(std::string_view text, std::string_view source,
                           const WantedType& want = {});

}  // namespace ytape
