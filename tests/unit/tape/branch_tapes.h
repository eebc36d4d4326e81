// Tapes with a cond and a while_loop (docs/regions.md), built by hand, shared by the tests
// of the stages that read them.
#pragma once

#include "tape/builder.h"

namespace ytape::testing {

// y = cond(s; then: x .* w, else: exp(x) + w) on f64 x[3] and w[3]; s is a bool input
// or, with `cases`, an i64 input choosing among three branches (the third: x - w).
inline Tape branchy(bool cases = false) {
  const Type v{DType::f64, {3}};
  auto branch = [&](int k) {
    Builder r;
    Var x = r.input("x", v), w = r.input("w", v);
    Var y = k == 0 ? r.mul(x, w) : k == 1 ? r.add(r.exp(x), w) : r.sub(x, w);
    r.output(y, "");
    r.output(r.sum(y, {.dims = {1}}), "");
    return r.finish();
  };
  Builder b("branchy");
  Var s = b.input("s", {cases ? DType::i64 : DType::boolean, {}});
  Var x = b.input("x", v), w = b.input("w", v);
  std::vector<Tape> branches;
  for (int k = 0; k < (cases ? 3 : 2); ++k) branches.push_back(branch(k));
  std::vector<Var> r = b.cond(s, {x, w}, std::move(branches));
  b.output(b.add(b.sum(b.mul(r[0], r[0]), {.dims = {1}}), r[1]), "loss");
  return b.finish();
}

// Newton's square root of f64 `a` from `x0`: while |x x - a| > tol, x = (x + a / x) / 2.
// Outputs x and, with `loss`, x * x * 3 + x (a scalar function of it to differentiate).
inline Tape newton(int64_t max_trips, double tol = 1e-12) {
  const Type s{DType::f64, {}};
  Builder test;
  Var a = test.input("a", s), x = test.input("x", s);
  Var residual = test.abs(test.sub(test.mul(x, x), a));
  test.output(test.gt(residual, test.constant(DType::f64, tol)), "");
  Builder body;
  a = body.input("a", s);
  x = body.input("x", s);
  body.output(body.mul(body.add(x, body.div(a, x)), body.constant(DType::f64, 0.5)), "");
  Builder b("newton");
  Var a0 = b.input("a", s), x0 = b.input("x0", s);
  Var root = b.while_loop({a0}, {x0}, test.finish(), body.finish(), max_trips)[0];
  b.output(b.add(b.mul(b.mul(root, root), b.constant(DType::f64, 3.0)), root), "y");
  return b.finish();
}

}  // namespace ytape::testing
