// The passes inside regions (docs/regions.md): `optimize` treats a scan's body as a tape,
// and the scan computes the same before and after.
#include <doctest/doctest.h>

#include "opt/hoist.h"
#include "opt/optimize.h"
#include "opt/unroll.h"
#include "runtime/executor.h"
#include "tape/builder.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "unit/runtime/kernel_harness.h"
#include "unit/tape/branch_tapes.h"

using namespace ytape;

namespace {

// A body (w; h; x) -> (next, y) with a repeated op, a multiplication by one and dead code.
Tape wasteful_body() {
  Builder b;
  Var w = b.input("w", {DType::f64, {3}});
  Var h = b.input("h", {DType::f64, {3}});
  Var x = b.input("x", {DType::f64, {3}});
  Var e1 = b.exp(b.mul(w, h));
  Var e2 = b.exp(b.mul(w, h));                       // the same as e1
  Var one = b.mul(e2, b.constant(DType::f64, 1.0));  // e2
  b.sin(x);                                          // read by nothing
  b.output(b.tanh(b.add(e1, x)), "");
  b.output(b.add(e1, one), "");
  return b.finish();
}

}  // namespace

// outer(w, h0, xs) = the scan of wasteful_body over the 5 columns of xs.
Tape outer(bool reverse = false) {
  Builder b("outer");
  Var w = b.input("w", {DType::f64, {3}});
  Var h0 = b.input("h0", {DType::f64, {3}});
  Var xs = b.input("xs", {DType::f64, {3, 5}});
  std::vector<Var> r = b.scan({w}, {h0}, {xs}, wasteful_body(), 5, reverse);
  b.output(r[0], "h");
  b.output(r[1], "ys");
  return b.finish();
}

TensorMap outer_inputs() {
  std::vector<double> wv{0.1, -0.2, 0.3}, hv{1, 2, 3}, xv(15);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1 * static_cast<double>(i) - 0.7;
  auto tensor = [](Type type, const std::vector<double>& v) {
    Tensor out(type);
    std::copy(v.begin(), v.end(), out.data<double>());
    return out;
  };
  return {{"w", tensor({DType::f64, {3}}, wv)},
          {"h0", tensor({DType::f64, {3}}, hv)},
          {"xs", tensor({DType::f64, {3, 5}}, xv)}};
}

void check_same_values(const Tape& a, const Tape& b) {
  TensorMap inputs = outer_inputs();
  std::vector<Tensor> before = Executor(a).run(inputs), after = Executor(b).run(inputs);
  REQUIRE(before.size() == after.size());
  for (size_t k = 0; k < before.size(); ++k) {
    REQUIRE(before[k].type() == after[k].type());
    for (int64_t i = 0; i < before[k].size(); ++i) {
      CHECK(before[k].data<double>()[i] == after[k].data<double>()[i]);
    }
  }
}

TEST_CASE("optimize simplifies a scan's body and keeps what the scan computes") {
  Tape t = outer();
  Tape o = optimize(t);
  validate(o);
  const Tape& body = o.ops.back().regions[0];
  CHECK(body.num_ops() < t.ops.back().regions[0].num_ops());
  CHECK(print_tape(body).find("sin") == std::string::npos);
  CHECK(body.num_inputs() == 3);  // a body's parameters stay: the op passes them
  check_same_values(t, o);
}

TEST_CASE("unroll_regions writes a scan out step by step, with its values bit for bit") {
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    Tape t = outer(reverse);
    CHECK(has_regions(t));
    Tape u = unroll_regions(t);
    validate(u);
    CHECK(!has_regions(u));
    int tanhs = 0;
    for (const Op& op : u.ops) tanhs += op.kind == OpKind::call && op.prim == Prim::tanh;
    CHECK(tanhs == 5);  // one body per step
    check_same_values(t, u);
  }
}

