#include "tape/print.h"

#include <doctest/doctest.h>

#include "tape/builder.h"

using namespace ytape;

TEST_CASE("the text form of a tape") {
  Builder b("loss");
  b.add_meta("entry", "loss");
  Var x = b.input("x", {DType::f32, {4, 4, 1, 1}});
  b.set_loc({b.intern_file("samples/model.jl"), 12});
  Var s = b.sin(x);
  Var two = b.constant(DType::f32, 2.0);
  Var m = b.mul(s, two);
  std::vector<Var> pooled = b.max_pool2d_with_indices(
      m, {.window = std::vector<int64_t>{2, 2}, .stride = std::vector<int64_t>{2, 2}});
  b.set_loc({});
  Var total = b.sum(pooled[0], {.dims = {1, 2, 3, 4}});
  b.print({total}, {.format = std::string("loss = {}")});
  Var c = b.conv2d(x, b.constant(DType::f32, 0.5, {3, 3, 1, 2}),
                   {.pad = std::vector<int64_t>{1, 1, 1, 1}});
  b.output(total, "loss");
  b.output(c, "features");
  CHECK(print_tape(b.finish()) ==
        "tape loss\n"
        "  meta entry = \"loss\"\n"
        "  in  %1::f32[4,4,1,1] x\n"
        "  %2 = sin(%1)::f32[4,4,1,1]  # samples/model.jl:12\n"
        "  %3 = const(2.0)::f32[]  # samples/model.jl:12\n"
        "  %4 = mul(%2, %3)::f32[4,4,1,1]  # samples/model.jl:12\n"
        "  %5, %6 = max_pool2d_with_indices(%4; window=[2,2], stride=[2,2])::(f32[2,2,1,1], "
        "i64[2,2,1,1])  # samples/model.jl:12\n"
        "  %7 = sum(%5; dims=[1,2,3,4])::f32[]\n"
        "  print(%7; format=\"loss = {}\")\n"
        "  %8 = const([0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, 0.5, ... 18 elements])::f32[3,3,1,2]\n"
        "  %9 = conv2d(%1, %8; pad=[1,1,1,1])::f32[4,4,2,1]\n"
        "  out %7 loss\n"
        "  out %9 features\n");
}

TEST_CASE("constants of every dtype print exactly") {
  Builder b("c");
  Var f = b.constant(DType::f32, 0.1);
  Var d = b.constant(DType::f64, 0.1);
  Var i = b.constant(DType::i64, -3, {2});
  Var z = b.constant(DType::boolean, 1);
  Var n = b.constant(DType::f64, 0.0 / 0.0);
  Var inf = b.constant(DType::f32, -1.0 / 0.0);
  Var creation = b.call1(
      Prim::fill, {}, {{"value", 1.0}, {"dtype", DType::f32}, {"shape", std::vector<int64_t>{2}}});
  Tape t = b.finish();
  CHECK(print_op(t, t.ops[f.id]) == "%1 = const(0.1)::f32[]");
  CHECK(print_op(t, t.ops[d.id]) == "%2 = const(0.1)::f64[]");
  CHECK(print_op(t, t.ops[i.id]) == "%3 = const([-3, -3])::i64[2]");
  CHECK(print_op(t, t.ops[z.id]) == "%4 = const(true)::bool[]");
  CHECK(print_op(t, t.ops[n.id]) == "%5 = const(nan)::f64[]");
  CHECK(print_op(t, t.ops[inf.id]) == "%6 = const(-inf)::f32[]");
  CHECK(print_op(t, t.ops[creation.id]) == "%7 = fill(value=1.0, dtype=f32, shape=[2])::f32[2]");
}
