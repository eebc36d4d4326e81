// The recurrent cell of tests/unit/tape/scan_tapes.h written out step by step, the reference
// that a scan's values and gradients are compared with, and inputs for both.
#pragma once

#include "unit/runtime/kernel_harness.h"
#include "unit/tape/scan_tapes.h"

namespace ytape::testing {

// rnn(length) of scan_tapes.h, unrolled: a slice, the cell and a reshape per step.
inline Tape unrolled_rnn(int64_t length, bool reverse = false) {
  Builder b("unrolled");
  Var w = b.input("w", {DType::f32, {4, 4}});
  Var h = b.input("h0", {DType::f32, {4, 1}});
  Var xs = b.input("xs", {DType::f32, {4, 1, length}});
  std::vector<Var> ys(length);
  for (int64_t step = 0; step < length; ++step) {
    int64_t t = reverse ? length - 1 - step : step;
    Var x = b.slice(xs, {.start = {1, 1, t + 1}, .stop = {4, 1, t + 1}, .step = {1, 1, 1}});
    h = b.tanh(b.add(b.matmul(w, h), b.reshape(x, {.shape = {4, 1}})));
    ys[t] = h;
  }
  b.output(h, "h");
  if (length > 0) {
    VarList stacked;
    for (Var y : ys) stacked.push_back(b.reshape(y, {.shape = {4, 1, 1}}));
    b.output(b.concat(stacked, {.dim = 3}), "hs");
  }
  return b.finish();
}

inline TensorMap rnn_inputs(int64_t length, uint64_t seed) {
  return {{"w", random_tensor({DType::f32, {4, 4}}, seed, -0.5, 0.5)},
          {"h0", random_tensor({DType::f32, {4, 1}}, seed + 1)},
          {"xs", random_tensor({DType::f32, {4, 1, length}}, seed + 2)}};
}

}  // namespace ytape::testing