TEST_CASE("inline: a cond on a constant is its branch, a scan of length 1 its body") {
  const Tape branches = testing::branchy();  // its cond: then x .* w, else exp(x) + w
  const Op* cond = nullptr;
  for (const Op& op : branches.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::cond) cond = &op;
  }
  REQUIRE(cond != nullptr);
  for (bool side : {true, false}) {
    CAPTURE(side);
    Builder b("choice");
    Var x = b.input("x", {DType::f64, {3}}), w = b.input("w", {DType::f64, {3}});
    Var h0 = b.input("h0", {DType::f64, {3}});
    Var xs = b.input("xs", {DType::f64, {3, 1}});
    std::vector<Var> y = b.cond(b.constant(DType::boolean, side ? 1.0 : 0.0), {x, w},
                                std::vector<Tape>(cond->regions.begin(), cond->regions.end()));
    std::vector<Var> r = b.scan({w}, {h0}, {xs}, wasteful_body(), 1);
    b.output(b.add(y[0], r[0]), "out");
    b.output(r[1], "ys");
    Tape t = b.finish();
    Tape o = optimize(t);
    validate(o);
    CHECK(!has_regions(o));
    TensorMap inputs{{"x", testing::make_tensor({DType::f64, {3}}, {0.5, -1, 2})},
                     {"w", testing::make_tensor({DType::f64, {3}}, {1.5, 0.25, -3})},
                     {"h0", testing::make_tensor({DType::f64, {3}}, {0.1, 0.2, 0.3})},
                     {"xs", testing::make_tensor({DType::f64, {3, 1}}, {1, 2, 3})}};
    std::vector<Tensor> want = Executor(t).run(inputs), got = Executor(o).run(inputs);
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < want.size(); ++i)
      testing::check_equal(got[i], testing::to_doubles(want[i]));
  }
}

TEST_CASE("dce: a region op loses the results nothing reads and what only they needed") {
  // A scan with two carries, a counter nothing reads and a running sum, and two ys, one
  // unread; the unread carry's operand and its const go too.
  Builder body;
  Var w = body.input("w", {DType::f64, {3}});
  Var k = body.input("k", {DType::f64, {3}});
  Var h = body.input("h", {DType::f64, {3}});
  Var c = body.input("c", {DType::f64, {3}});
  Var x = body.input("x", {DType::f64, {3}});
  Var next = body.tanh(body.add(body.mul(w, h), x));
  body.output(next, "");
  body.output(body.add(c, k), "");  // c: read only by itself
  body.output(body.exp(next), "");  // unread
  body.output(body.sin(next), "");
  Builder b("cut");
  Var bw = b.input("w", {DType::f64, {3}}), bk = b.input("k", {DType::f64, {3}});
  Var h0 = b.input("h0", {DType::f64, {3}}), c0 = b.input("c0", {DType::f64, {3}});
  Var xs = b.input("xs", {DType::f64, {3, 4}});
  std::vector<Var> r = b.scan({bw, bk}, {h0, c0}, {xs}, body.finish(), 4);
  b.output(r[0], "h");
  b.output(r[3], "ys");
  Tape t = b.finish();
  Tape o = optimize(t, {{"dce"}});
  validate(o);
  const Op& scan = o.ops.back();
  REQUIRE(scan.prim == Prim::scan);
  CHECK(scan.args.size() == 3);  // w, h0, xs
  CHECK(scan.outs.size() == 2);  // h, ys
  CHECK(attrs_of<Prim::scan>(scan.attrs).consts == 1);
  CHECK(attrs_of<Prim::scan>(scan.attrs).carries == 1);
  TensorMap inputs{
      {"w", testing::make_tensor({DType::f64, {3}}, {0.5, -1, 2})},
      {"k", testing::make_tensor({DType::f64, {3}}, {1, 1, 1})},
      {"h0", testing::make_tensor({DType::f64, {3}}, {0.1, 0.2, 0.3})},
      {"c0", testing::make_tensor({DType::f64, {3}}, {0, 0, 0})},
      {"xs", testing::make_tensor({DType::f64, {3, 4}}, {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12})}};
  std::vector<Tensor> want = Executor(t).run(inputs), got = Executor(o).run(inputs);
  for (size_t i = 0; i < want.size(); ++i)
    testing::check_equal(got[i], testing::to_doubles(want[i]));
}

