#include "tape/shapes/common.h"

#include <fmt/format.h>

#include <algorithm>

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
  if (!is_numeric(t.dtype)) user_error("{} must be numeric (f32, f64 or i64), got {}", what, type_str(t));
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

}  // namespace ytape::shapes
