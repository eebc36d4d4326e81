// Small tensors and byte strings for the tensor file tests (safetensors, npy, file dtypes).
#pragma once

#include <doctest/doctest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <initializer_list>
#include <vector>

#include "runtime/tensor.h"

namespace ytape::testing {

using Bytes = std::vector<uint8_t>;

/// The native (little-endian) bytes of `values`.
template <typename T>
Bytes bytes_of(std::initializer_list<T> values) {
  Bytes out(values.size() * sizeof(T));
  if (!out.empty()) std::memcpy(out.data(), std::data(values), out.size());
  return out;
}

/// A tensor of `shape` holding `values` in memory order; T gives the dtype (uint16_t: f16).
template <typename T>
Tensor tensor_of(Shape shape, std::initializer_list<T> values) {
  Tensor t(Type{dtype_of<T>(), std::move(shape)});
  REQUIRE(t.size() == static_cast<int64_t>(values.size()));
  std::copy(values.begin(), values.end(), t.data<T>());
  return t;
}

}  // namespace ytape::testing
