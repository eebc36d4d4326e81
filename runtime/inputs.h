// Inputs for a run: from tensor files, or made up deterministically.
#pragma once

#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape {

/// The tensors of a tensor file's bytes, by its name `source`: numpy's ".npz", ".npy" (one
/// array, named as the file without ".npy"), else safetensors; in their own dtypes.
TensorMap read_tensor_file(std::span<const uint8_t> bytes, std::string_view source);

/// Reads the inputs of `t` from a file's content, by the name `source`: JSON (".json"),
/// numpy's ".npz", or ".npy" (one array, named as the file without ".npy"), else
/// safetensors. JSON values take the dtype and shape the tape declares for
/// their name; a file's tensor of the declared shape in another dtype (U8, I32, BF16, F64
/// for an f32 input...) is converted where every element converts exactly, else UserError
/// naming it and the first element that does not. Names the tape lacks are an error, or
/// with `skip_extra` left out (a training checkpoint holds the optimizer's state too, which
/// an inference tape does not read).
TensorMap load_inputs(std::string_view content, std::string_view source, const Tape& t,
                      bool skip_extra = false);

/// `given` plus every input of `t` it lacks, made up from `seed` and the input's name, so
/// adding one input never changes the others: floats uniform in [-1, 1), i64 ones (valid
/// 1-based indices), bools true.
TensorMap complete_inputs(const Tape& t, TensorMap given, uint64_t seed);

}  // namespace ytape
