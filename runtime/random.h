// Counter-based random numbers: every value is a pure function of (seed, index), so
// results never depend on threads or on the order of evaluation. The rand and randn
// kernels, made-up inputs and the tracer's top-level rand all draw from here; the exact
// generator is documented in docs/primitives.md (creation).
#pragma once

#include <cmath>
#include <cstdint>

namespace ytape {

/// Random numbers of `rand` and `randn` (docs/primitives.md, creation), counter-based so
/// that element i is a pure function of (seed, i), whatever the threads. The bits of
/// counter i are the (i+1)-th output of SplitMix64 (Steele, Lea and Flood, 2014) seeded
/// with `seed`: z = seed + (i+1) * 0x9e3779b97f4a7c15 (mod 2^64), then
/// z = (z ^ z>>30) * 0xbf58476d1ce4e5b9; z = (z ^ z>>27) * 0x94d049bb133111eb; z ^ z>>31.
inline uint64_t random_bits(uint64_t seed, uint64_t counter) {
  uint64_t z = seed + (counter + 1) * 0x9e3779b97f4a7c15u;
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
  return z ^ (z >> 31);
}

/// `rand` f64 element i: the top 53 bits of counter i times 2^-53, in [0, 1).
inline double uniform_f64(uint64_t seed, uint64_t i) {
  return static_cast<double>(random_bits(seed, i) >> 11) * 0x1p-53;
}

/// `rand` f32 element i: the top 24 bits of counter i times 2^-24, in [0, 1), never 1.
/// They convert through int32, exactly: a loop of these vectorizes, where the conversion
/// of a uint64_t is scalar below AVX-512DQ.
inline float uniform_f32(uint64_t seed, uint64_t i) {
  return static_cast<float>(static_cast<int32_t>(random_bits(seed, i) >> 40)) * 0x1p-24f;
}

/// `randn` element i (f64; f32 rounds it): Box-Muller on u1 = uniform_f64(seed, 2i) and
/// u2 = uniform_f64(seed, 2i+1): sqrt(-2 log(1 - u1)) * cos(2 pi u2). 1 - u1 is in (0, 1],
/// so the log is finite.
inline double normal_f64(uint64_t seed, uint64_t i) {
  double u1 = uniform_f64(seed, 2 * i), u2 = uniform_f64(seed, 2 * i + 1);
  return std::sqrt(-2 * std::log(1 - u1)) * std::cos(2 * 3.14159265358979323846 * u2);
}

}  // namespace ytape
