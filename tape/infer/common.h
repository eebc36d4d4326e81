// Helpers shared by the inference rules of every family.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tape/dtype.h"
#include "tape/error.h"
#include "tape/op_attrs.h"
#include "tape/prim.h"

namespace ytape::shapes {

/// Julia broadcasting: dims align from the first; a missing trailing dim counts as 1; each
/// pair of dims must be equal or one of them 1. Throws UserError naming both types.
Shape broadcast_shapes(const Type& a, const Type& b);

/// Throws unless every argument has the same dtype.
void require_same_dtype(std::span<const Type> args);
/// Throws unless `t` is a float type; `what` names the argument ("argument 1").
void require_float(const Type& t, std::string_view what);
/// Throws unless `t` is numeric (not bool).
void require_numeric(const Type& t, std::string_view what);
/// Throws unless `t` has rank `rank`.
void require_rank(const Type& t, int rank, std::string_view what);
/// Throws unless `dim` is a valid 1-based dim of a rank-`rank` tensor.
void require_dim(int64_t dim, int rank, std::string_view attr);
/// Throws unless `v` has `n` elements.
void require_length(const std::vector<int64_t>& v, size_t n, std::string_view attr);
/// Throws unless the shape is sane (no negative dims, no overflow).
void require_sane(const Shape& shape, std::string_view attr);
/// Throws unless every element of `v` is in `min`..2^48 (0 for pads, 1 for strides,
/// windows and dilations), so that sums of a few of them and of dims cannot overflow.
void require_each_at_least(const std::vector<int64_t>& v, int64_t min, std::string_view attr);
/// `dtype` with the `shape` attribute (a gradient's x or w), which must be a sane shape of
/// rank `rank`.
Type shape_attr_type(DType dtype, const Shape& shape, size_t rank);
/// Throws unless `value` is exact in `dtype`: an integer for i64, 0 or 1 for bool.
void require_exact(double value, DType dtype, std::string_view attr);

/// Positions of a sliding window along one axis (PyTorch's formula): `size` taps spaced
/// `dilation` apart, moved by `stride` over `in` elements padded by `lo` and `hi`. Returns 0
/// when the window does not fit in the padded input. Arguments must be in 0..2^48, and
/// `size`, `dilation`, `stride` at least 1.
int64_t window_positions(int64_t in, int64_t lo, int64_t hi, int64_t size, int64_t dilation,
                         int64_t stride);

/// A single result.
inline std::vector<Type> one(DType dtype, Shape shape) {
  return {Type{dtype, std::move(shape)}};
}

}  // namespace ytape::shapes
