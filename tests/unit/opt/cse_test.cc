// Common-subexpression elimination: equal ops merge, commutative ones in any order;
// effects and random numbers never.
#include "opt/cse.h"

#include <doctest/doctest.h>

#include "helpers.h"

namespace ytape::passes_test {

TEST_CASE("cse merges equal ops, and chains of them in one sweep") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  Var a = b.exp(b.sin(x));
  Var c = b.exp(b.sin(x));
  b.output(b.sub(a, c), "y");
  CHECK(after(eliminate_common_subexpressions, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  %2 = sin(%1)::f32[3]\n"
        "  %3 = exp(%2)::f32[3]\n"
        "  %4 = sub(%3, %3)::f32[3]\n"
        "  out %4 y\n");
}

TEST_CASE("cse merges commutative ops whatever the order of their arguments") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  Var y = b.input("y", f32({3}));
  Var p = b.mul(x, y);
  Var q = b.mul(y, x);
  Var d = b.sub(x, y);
  Var e = b.sub(y, x);  // not commutative: stays
  Var pq = b.add(p, q);
  Var de = b.add(d, e);
  b.output(b.add(pq, de), "z");
  CHECK(after(eliminate_common_subexpressions, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  in  %2::f32[3] y\n"
        "  %3 = mul(%1, %2)::f32[3]\n"
        "  %4 = sub(%1, %2)::f32[3]\n"
        "  %5 = sub(%2, %1)::f32[3]\n"
        "  %6 = add(%3, %3)::f32[3]\n"
        "  %7 = add(%4, %5)::f32[3]\n"
        "  %8 = add(%6, %7)::f32[3]\n"
        "  out %8 z\n");
}

TEST_CASE("cse merges constants of the same type and bits only") {
  Builder b("t");
  Var x = b.input("x", f32());
  Var one = b.constant(DType::f32, 1.0);
  Var one_again = b.constant(DType::f32, 1.0);
  Var zero = b.constant(DType::f32, 0.0);
  Var minus_zero = b.constant(DType::f32, -0.0);
  Var one_f64 = b.constant(DType::f64, 1.0);
  Var a = b.mul(x, one);
  Var a_again = b.mul(x, one_again);
  Var s1 = b.add(a, a_again);
  Var z = b.mul(x, zero);
  Var z_minus = b.mul(x, minus_zero);
  Var s2 = b.add(z, z_minus);
  b.output(b.add(s1, s2), "y");
  b.output(one_f64, "one");
  CHECK(after(eliminate_common_subexpressions, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[] x\n"
        "  %2 = const(1.0)::f32[]\n"
        "  %3 = const(0.0)::f32[]\n"
        "  %4 = const(-0.0)::f32[]\n"
        "  %5 = const(1.0)::f64[]\n"
        "  %6 = mul(%1, %2)::f32[]\n"
        "  %7 = add(%6, %6)::f32[]\n"
        "  %8 = mul(%1, %3)::f32[]\n"
        "  %9 = mul(%1, %4)::f32[]\n"
        "  %10 = add(%8, %9)::f32[]\n"
        "  %11 = add(%7, %10)::f32[]\n"
        "  out %11 y\n"
        "  out %5 one\n");
}

TEST_CASE("cse compares attributes, float ones bit for bit") {
  Builder b("t");
  Var x = b.input("x", f32({2, 3}));
  Var s1 = b.sum(x, {.dims = {1}});
  Var s2 = b.sum(x, {.dims = {2}});
  Var zero = fill(b, 0.0, DType::f32, {3});
  Var minus_zero = fill(b, -0.0, DType::f32, {3});
  b.output(s1, "a");
  b.output(s2, "b");
  b.output(b.add(zero, minus_zero), "c");
  CHECK(after(eliminate_common_subexpressions, b.finish()) == "unchanged");
}

TEST_CASE("cse merges multi-output ops output by output") {
  Builder b("t");
  Var x = b.input("x", f32({4, 4, 1, 1}));
  Attrs window{{"window", Shape{2, 2}}, {"stride", Shape{2, 2}}};
  std::vector<Var> p = b.call(Prim::max_pool2d_with_indices, {x}, window);
  std::vector<Var> q = b.call(Prim::max_pool2d_with_indices, {x}, window);
  b.output(b.add(p[0], q[0]), "y");
  b.output(q[1], "i");
  CHECK(after(eliminate_common_subexpressions, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[4,4,1,1] x\n"
        "  %2, %3 = max_pool2d_with_indices(%1; window=[2,2], stride=[2,2])::(f32[2,2,1,1], "
        "i64[2,2,1,1])\n"
        "  %4 = add(%2, %2)::f32[2,2,1,1]\n"
        "  out %4 y\n"
        "  out %3 i\n");
}

TEST_CASE("effectful and random ops never merge, even with equal arguments") {
  Builder b("t");
  Var x = b.input("x", f32());
  Attrs draw{{"dtype", DType::f32}, {"shape", Shape{2}}, {"seed", int64_t{1}}};
  Var r1 = b.call1(Prim::rand, {}, draw);
  Var r2 = b.call1(Prim::rand, {}, draw);
  Var n1 = b.call1(Prim::randn, {}, draw);
  Var n2 = b.call1(Prim::randn, {}, draw);
  b.print({x});
  b.print({x});
  Var c = b.gt(x, x);
  b.guard(c, {.message = std::string("no")});
  b.guard(c, {.message = std::string("no")});
  Var r = b.add(r1, r2);
  Var n = b.add(n1, n2);
  b.output(b.add(r, n), "y");
  CHECK(after(eliminate_common_subexpressions, b.finish()) == "unchanged");
}

TEST_CASE("merged ops keep the location of the first") {
  Builder b("t");
  Var x = b.input("x", f32());
  b.set_loc({b.intern_file("m.jl"), 3});
  Var a = b.sin(x);
  b.set_loc({b.intern_file("m.jl"), 9});
  Var c = b.sin(x);
  b.output(b.add(a, c), "y");
  PassResult r = eliminate_common_subexpressions(b.finish());
  REQUIRE(r.tape);
  CHECK(r.changed == 1);
  CHECK(print_tape(*r.tape) ==
        "tape t\n"
        "  in  %1::f32[] x\n"
        "  %2 = sin(%1)::f32[]  # m.jl:3\n"
        "  %3 = add(%2, %2)::f32[]  # m.jl:9\n"
        "  out %3 y\n");
}

}  // namespace ytape::passes_test
