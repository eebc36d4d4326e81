#include "runtime/format.h"

#include <fmt/format.h>

#include <cmath>
#include <limits>

#include "tape/attrs.h"
#include "tape/float16.h"

namespace ytape {

std::string element_str(const Tensor& t, int64_t i) {
  switch (t.dtype()) {
    case DType::f32:
      return float32_str(t.data<float>()[i]);
    case DType::f64:
      return float_str(t.data<double>()[i]);
    case DType::i64:
      return fmt::format("{}", t.data<int64_t>()[i]);
    case DType::boolean:
      return t.data<bool>()[i] ? "true" : "false";
    case DType::f16:
      return float16_str(t.data<uint16_t>()[i]);
  }
  return {};
}

std::string values_str(const Tensor& t, int max_elements) {
  if (t.rank() == 0) return element_str(t, 0);
  std::string out = "[";
  int64_t shown = std::min<int64_t>(t.size(), max_elements);
  for (int64_t i = 0; i < shown; ++i) {
    if (i > 0) out += ", ";
    out += element_str(t, i);
  }
  if (t.size() > shown) out += fmt::format(", ... {} elements", t.size());
  return out + "]";
}

std::string summary_str(const Tensor& t) {
  std::string out = values_str(t, 6);
  if (t.size() <= 1) return out;
  if (t.dtype() == DType::boolean) {
    int64_t trues = 0;
    for (int64_t i = 0; i < t.size(); ++i) trues += t.data<bool>()[i];
    return out + fmt::format("  ({} true)", trues);
  }
  double lo = std::numeric_limits<double>::infinity(), hi = -lo, sum = 0, squares = 0;
  int64_t nans = 0;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = element_value(t, i);
    if (std::isnan(v)) {
      ++nans;
      continue;
    }
    lo = std::min(lo, v);
    hi = std::max(hi, v);
    sum += v;
    squares += v * v;
  }
  int64_t counted = t.size() - nans;
  out += counted == 0 ? "  all NaN"
                      : fmt::format("  min {:.6g} max {:.6g} mean {:.6g} norm {:.6g}", lo, hi,
                                    sum / counted, std::sqrt(squares));
  if (nans > 0 && counted > 0) out += fmt::format(" ({} NaN)", nans);
  return out;
}

}  // namespace ytape
