// Helpers of the pass tests: small tapes by hand, and the printed result of a pass.
#pragma once

#include <cstring>
#include <string>
#include <vector>

#include "opt/pass.h"
#include "tape/builder.h"
#include "tape/print.h"
#include "tape/validate.h"

namespace ytape::passes_test {

/// The text form of what `pass` makes of `t`, checked by the validator; "unchanged" when
/// the pass changed nothing.
template <typename Pass>
std::string after(Pass pass, const Tape& t) {
  PassResult r = pass(t);
  if (!r.tape) return "unchanged";
  validate(*r.tape);
  return print_tape(*r.tape);
}

inline Type f32(Shape shape = {}) {
  return {DType::f32, std::move(shape)};
}
inline Type i64(Shape shape = {}) {
  return {DType::i64, std::move(shape)};
}

/// An f32 constant of these elements, of shape [n].
inline Var floats(Builder& b, const std::vector<float>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(float));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return b.constant(f32({static_cast<int64_t>(values.size())}), std::move(bytes));
}

inline Var fill(Builder& b, double value, DType dtype, Shape shape) {
  return b.call1(Prim::fill, {}, {{"value", value}, {"dtype", dtype}, {"shape", std::move(shape)}});
}

}  // namespace ytape::passes_test
