// The scan kernel (docs/regions.md): a recurrent cell scanned over a sequence gives what the
// same cell unrolled gives, bit for bit, forwards and in reverse, run after run.
#include <doctest/doctest.h>

#include "kernel_harness.h"
#include "runtime/eval.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "unit/runtime/scan_cases.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

void check_same(const Tensor& got, const Tensor& want) {
  REQUIRE(got.type() == want.type());
  check_equal(got, to_doubles(want));
}

}  // namespace

TEST_CASE("a scan computes what its body unrolled computes, forwards and in reverse") {
  for (bool reverse : {false, true}) {
    for (int64_t length : {1, 2, 16, 100}) {
      CAPTURE(reverse);
      CAPTURE(length);
      Tape scanned = rnn(length, cell_body(), reverse), reference = unrolled_rnn(length, reverse);
      TensorMap inputs = rnn_inputs(length, 7 * length);
      std::vector<Tensor> got = Executor(scanned).run(inputs);
      std::vector<Tensor> want = Executor(reference).run(inputs);
      check_same(got[0], want[0]);
      check_same(got[1], want[1]);
    }
  }
}

TEST_CASE("a scan's executor keeps its results right over many runs") {
  Tape t = rnn(9), reference = unrolled_rnn(9);
  Executor e(t);
  Executor reference_executor(reference);
  std::vector<std::vector<Tensor>> kept;
  for (uint64_t run = 0; run < 4; ++run) {
    TensorMap inputs = rnn_inputs(9, 100 + run);
    kept.push_back(e.run(inputs));
    std::vector<Tensor> want = reference_executor.run(inputs);
    check_same(kept.back()[0], want[0]);
    check_same(kept.back()[1], want[1]);
  }
  // The results of the first run, still held, were not overwritten by the later runs.
  std::vector<Tensor> first = Executor(unrolled_rnn(9)).run(rnn_inputs(9, 100));
  check_same(kept[0][1], first[1]);
}

TEST_CASE("a scan of length 0 gives its initial carries and empty ys") {
  TensorMap inputs = rnn_inputs(0, 3);
  std::vector<Tensor> got = Executor(rnn(0)).run(inputs);
  check_same(got[0], inputs[1].second);
  CHECK(type_str(got[1].type()) == "f32[4,1,0]");
}

TEST_CASE("a body that yields its parameters: the carry stays, the ys are the xs") {
  Builder body;
  Var c = body.input("c", {DType::f64, {3}});
  Var x = body.input("x", {DType::f64, {2}});
  body.output(c, "");
  body.output(x, "");
  Builder b("identity");
  Var c0 = b.input("c0", {DType::f64, {3}});
  Var xs = b.input("xs", {DType::f64, {2, 5}});
  std::vector<Var> r = b.scan({}, {c0}, {xs}, body.finish(), 5);
  b.output(r[0], "c");
  b.output(r[1], "ys");
  TensorMap inputs{{"c0", random_tensor({DType::f64, {3}}, 1)},
                   {"xs", random_tensor({DType::f64, {2, 5}}, 2)}};
  std::vector<Tensor> got = Executor(b.finish()).run(inputs);
  check_same(got[0], inputs[0].second);
  check_same(got[1], inputs[1].second);
}

TEST_CASE("an error in a body names the scan and the body's op") {
  // gather with an index out of range at the third step.
  Builder body;
  Var table = body.input("table", {DType::f32, {3}});
  Var i = body.input("i", {DType::i64, {1}});
  body.output(body.gather(table, i, {.dim = 1}), "");
  Builder b("lookup");
  Var table0 = b.input("table", {DType::f32, {3}});
  Var ids = b.input("ids", {DType::i64, {1, 4}});
  b.output(b.scan({table0}, {}, {ids}, body.finish(), 4)[0], "rows");
  Tape t = b.finish();
  validate(t);
  TensorMap inputs{{"table", random_tensor({DType::f32, {3}}, 1)},
                   {"ids", make_tensor({DType::i64, {1, 4}}, {1, 2, 9, 3})}};
  CHECK_THROWS_WITH_AS(Executor(t).run(inputs), doctest::Contains("scan"), UserError);
  CHECK_THROWS_WITH_AS(Executor(t).run(inputs), doctest::Contains("gather"), UserError);
}

TEST_CASE("a scan evaluated alone, outside a tape's executor") {
  Tape t = rnn(5);
  TensorMap inputs = rnn_inputs(5, 11);
  const Op& op = t.ops.back();
  std::vector<const Tensor*> args = {&inputs[0].second, &inputs[1].second, &inputs[2].second};
  Tensor h(t.type(op.outs[0])), hs(t.type(op.outs[1]));
  std::vector<Tensor*> outs = {&h, &hs};
  evaluate_into(op, args, outs, {});
  std::vector<Tensor> want = Executor(unrolled_rnn(5)).run(inputs);
  check_same(h, want[0]);
  check_same(hs, want[1]);
}
