// Dead-code elimination: unread ops go, inputs and effects stay.
#include "opt/dce.h"

#include <doctest/doctest.h>

#include "helpers.h"

namespace ytape::passes_test {

TEST_CASE("dce removes ops no output reads, and keeps every input") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  b.input("unread", f32({3}));
  Var s = b.sin(x);
  b.cos(b.exp(x));  // dead, and so is what only it reads
  b.constant(DType::f32, 2.0);
  b.output(b.neg(s), "y");
  CHECK(after(eliminate_dead_code, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  in  %2::f32[3] unread\n"
        "  %3 = sin(%1)::f32[3]\n"
        "  %4 = neg(%3)::f32[3]\n"
        "  out %4 y\n");
}

TEST_CASE("dce reports what it removed, and nothing on a tape without dead ops") {
  Builder b("t");
  Var x = b.input("x", f32());
  Var dead = b.sin(x);
  b.cos(dead);
  b.output(b.tanh(x), "y");
  Tape t = b.finish();
  PassResult r = eliminate_dead_code(t);
  REQUIRE(r.tape);
  CHECK(r.changed == 2);
  PassResult again = eliminate_dead_code(*r.tape);
  CHECK(!again.tape);
  CHECK(again.changed == 0);
}

TEST_CASE("effectful ops and what they read survive dce, in order") {
  Builder b("t");
  Var x = b.input("x", f32({2}));
  Var total = b.sum(b.exp(x), {.dims = {1}});
  b.print({total}, {.format = std::string("total = {}")});
  Var positive = b.gt(total, b.constant(DType::f32, 0.0));
  b.guard(positive, {.message = std::string("total must be positive")});
  b.rand({.dtype = DType::f32, .shape = Shape{2}, .seed = int64_t{7}});
  b.output(x, "x");
  CHECK(after(eliminate_dead_code, b.finish()) == "unchanged");
}

TEST_CASE("dce narrows a multi-output variant whose extra outputs nothing reads") {
  Builder b("t");
  Var x = b.input("x", f32({4, 4, 1, 1}));
  Var scale = b.input("scale", f32({1}));
  Var bias = b.input("bias", f32({1}));
  std::vector<Var> pooled =
      b.max_pool2d_with_indices(x, {.window = Shape{2, 2}, .stride = Shape{2, 2}});
  std::vector<Var> normed = b.batchnorm_with_stats(pooled[0], scale, bias);
  b.output(normed[0], "y");
  CHECK(after(eliminate_dead_code, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[4,4,1,1] x\n"
        "  in  %2::f32[1] scale\n"
        "  in  %3::f32[1] bias\n"
        "  %4 = max_pool2d(%1; window=[2,2], stride=[2,2])::f32[2,2,1,1]\n"
        "  %5 = batchnorm(%4, %2, %3)::f32[2,2,1,1]\n"
        "  out %5 y\n");
}

TEST_CASE("dce keeps a multi-output op whole when any extra output is read") {
  Builder b("t");
  Var x = b.input("x", f32({4, 4, 1, 1}));
  std::vector<Var> pooled =
      b.max_pool2d_with_indices(x, {.window = Shape{2, 2}, .stride = Shape{2, 2}});
  b.output(pooled[1], "indices");
  CHECK(after(eliminate_dead_code, b.finish()) == "unchanged");
}

}  // namespace ytape::passes_test
