// Tapes with a cond and a while_loop (docs/regions.md), built by hand, shared by the tests
// of the stages that read them.
#pragma once

#include "tape/builder.h"
#include "tape/op_attrs.h"

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

// A scan of 5 steps that may skip some: x = x v_t + v_t on f64 x from x0, yielding each x.
// With `mask`, only the steps where the bool xs m is true run; else it runs while its bool
// carry `run` holds, which each step sets to x < 4. Outputs the final x, then the ys; with
// `loss`, x + sum(ys .* ys) alone.
inline Tape skipping_scan(bool mask, bool reverse = false, bool loss = false) {
  const Type s{DType::f64, {}}, flag{DType::boolean, {}};
  Builder body;
  Var x = body.input("x", s);
  if (!mask) body.input("run", flag);
  Var v = body.input("v", s);
  if (mask) body.input("m", flag);
  Var next = body.add(body.mul(x, v), v);
  body.output(next, "");
  if (!mask) body.output(body.lt(next, body.constant(DType::f64, 4.0)), "");
  body.output(next, "");
  std::vector<Tape> regions;
  regions.push_back(body.finish());
  regions[0].name = "body";
  Builder b(mask ? "masked" : "running");
  VarList args{b.input("x0", s)};
  if (!mask) args.push_back(b.input("run0", flag));
  args.push_back(b.input("v", {DType::f64, {5}}));
  if (mask) args.push_back(b.input("m", {DType::boolean, {5}}));
  AttrsOf<Prim::scan> a{.consts = 0, .carries = mask ? 1 : 2, .length = 5, .reverse = reverse};
  if (mask)
    a.mask = 2;
  else
    a.running = 2;
  VarList outs = b.record(Prim::scan, args, a.to_attrs(), std::move(regions)).outs;
  if (loss) {
    b.output(b.add(outs[0], b.sum(b.mul(outs.back(), outs.back()), {.dims = {1}})), "loss");
  } else {
    b.output(outs[0], "x");
    b.output(outs.back(), "xs");
  }
  return b.finish();
}

}  // namespace ytape::testing
