// Counter-based random numbers: every value is a pure function of (seed, index), so
// results never depend on threads or on the order of evaluation. The rand and randn
// kernels, made-up inputs and the tracer's top-level rand all draw from here.
#pragma once

#include <cmath>
#include <cstdint>

namespace ytape {

/// 64 random bits: SplitMix64's finaliser applied to seed and index mixed by a Weyl step.
inline uint64_t random_bits(uint64_t seed, uint64_t index) {
  uint64_t z = seed * 0x9E3779B97F4A7C15ull + (index + 1) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

/// Uniform in [0, 1) from the top 53 bits.
inline double uniform_double(uint64_t seed, uint64_t index) {
  return static_cast<double>(random_bits(seed, index) >> 11) * 0x1.0p-53;
}

/// Uniform in [0, 1) from the top 24 bits (never rounds up to 1).
inline float uniform_float(uint64_t seed, uint64_t index) {
  return static_cast<float>(random_bits(seed, index) >> 40) * 0x1.0p-24f;
}

/// Standard normal by Box-Muller from the uniforms at 2*index and 2*index + 1.
inline double normal_double(uint64_t seed, uint64_t index) {
  double u1 = 1.0 - uniform_double(seed, 2 * index);  // in (0, 1]: log stays finite
  double u2 = uniform_double(seed, 2 * index + 1);
  return std::sqrt(-2.0 * std::log(u1)) * std::cos(2 * M_PI * u2);
}

}  // namespace ytape
