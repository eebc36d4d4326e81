// Splats: tensors whose elements are all one value. Folding writes them as `fill`s and
// simplification reads them out of `fill`s and constants.
#pragma once

#include <cstdint>
#include <optional>
#include <span>
#include <vector>

#include "tape/dtype.h"

namespace ytape {

/// The value of every element of `bytes` (elements of `dtype`, at least one) when they
/// all have the same bits and a `fill` of that value (a double) writes those very bits:
/// not for NaN, nor for an i64 beyond 2^53. Otherwise nullopt.
std::optional<double> splat_value(std::span<const uint8_t> bytes, DType dtype);

}  // namespace ytape