TEST_CASE("dce: a while_loop keeps a carry its condition reads; a cond drops an unread result") {
  // newton's loop with a second carry, a counter nothing reads after the loop.
  const Type s{DType::f64, {}};
  Builder test;
  Var a = test.input("a", s), x = test.input("x", s);
  test.input("n", s);
  test.output(test.gt(test.abs(test.sub(test.mul(x, x), a)), test.constant(DType::f64, 1e-12)), "");
  Builder body;
  a = body.input("a", s);
  x = body.input("x", s);
  Var n = body.input("n", s);
  body.output(body.mul(body.add(x, body.div(a, x)), body.constant(DType::f64, 0.5)), "");
  body.output(body.add(n, body.constant(DType::f64, 1.0)), "");
  Builder b("loop");
  Var a0 = b.input("a", s), x0 = b.input("x0", s);
  std::vector<Var> r =
      b.while_loop({a0}, {x0, b.constant(DType::f64, 0.0)}, test.finish(), body.finish(), 100);
  // A cond of two results, the second unread: (x a, x + a) or (-x, x - a).
  std::vector<Tape> branches;
  for (bool then : {true, false}) {
    Builder r2;
    Var bx = r2.input("x", s), ba = r2.input("a", s);
    r2.output(then ? r2.mul(bx, ba) : r2.neg(bx), "");
    r2.output(then ? r2.add(bx, ba) : r2.sub(bx, ba), "");
    branches.push_back(r2.finish());
  }
  Var flag = b.gt(r[0], b.constant(DType::f64, 1.0));
  std::vector<Var> y = b.cond(flag, {r[0], a0}, std::move(branches));
  b.output(y[0], "y");
  Tape t = b.finish();
  Tape o = optimize(t, {{"dce"}});
  validate(o);
  for (const Op& op : o.ops) {
    if (op.kind != OpKind::call) continue;
    if (op.prim == Prim::while_loop) CHECK(op.outs.size() == 1);
    if (op.prim == Prim::cond) CHECK(op.outs.size() == 1);
  }
  TensorMap inputs{{"a", testing::make_tensor(s, {2.0})}, {"x0", testing::make_tensor(s, {3.0})}};
  testing::check_equal(Executor(o).run(inputs)[0], testing::to_doubles(Executor(t).run(inputs)[0]));
}

TEST_CASE("hoist: a loop's invariant ops run once, before it, as new consts") {
  // body (w, b; h; x) -> tanh(w' h + x + 2 b): w' and 2 b are the same on every trip.
  Builder body;
  Var w = body.input("w", {DType::f64, {3, 3}});
  Var bias = body.input("b", {DType::f64, {3, 1}});
  Var h = body.input("h", {DType::f64, {3, 1}});
  Var x = body.input("x", {DType::f64, {3, 1}});
  Var wt = body.permutedims(w, {.perm = {2, 1}});
  Var twice = body.mul(bias, body.constant(DType::f64, 2.0));
  Var next = body.tanh(body.add(body.add(body.matmul(wt, h), x), twice));
  body.output(next, "");
  body.output(next, "");
  Builder b("rnn");
  Var bw = b.input("w", {DType::f64, {3, 3}}), bb = b.input("b", {DType::f64, {3, 1}});
  Var h0 = b.input("h0", {DType::f64, {3, 1}}), xs = b.input("xs", {DType::f64, {3, 1, 5}});
  std::vector<Var> r = b.scan({bw, bb}, {h0}, {xs}, body.finish(), 5);
  b.output(r[0], "h");
  b.output(r[1], "hs");
  Tape t = b.finish();
  Tape o = optimize(t, {{"hoist"}});
  validate(o);
  const Op& scan = o.ops.back();
  REQUIRE(scan.prim == Prim::scan);
  CHECK(attrs_of<Prim::scan>(scan.attrs).consts == 4);  // w, b, then w' and 2 b
  for (const Op& op : scan.regions[0].ops)
    CHECK((op.prim != Prim::permutedims && !(op.prim == Prim::mul && op.kind == OpKind::call)));
  TensorMap inputs{{"w", testing::random_tensor({DType::f64, {3, 3}}, 1, -0.5, 0.5)},
                   {"b", testing::random_tensor({DType::f64, {3, 1}}, 2)},
                   {"h0", testing::random_tensor({DType::f64, {3, 1}}, 3)},
                   {"xs", testing::random_tensor({DType::f64, {3, 1, 5}}, 4)}};
  std::vector<Tensor> want = Executor(t).run(inputs), got = Executor(o).run(inputs);
  for (size_t i = 0; i < want.size(); ++i)
    testing::check_equal(got[i], testing::to_doubles(want[i]));
  CHECK(!hoist_invariants(o).tape);  // nothing left to move
  // A while_loop's condition and body each give theirs, and both regions take them all.
  Tape newton = testing::newton(100);  // cond |x x - a| > tol: nothing invariant but tol
  CHECK(!hoist_invariants(newton).tape);
}
