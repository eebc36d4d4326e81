// Constant folding: small constant ops become constants, computed by the runtime's kernels.
#include "opt/fold.h"

#include <doctest/doctest.h>

#include <cstring>

#include "helpers.h"
#include "runtime/executor.h"

namespace ytape::passes_test {

TEST_CASE("fold evaluates chains of ops on small constants in one sweep") {
  Builder b("t");
  Var x = b.input("x", f32({2}));
  Var c = floats(b, {1.5, 2.5});
  Var half = b.constant(DType::f32, 0.5);
  Var sum = b.add(c, half);
  Var three = b.constant(DType::f32, 3.0);
  Var d = b.mul(sum, three);
  b.output(b.mul(x, d), "y");
  PassResult r = fold_constants(b.finish());
  REQUIRE(r.tape);
  CHECK(r.changed == 2);
  CHECK(print_tape(*r.tape) ==
        "tape t\n"
        "  in  %1::f32[2] x\n"
        "  %2 = const([1.5, 2.5])::f32[2]\n"
        "  %3 = const(0.5)::f32[]\n"
        "  %4 = const([2.0, 3.0])::f32[2]\n"
        "  %5 = const(3.0)::f32[]\n"
        "  %6 = const([6.0, 9.0])::f32[2]\n"
        "  %7 = mul(%1, %6)::f32[2]\n"
        "  out %7 y\n");
}

TEST_CASE("fold computes f16 ops in f32 and rounds each result to f16, as a run does") {
  Builder b("t");
  Var x = b.input("x", Type{DType::f16, {}});
  // 2048 + 1 is a tie in f16: to even, 2048; 0.1 * 3 in f32, rounded once.
  Var sum = b.add(b.constant(DType::f16, 2048), b.constant(DType::f16, 1));
  Var prod = b.mul(b.constant(DType::f16, 0.1), b.constant(DType::f16, 3));
  b.output(b.add(x, b.add(sum, prod)), "y");
  PassResult r = fold_constants(b.finish());
  REQUIRE(r.tape);
  CHECK(print_tape(*r.tape).find("const(2048.0)::f16[]") != std::string::npos);
  CHECK(print_tape(*r.tape).find("const(0.2998)::f16[]") != std::string::npos);
}

TEST_CASE("fold writes a result of one value repeated as a fill, and reads fills") {
  Builder b("t");
  Var ones = fill(b, 1.0, DType::f32, {2, 3});
  Var scalar = b.constant(DType::f32, 0.25);
  Var sum = b.add(ones, scalar);
  b.output(sum, "sum");
  b.output(b.reshape(scalar, {.shape = {1}}), "one");
  CHECK(after(fold_constants, b.finish()) ==
        "tape t\n"
        "  %1 = fill(value=1.0, dtype=f32, shape=[2,3])::f32[2,3]\n"
        "  %2 = const(0.25)::f32[]\n"
        "  %3 = fill(value=1.25, dtype=f32, shape=[2,3])::f32[2,3]\n"
        "  %4 = const([0.25])::f32[1]\n"
        "  out %3 sum\n"
        "  out %4 one\n");
}

TEST_CASE("fold turns small iotas into constants, and leaves fills and large ops") {
  Builder b("t");
  Var x = b.input("x", f32({65}));
  Var small = fill(b, 0.0, DType::f32, {3});
  Var index = b.iota({.dtype = DType::i64, .shape = Shape{3}, .dim = int64_t{1}});
  Var large = b.iota({.dtype = DType::f32, .shape = Shape{65}, .dim = int64_t{1}});
  b.output(small, "small");
  b.output(index, "index");
  b.output(b.add(x, large), "y");
  CHECK(after(fold_constants, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[65] x\n"
        "  %2 = fill(value=0.0, dtype=f32, shape=[3])::f32[3]\n"
        "  %3 = const([1, 2, 3])::i64[3]\n"
        "  %4 = iota(dtype=f32, shape=[65], dim=1)::f32[65]\n"
        "  %5 = add(%1, %4)::f32[65]\n"
        "  out %2 small\n"
        "  out %3 index\n"
        "  out %5 y\n");
}

TEST_CASE("fold leaves ops reading or making more than kFoldMaxElements elements") {
  Builder b("t");
  Var big = b.constant(DType::f32, 2.0, {kFoldMaxElements + 1});
  Var scalar = b.constant(DType::f32, 2.0);
  b.output(b.neg(big), "a");
  b.output(b.broadcast_to(scalar, {.shape = {kFoldMaxElements + 1}}), "b");
  CHECK(after(fold_constants, b.finish()) == "unchanged");
}

TEST_CASE("fold leaves random and effectful ops, and ops whose kernel rejects the constants") {
  Builder b("t");
  Var r = b.rand({.dtype = DType::f32, .shape = Shape{2}, .seed = int64_t{1}});
  Var table = b.constant(DType::f32, 1.0, {3, 1});
  Var bad = b.constant(DType::i64, 9.0, {1, 1});  // index 9 of 3 rows: fails at run time
  Var g = b.gather(table, bad, {.dim = int64_t{1}});
  b.print({table});
  b.output(b.neg(g), "g");
  b.output(r, "r");
  CHECK(after(fold_constants, b.finish()) == "unchanged");
}

TEST_CASE("folded values are the very bits a run computes") {
  Builder b("t");
  Var c = floats(b, {0.7f, -1.3f, 2.9f, 0.1f, 5.5f});
  Var e = b.sigmoid(b.tanh(b.exp(b.sin(c))));
  Var scale = b.constant(DType::f32, 3.3);
  Var s = b.softmax(b.mul(e, scale), {.dims = Shape{1}});
  b.output(b.log_softmax(s, {.dims = Shape{1}}), "y");
  Tape t = b.finish();
  PassResult r = fold_constants(t);
  REQUIRE(r.tape);
  std::vector<Tensor> run = Executor(t).run({});
  const Op& folded = r.tape->ops[r.tape->outputs[0].var.id];
  REQUIRE(folded.kind == OpKind::constant);
  REQUIRE(folded.value.size() == static_cast<size_t>(run[0].bytes()));
  CHECK(std::memcmp(folded.value.data(), run[0].raw(), folded.value.size()) == 0);
}

}  // namespace ytape::passes_test
