// The ONNX fuzz target's structure-aware mutation: a model's numbers changed where the
// importer reads them (attributes, initializers, constants, input dims, the opset), which
// byte mutations of a serialized model rarely reach intact.
#pragma once

#include <cstddef>
#include <cstdint>

namespace ytape::fuzz {

/// Mutates the model in `data` (`size` bytes, room for `max_size`) in place and returns its
/// new size: one number of the parsed model set to a value that sizes and indices break on
/// (0, -1, 2^31, 2^32, 2^62, INT64_MIN, NaN, ...), a random one or a neighbour of the old,
/// or a list grown or shrunk; a byte mutation (libFuzzer's) when the bytes do not parse, in
/// one mutation of four, or when the model has no number. `seed` makes it repeatable.
size_t mutate_model(uint8_t* data, size_t size, size_t max_size, unsigned seed);

}  // namespace ytape::fuzz
