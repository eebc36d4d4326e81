// Training data: tensors whose last dim counts samples, visited in batches in an order
// that is a pure function of the seed and the epoch (docs/training.md).
#pragma once

#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "runtime/tensor.h"

namespace ytape {

/// Tensors that share their last dim, the sample dim (column-major: the slowest one, so
/// each sample is one contiguous block; in the row-major view of a safetensors file it is
/// the first dim).
struct DataSet {
  std::string source;  ///< the file, for messages
  TensorMap tensors;
  int64_t samples = 0;  ///< N, the length of every tensor's last dim

  /// The tensor named `name`, or nullptr.
  const Tensor* find(std::string_view name) const;
};

/// Checks that `tensors` form a data set: at least one tensor, none of rank 0, all with
/// the same last dim N > 0. Throws UserError naming `source` and the tensor otherwise.
DataSet make_data_set(TensorMap tensors, std::string source);

/// The key of epoch `epoch`'s order (1-based): random_bits(random_bits(seed, 2), epoch).
uint64_t epoch_key(uint64_t seed, int64_t epoch);
/// The random key of the step with global index `step` (0-based, counting every step of
/// every epoch): random_bits(random_bits(seed, 1), step), never 0 (which would make random
/// ops draw the same numbers every step; 0 becomes 1).
uint64_t step_key(uint64_t seed, int64_t step);

/// The samples of epoch `epoch` (1-based) in the order they are visited: 0..n-1, or with
/// `shuffle` a Fisher-Yates shuffle of it where, for i = n-1 down to 1, element i swaps
/// with element random_bits(epoch_key(seed, epoch), i) mod (i+1).
std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch, bool shuffle);

/// The samples `indices` (0-based, along the last dim) of `data`, in that order: a tensor
/// with the same dims but the last, which is indices.size().
Tensor gather_samples(const Tensor& data, std::span<const int64_t> indices);

}  // namespace ytape
