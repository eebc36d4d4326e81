// Text views of tensors, for print and for `ytape run`.
#pragma once

#include <string>

#include "runtime/tensor.h"

namespace ytape {

/// Element i as text: shortest round-trip form for floats, digits, true/false.
std::string element_str(const Tensor& t, int64_t i);

/// The value of a scalar ("1.5"), or the first `max_elements` elements of a tensor in
/// column-major order ("[1.0, 2.0, ... 12 elements]").
std::string values_str(const Tensor& t, int max_elements = 8);

/// A one-line summary: the first values, then min, max, mean and L2 norm over all elements (NaNs
/// counted apart) for numeric tensors, or the count of trues for bool tensors.
std::string summary_str(const Tensor& t);

}  // namespace ytape
