// Tapes with a scan for the tests of every stage (docs/regions.md): a recurrent cell run
// over a sequence.
#pragma once

#include <utility>
#include <vector>

#include "tape/builder.h"

namespace ytape::testing {

// The body of a recurrent cell: (w, h, x) -> (tanh(w h + x), the same as y).
inline Tape cell_body(DType d = DType::f32, int64_t n = 4) {
  Builder b;
  Var w = b.input("w", {d, {n, n}});
  Var h = b.input("h", {d, {n, 1}});
  Var x = b.input("x", {d, {n, 1}});
  Var next = b.tanh(b.add(b.matmul(w, h), x));
  b.output(next, "");
  b.output(next, "");
  return b.finish();
}

// A scan of the cell over `length` steps.
inline Tape rnn(int64_t length, Tape body = cell_body(), bool reverse = false) {
  Builder b("rnn");
  Var w = b.input("w", {DType::f32, {4, 4}});
  Var h0 = b.input("h0", {DType::f32, {4, 1}});
  Var xs = b.input("xs", {DType::f32, {4, 1, length}});
  std::vector<Var> r = b.scan({w}, {h0}, {xs}, std::move(body), length, reverse);
  b.output(r[0], "h");
  b.output(r[1], "hs");
  return b.finish();
}

}  // namespace ytape::testing
