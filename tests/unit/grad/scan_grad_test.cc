// The gradient of a scan (grad/rules/control.cc): equal to the gradient of the same cell
// unrolled, checked against finite differences in f64, in both directions, to second order.
#include <doctest/doctest.h>

#include "check/gradcheck.h"
#include "grad/grad.h"
#include "runtime/executor.h"
#include "tape/builder.h"
#include "tape/op_attrs.h"
#include "unit/runtime/scan_cases.h"

using namespace ytape;
using namespace ytape::testing;
using ytape::check::gradcheck;
using ytape::check::GradcheckResult;

namespace {

// loss = sum(hs .* hs) + sum(h): reads both the stacked ys and the final carry.
Tape with_loss(const Tape& t) {
  Builder b = Builder::like(t);
  VarMap map(t);
  for (const Op& op : t.ops) copy_op(b, t, op, map);
  Var hs = map[t.outputs[1].var];
  Var squares = b.sum(b.mul(hs, hs), {.dims = {1, 2, 3}});
  b.output(b.add(squares, b.sum(map[t.outputs[0].var], {.dims = {1, 2}})), "loss");
  return b.finish();
}

}  // namespace

TEST_CASE("the gradient of a scan equals that of its body unrolled") {
  for (bool remat : {false, true})
    for (bool reverse : {false, true}) {
      CAPTURE(reverse);
      CAPTURE(remat);
      Tape scanned = grad::gradient(with_loss(rnn(12, cell_body(), reverse)), {.remat = remat});
      Tape reference = grad::gradient(with_loss(unrolled_rnn(12, reverse)));
      TensorMap inputs = rnn_inputs(12, 5);
      std::vector<Tensor> got = Executor(scanned).run(inputs);
      std::vector<Tensor> want = Executor(reference).run(inputs);
      REQUIRE(got.size() == 4);  // loss, grad.w, grad.h0, grad.xs
      for (size_t i = 0; i < got.size(); ++i) {
        CAPTURE(scanned.outputs[i].name);
        check_close(got[i], to_doubles(want[i]), 1e-6, 1e-6);
      }
    }
}

TEST_CASE("under remat a long scan is cut into segments of about sqrt(T) steps, same gradient") {
  // 24 steps: 6 segments of 4 (4 is the divisor nearest sqrt(24)); 17, a prime, stays whole.
  for (const auto& bound : {std::pair<int64_t, int64_t>{24, 6}, {17, 0}}) {
    const auto& length = std::get<0>(bound);
    const auto& segments = std::get<1>(bound);
    for (bool reverse : {false, true}) {
      CAPTURE(length);
      CAPTURE(reverse);
      Tape g = grad::gradient(with_loss(rnn(length, cell_body(), reverse)), {.remat = true});
      Tape reference = grad::gradient(with_loss(unrolled_rnn(length, reverse)));
      TensorMap inputs = rnn_inputs(length, 5);
      std::vector<Tensor> got = Executor(g).run(inputs), want = Executor(reference).run(inputs);
      REQUIRE(got.size() == want.size());
      for (size_t i = 0; i < got.size(); ++i) check_close(got[i], to_doubles(want[i]), 1e-6, 1e-6);
      const Op* forward = nullptr;
      for (const Op& op : g.ops) {
        if (forward == nullptr && op.kind == OpKind::call && op.prim == Prim::scan) forward = &op;
      }
      REQUIRE(forward != nullptr);
      const int64_t outer = attrs_of<Prim::scan>(forward->attrs).length;
      CHECK(outer == (segments > 0 ? segments : length));
      int inner = 0;  // the segment, a scan in the forward's body
      for (const Op& op : forward->regions[0].ops) {
        if (op.kind == OpKind::call && op.prim == Prim::scan) {
          ++inner;
          CHECK(attrs_of<Prim::scan>(op.attrs).length == length / segments);
        }
      }
      CHECK(inner == (segments > 0 ? 1 : 0));
    }
  }
}

TEST_CASE("a scan's gradient tape holds one backward scan, whatever the length") {
  for (int64_t length : {4, 256}) {
    Tape g = grad::gradient(with_loss(rnn(length)));
    int scans = 0;
    for (const Op& op : g.ops) scans += op.kind == OpKind::call && op.prim == Prim::scan;
    CHECK(scans == 2);  // the forward, keeping its carries, and the backward
    CHECK(g.num_ops() < 20);
  }
}

TEST_CASE("a scan's gradient matches finite differences, and so does its second order") {
  for (bool reverse : {false, true}) {
    CAPTURE(reverse);
    Tape t = with_loss(rnn(6, cell_body(), reverse));
    TensorMap inputs = rnn_inputs(6, 9);
    CHECK(gradcheck(t, inputs, {}).ok);
    // The gradient tape's own gradient: through the backward scan.
    Tape g = grad::gradient(t);
    CHECK(gradcheck(g, inputs, {}).ok);
  }
}

TEST_CASE("the backward stores each step's residuals, or under remat recomputes the step") {
  for (bool remat : {false, true}) {
    CAPTURE(remat);
    Tape g = grad::gradient(with_loss(rnn(8)), {.remat = remat});
    std::vector<const Op*> scans;
    for (const Op& op : g.ops) {
      if (op.kind == OpKind::call && op.prim == Prim::scan) scans.push_back(&op);
    }
    REQUIRE(scans.size() == 2);
    // The backward body recomputes the step's tanh only under remat.
    int tanhs = 0;
    for (const Op& op : scans[1]->regions[0].ops) tanhs += op.prim == Prim::tanh;
    CHECK(tanhs == (remat ? 1 : 0));
    // The forward keeps per step the carry it was given and, without remat, 1 - tanh^2.
    CHECK(scans[0]->outs.size() == (remat ? 3u : 4u));
  }
}

TEST_CASE("a scan with an integer carry and no xs: only the float values get cotangents") {
  // body (w; h, n) -> (w h, n + 1; sum of w h): a counter beside the state.
  Builder body;
  Var w = body.input("w", {DType::f64, {3, 3}});
  Var h = body.input("h", {DType::f64, {3, 1}});
  Var n = body.input("n", {DType::i64, {}});
  Var next = body.matmul(w, h);
  body.output(next, "");
  body.output(body.add(n, body.constant(DType::i64, 1)), "");
  body.output(body.sum(next, {.dims = {1, 2}}), "");
  Builder b("counter");
  Var w0 = b.input("w", {DType::f64, {3, 3}});
  Var h0 = b.input("h0", {DType::f64, {3, 1}});
  Var n0 = b.input("n0", {DType::i64, {}});
  std::vector<Var> r = b.scan({w0}, {h0, n0}, {}, body.finish(), 5);
  b.output(b.sum(r[2], {.dims = {1}}), "loss");
  Tape t = b.finish();
  TensorMap inputs{{"w", random_tensor({DType::f64, {3, 3}}, 1, -0.6, 0.6)},
                   {"h0", random_tensor({DType::f64, {3, 1}}, 2)},
                   {"n0", make_tensor({DType::i64, {}}, {0})}};
  GradcheckResult r1 = gradcheck(t, inputs, {});
  CHECK(r1.ok);
  CHECK(r1.inputs.size() == 2);  // w and h0; the integer n0 is not checked
}
