// Random type-correct tapes, for differential tests (tests/unit/check/) and the structured
// fuzz target (fuzz/valid_tape.cc): small tensors through ops of every family but the
// effects, with broadcasting, in one dtype.
#pragma once

#include <cstdint>
#include <functional>

#include "tape/tape.h"

namespace ytape::check {

/// A source of choices: a value in [0, n) for n >= 1. A seeded generator in tests; the
/// fuzzer's bytes in fuzz targets (any function of the bytes will do).
using Choose = std::function<uint64_t(uint64_t n)>;

struct RandomTapeOptions {
  /// The inputs' and the ops' dtype: f32 or f64, or i64 for `exact` tapes.
  DType dtype = DType::f64;
  int ops = 10;  ///< ops added after the inputs (attempts that fail are redrawn)
  /// Only ops whose results are exact on integers (no float math, division, matmul,
  /// convolution, pooling or norm), their values kept within ±1000: the same choices
  /// then give the same tape in i64 and in f64, and on integer inputs the same values.
  bool exact = false;
};

/// A valid tape with inputs x (a matrix), v (a vector), img (a WHCN image), w (conv
/// weights) and c (one value per channel of img), `options.ops` calls drawn from every
/// family (elementwise, reduce, shape, index, linalg, conv, pool, norm, creation), and one
/// scalar output `loss`, the sum of every value drawn. Functions of restricted
/// domain get arguments inside it (log(x² + 1), x / (y² + 1)), so that an f64 run and its
/// gradient are finite: the tapes suit finite differences.
Tape random_tape(const Choose& choose, const RandomTapeOptions& options = {});

/// Whether `t` has an op whose result jumps where its arguments change a little (a JUMP
/// row of tape/ops.def: sign, floor, a comparison, argmax, rem, ...): runs in two precisions
/// may then differ by more than rounding.
bool has_jumps(const Tape& t);

}  // namespace ytape::check
