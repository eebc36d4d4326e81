// Softmax rows (softmax_rows.h): per row one pass for the maximum, one for e^(x - m) by
// fast_math.h's exp_f32 and its sum, one for the division, each over data in the cache.
// The C library's exp is a scalar call per element: the GPT sample's two attention
// softmaxes took 1 ms each for 2^19 scores.
#include "runtime/kernels/softmax_rows.h"

#include <cmath>
#include <limits>

#include "runtime/kernels/common.h"
#include "runtime/kernels/fast_math.h"
#include "runtime/parallel.h"

namespace ytape::kernels {

namespace {

// Partial sums (and maxima) per row: 16 lanes, then the tail, then the lanes in order.
constexpr int64_t kLanes = 16;

YTAPE_ROW_TARGETS float row_max(const float* x, int64_t n) {
  float lane[kLanes];
  for (float& v : lane) v = -std::numeric_limits<float>::infinity();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) lane[l] = x[i + l] > lane[l] ? x[i + l] : lane[l];
  }
  float m = -std::numeric_limits<float>::infinity();
  for (; i < n; ++i) m = x[i] > m ? x[i] : m;
  for (float v : lane) m = v > m ? v : m;
  return m;
}

// Σ e^(x - m), each term also written to y unless y is null. Summed in f64: rows of
// 70,000 terms in f32 lanes were 3.5e-6 off.
template <bool Store>
YTAPE_ROW_TARGETS float exp_sum(const float* x, float m, float* y, int64_t n) {
  double lane[kLanes] = {};
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int64_t l = 0; l < kLanes; ++l) {
      const float e = exp_f32(x[i + l] - m);
      if constexpr (Store) y[i + l] = e;
      lane[l] += e;
    }
  }
  double s = 0;
  for (; i < n; ++i) {
    const float e = exp_f32(x[i] - m);
    if constexpr (Store) y[i] = e;
    s += e;
  }
  for (double v : lane) s += v;
  return static_cast<float>(s);
}

YTAPE_ROW_TARGETS void divide(float* y, float s, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = y[i] / s;
}

// x - m is exact near the maximum, so log Σ is subtracted apart: small results stay
// accurate where x - (m + log Σ) would round to the ulp of m (as the reference kernel).
YTAPE_ROW_TARGETS void log_normalize(const float* x, float m, float log_sum, float* y, int64_t n) {
  for (int64_t i = 0; i < n; ++i) y[i] = (x[i] - m) - log_sum;
}

void row(const float* x, float* y, int64_t n, bool log) {
  const float m = row_max(x, n);
  if (log) {
    log_normalize(x, m, std::log(exp_sum<false>(x, m, nullptr, n)), y, n);
  } else {
    divide(y, exp_sum<true>(x, m, y, n), n);
  }
}

}  // namespace

void softmax_rows(const float* x, float* y, int64_t n, int64_t rows, bool log) {
  if (n == 0 || rows == 0) return;
  // A few thousand elements per thread at least: waking one costs microseconds.
  parallel_for(rows, (1 << 14) / n + 1, [&](int64_t begin, int64_t end) {
    for (int64_t r = begin; r < end; ++r) row(x + r * n, y + r * n, n, log);
  });
}

}  // namespace ytape::kernels
