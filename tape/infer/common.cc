#include "tape/infer/common.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

namespace ytape::shapes {

Shape broadcast_shapes(const Type& a, const Type& b) {
  size_t rank = std::max(a.shape.size(), b.shape.size());
  Shape out(rank);
  for (size_t i = 0; i < rank; ++i) {
    int64_t da = i < a.shape.size() ? a.shape[i] : 1;
    int64_t db = i < b.shape.size() ? b.shape[i] : 1;
    if (da != db && da != 1 && db != 1) {
      user_error("shapes {} and {} do not broadcast (dim {}: {} vs {})", type_str(a), type_str(b),
                 i + 1, da, db);
    }
    out[i] = da == 1 ? db : da;
  }
  return out;
}

void require_same_dtype(std::span<const Type> args) {
  for (const Type& t : args) {
    if (t.dtype != args[0].dtype) {
      user_error("arguments must have one dtype, got {} and {}; convert one first",
                 type_str(args[0]), type_str(t));
    }
  }
}

void require_float(const Type& t, std::string_view what) {
  if (!is_float(t.dtype)) user_error("{} must be f32 or f64, got {}", what, type_str(t));
}

void require_numeric(const Type& t, std::string_view what) {
  if (!is_numeric(t.dtype)) {
    user_error("{} must be numeric (f32, f64 or i64), got {}", what, type_str(t));
  }
}

void require_rank(const Type& t, int rank, std::string_view what) {
  if (t.rank() != rank) user_error("{} must have rank {}, got {}", what, rank, type_str(t));
}

void require_dim(int64_t dim, int rank, std::string_view attr) {
  if (dim < 1 || dim > rank) {
    user_error("{}={} is out of range for rank {} (dims are 1-based)", attr, dim, rank);
  }
}

void require_length(const std::vector<int64_t>& v, size_t n, std::string_view attr) {
  if (v.size() != n) {
    user_error("{} must have {} elements, got [{}]", attr, n, fmt::join(v, ","));
  }
}

void require_sane(const Shape& shape, std::string_view attr) {
  std::string problem = shape_problem(shape);
  if (!problem.empty()) user_error("{}: {}", attr, problem);
}

void require_each_at_least(const std::vector<int64_t>& v, int64_t min, std::string_view attr) {
  for (int64_t x : v) {
    if (x < min) {
      user_error("{}=[{}] must be {}", attr, fmt::join(v, ","),
                 min == 0 ? "non-negative" : "positive");
    }
    if (x > kMaxElements) user_error("{}=[{}]: {} is too large", attr, fmt::join(v, ","), x);
  }
}

Type shape_attr_type(DType dtype, const Shape& shape, size_t rank) {
  require_length(shape, rank, "shape");
  require_sane(shape, "shape");
  return Type{dtype, shape};
}

void require_exact(double value, DType dtype, std::string_view attr) {
  // Beyond 2^53 a double no longer holds every integer.
  constexpr double kMaxExact = 9007199254740992.0;
  if (dtype == DType::i64 && (value != std::trunc(value) || std::abs(value) > kMaxExact)) {
    user_error("{}={} is not an exact i64", attr, float_str(value));
  }
  if (dtype == DType::boolean && value != 0 && value != 1) {
    user_error("{}={} is not a bool (use 0 or 1)", attr, float_str(value));
  }
}

int64_t window_positions(int64_t in, int64_t lo, int64_t hi, int64_t size, int64_t dilation,
                         int64_t stride) {
  int64_t padded = in + lo + hi;
  // Dividing first keeps dilation * (size - 1) from overflowing.
  if (size > 1 && dilation > padded / (size - 1)) return 0;
  int64_t span = dilation * (size - 1) + 1;
  if (span > padded) return 0;
  return (padded - span) / stride + 1;
}

}  // namespace ytape::shapes
