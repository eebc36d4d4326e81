// Small step tapes and data sets for the training loop's tests.
#pragma once

#include <vector>

#include "runtime/tensor.h"
#include "tape/builder.h"
#include "train/data.h"

namespace ytape::testing {

inline Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

inline Tensor tensor(Type type, const std::vector<float>& values) {
  Tensor t(std::move(type));
  std::copy(values.begin(), values.end(), t.data<float>());
  return t;
}

/// A step that moves `w` towards the batch mean of `x` (f32[2,batch]) at rate `lr`:
/// out.w = w - lr * (w - mean(x)), out.loss = sum((w - mean(x))^2), plus `noise`, a
/// rand(f32[]) added to the carried `count` when `random`.
inline Tape mean_step(int64_t batch, bool random = false) {
  Builder b("step");
  Var w = b.input("w", f32({2}));
  Var lr = b.input("lr", f32({}));
  Var x = b.input("x", f32({2, batch}));
  Var count = b.input("count", f32({}));
  Var mean = b.div(b.sum(x, {.dims = {2}}), b.constant(DType::f32, static_cast<double>(batch)));
  Var d = b.sub(w, mean);
  b.output(b.sub(w, b.mul(lr, d)), "out.w");
  b.output(b.sum(b.mul(d, d), {.dims = {1}}), "out.loss");
  Var one =
      random ? b.rand({.dtype = DType::f32, .shape = {}, .seed = 7}) : b.constant(DType::f32, 1.0);
  b.output(b.add(count, one), "count");
  return b.finish();
}

/// x: f32[2,n] with sample k = (k, -k).
inline DataSet ramp_data(int64_t n) {
  std::vector<float> v;
  for (int64_t k = 0; k < n; ++k) {
    v.push_back(static_cast<float>(k));
    v.push_back(static_cast<float>(-k));
  }
  return make_data_set({{"x", tensor(f32({2, n}), v)}}, "train.safetensors");
}

inline TensorMap mean_init() {
  return {{"w", tensor(f32({2}), {0, 0})},
          {"lr", tensor(f32({}), {0.5})},
          {"count", tensor(f32({}), {0})},
          {"x", tensor(f32({2, 1}), {9, 9})}};  // a data input's entry: ignored
}

}  // namespace ytape::testing
