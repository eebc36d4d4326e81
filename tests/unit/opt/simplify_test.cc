// Algebraic simplification: each rule on a small tape, and what must stay.
#include "opt/simplify.h"

#include <doctest/doctest.h>

#include <cstring>
#include <limits>

#include "helpers.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"

namespace ytape::passes_test {

TEST_CASE("x + 0, 0 + x, x - 0, x * 1, 1 * x and x / 1 are x") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  Var zero = b.constant(DType::f32, 0.0);
  Var one = fill(b, 1.0, DType::f32, {3});
  Var one_scalar = b.constant(DType::f32, 1.0);
  Var y = b.add(x, zero);
  y = b.add(zero, y);
  y = b.sub(y, zero);
  y = b.mul(y, one);
  y = b.mul(one_scalar, y);
  y = b.div(y, one);
  b.output(y, "y");
  PassResult r = simplify(b.finish());
  REQUIRE(r.tape);
  CHECK(r.changed == 6);
  CHECK(print_tape(*r.tape) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  %2 = const(0.0)::f32[]\n"
        "  %3 = fill(value=1.0, dtype=f32, shape=[3])::f32[3]\n"
        "  %4 = const(1.0)::f32[]\n"
        "  out %1 y\n");
}

TEST_CASE("an identity that broadcasts x gives x broadcast") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  Var zeros = fill(b, 0.0, DType::f32, {3, 4});
  Var ones = b.constant(DType::f32, 1.0, {3, 1});
  b.output(b.add(x, zeros), "wide");
  b.output(b.mul(ones, x), "column");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  %2 = fill(value=0.0, dtype=f32, shape=[3,4])::f32[3,4]\n"
        "  %3 = const([1.0, 1.0, 1.0])::f32[3,1]\n"
        "  %4 = broadcast_to(%1; shape=[3,4])::f32[3,4]\n"
        "  %5 = reshape(%1; shape=[3,1])::f32[3,1]\n"
        "  out %4 wide\n"
        "  out %5 column\n");
}

TEST_CASE("x * 0 is 0 for integers only; 0 - x and constants that are not splats stay") {
  Builder b("t");
  Var i = b.input("i", i64({2}));
  Var x = b.input("x", f32({2}));
  Var i_zero = b.constant(DType::i64, 0.0);
  b.output(b.mul(i, i_zero), "i0");
  Var x_zero = b.constant(DType::f32, 0.0);
  b.output(b.mul(x, x_zero), "x0");
  b.output(b.sub(x_zero, x), "minus");
  Var mixed =
      b.constant({DType::f32, {2}}, std::vector<uint8_t>{0, 0, 128, 63, 0, 0, 0, 0});  // [1.0, 0.0]
  b.output(b.mul(x, mixed), "mixed");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::i64[2] i\n"
        "  in  %2::f32[2] x\n"
        "  %3 = const(0)::i64[]\n"
        "  %4 = fill(value=0.0, dtype=i64, shape=[2])::i64[2]\n"
        "  %5 = const(0.0)::f32[]\n"
        "  %6 = mul(%2, %5)::f32[2]\n"
        "  %7 = sub(%5, %2)::f32[2]\n"
        "  %8 = const([1.0, 0.0])::f32[2]\n"
        "  %9 = mul(%2, %8)::f32[2]\n"
        "  out %4 i0\n"
        "  out %6 x0\n"
        "  out %7 minus\n"
        "  out %9 mixed\n");
}

TEST_CASE("neg(neg(x)) and convert to x's own dtype are x") {
  Builder b("t");
  Var x = b.input("x", f32({2}));
  b.output(b.neg(b.neg(b.neg(b.neg(x)))), "four");
  b.output(b.convert(x, {.dtype = DType::f32}), "same");
  b.output(b.convert(x, {.dtype = DType::f64}), "wider");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[2] x\n"
        "  %2 = neg(%1)::f32[2]\n"
        "  %3 = neg(%1)::f32[2]\n"
        "  %4 = convert(%1; dtype=f64)::f64[2]\n"
        "  out %1 four\n"
        "  out %1 same\n"
        "  out %4 wider\n");
}

TEST_CASE("stop_gradient twice is once; one alone stays, as its gradient needs") {
  Builder b("t");
  Var x = b.input("x", f32({2}));
  b.output(b.stop_gradient(b.stop_gradient(x)), "twice");
  b.output(b.stop_gradient(x), "once");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[2] x\n"
        "  %2 = stop_gradient(%1)::f32[2]\n"
        "  %3 = stop_gradient(%1)::f32[2]\n"
        "  out %2 twice\n"
        "  out %3 once\n");
}

TEST_CASE("chains of reshapes collapse, and a reshape to x's shape is x") {
  Builder b("t");
  Var x = b.input("x", f32({2, 6}));
  Var r = b.reshape(b.reshape(b.reshape(x, {.shape = {3, 4}}), {.shape = {12}}), {.shape = {4, 3}});
  b.output(r, "r");
  b.output(b.reshape(b.reshape(x, {.shape = {12}}), {.shape = {2, 6}}), "back");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[2,6] x\n"
        "  %2 = reshape(%1; shape=[3,4])::f32[3,4]\n"
        "  %3 = reshape(%1; shape=[12])::f32[12]\n"
        "  %4 = reshape(%1; shape=[4,3])::f32[4,3]\n"
        "  %5 = reshape(%1; shape=[12])::f32[12]\n"
        "  out %4 r\n"
        "  out %1 back\n");
}

TEST_CASE("permutedims compose, and cancel") {
  Builder b("t");
  Var x = b.input("x", f32({2, 3, 4}));
  Attrs p{{"perm", Shape{2, 3, 1}}};
  Var once = b.call1(Prim::permutedims, {x}, p);             // [3,4,2]
  Var twice = b.call1(Prim::permutedims, {once}, p);         // [4,2,3]
  Var thrice = b.call1(Prim::permutedims, {twice}, p);       // x
  Var swap = b.permutedims(once, {.perm = Shape{2, 1, 3}});  // [4,3,2]
  b.output(thrice, "x");
  b.output(twice, "twice");
  b.output(swap, "swap");
  b.output(b.permutedims(x, {.perm = Shape{1, 2, 3}}), "identity");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[2,3,4] x\n"
        "  %2 = permutedims(%1; perm=[2,3,1])::f32[3,4,2]\n"
        "  %3 = permutedims(%1; perm=[3,1,2])::f32[4,2,3]\n"
        "  %4 = permutedims(%1; perm=[3,2,1])::f32[4,3,2]\n"
        "  out %1 x\n"
        "  out %3 twice\n"
        "  out %4 swap\n"
        "  out %1 identity\n");
}

TEST_CASE("a permutedims that only moves dims of size 1 is a reshape") {
  Builder b("t");
  Var x = b.input("x", f32({4, 1, 3, 1}));
  b.output(b.permutedims(x, {.perm = Shape{2, 1, 4, 3}}), "ones_moved");  // [1,4,1,3]
  b.output(b.permutedims(x, {.perm = Shape{3, 2, 1, 4}}), "swapped");     // [3,1,4,1]
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[4,1,3,1] x\n"
        "  %2 = reshape(%1; shape=[1,4,1,3])::f32[1,4,1,3]\n"
        "  %3 = permutedims(%1; perm=[3,2,1,4])::f32[3,1,4,1]\n"
        "  out %2 ones_moved\n"
        "  out %3 swapped\n");
}

TEST_CASE("broadcast_to: to x's shape is x, to as many elements a reshape, twice once") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  b.output(b.broadcast_to(x, {.shape = {3}}), "same");
  b.output(b.broadcast_to(x, {.shape = {3, 1}}), "column");
  b.output(b.broadcast_to(b.broadcast_to(x, {.shape = {3, 2}}), {.shape = {3, 2, 5}}), "twice");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3] x\n"
        "  %2 = reshape(%1; shape=[3,1])::f32[3,1]\n"
        "  %3 = broadcast_to(%1; shape=[3,2])::f32[3,2]\n"
        "  %4 = broadcast_to(%1; shape=[3,2,5])::f32[3,2,5]\n"
        "  out %1 same\n"
        "  out %2 column\n"
        "  out %4 twice\n");
}

TEST_CASE("a fill reshaped, permuted or broadcast is a fill of the new shape") {
  Builder b("t");
  Var zeros = fill(b, 0.0, DType::f32, {2, 3});
  b.output(b.broadcast_to(b.reshape(zeros, {.shape = {6, 1}}), {.shape = {6, 4}}), "z");
  b.output(b.permutedims(zeros, {.perm = Shape{2, 1}}), "t");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  %1 = fill(value=0.0, dtype=f32, shape=[2,3])::f32[2,3]\n"
        "  %2 = fill(value=0.0, dtype=f32, shape=[6,1])::f32[6,1]\n"
        "  %3 = fill(value=0.0, dtype=f32, shape=[6,4])::f32[6,4]\n"
        "  %4 = fill(value=0.0, dtype=f32, shape=[3,2])::f32[3,2]\n"
        "  out %3 z\n"
        "  out %4 t\n");
}

TEST_CASE("a splat constant reshaped or broadcast is a fill; other constants stay") {
  Builder b("t");
  Var seed = b.constant(DType::f32, 1.0);
  Var one = b.reshape(seed, {.shape = {1, 1}});
  b.output(b.broadcast_to(one, {.shape = {1000, 1}}), "ones");
  Var mixed = floats(b, {1.0, 2.0});
  b.output(b.broadcast_to(mixed, {.shape = {2, 3}}), "mixed");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  %1 = const(1.0)::f32[]\n"
        "  %2 = fill(value=1.0, dtype=f32, shape=[1,1])::f32[1,1]\n"
        "  %3 = fill(value=1.0, dtype=f32, shape=[1000,1])::f32[1000,1]\n"
        "  %4 = const([1.0, 2.0])::f32[2]\n"
        "  %5 = broadcast_to(%4; shape=[2,3])::f32[2,3]\n"
        "  out %3 ones\n"
        "  out %5 mixed\n");
}

TEST_CASE("a broadcast of a reshape in trailing dims of size 1 broadcasts the original") {
  Builder b("t");
  Var s = b.input("s", f32());
  Var v = b.input("v", f32({3}));
  Var m = b.input("m", f32({3, 1, 1}));
  b.output(b.broadcast_to(b.reshape(s, {.shape = {1}}), {.shape = {3}}), "scalar");
  b.output(b.broadcast_to(b.reshape(v, {.shape = {3, 1}}), {.shape = {3, 4}}), "column");
  b.output(b.broadcast_to(b.reshape(v, {.shape = {1, 3}}), {.shape = {2, 3}}),
           "row");  // not trailing: stays
  b.output(b.broadcast_to(b.reshape(m, {.shape = {3}}), {.shape = {3, 4}}),
           "higher");  // m's rank 3 > 2: stays
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[] s\n"
        "  in  %2::f32[3] v\n"
        "  in  %3::f32[3,1,1] m\n"
        "  %4 = reshape(%1; shape=[1])::f32[1]\n"
        "  %5 = broadcast_to(%1; shape=[3])::f32[3]\n"
        "  %6 = reshape(%2; shape=[3,1])::f32[3,1]\n"
        "  %7 = broadcast_to(%2; shape=[3,4])::f32[3,4]\n"
        "  %8 = reshape(%2; shape=[1,3])::f32[1,3]\n"
        "  %9 = broadcast_to(%8; shape=[2,3])::f32[2,3]\n"
        "  %10 = reshape(%3; shape=[3])::f32[3]\n"
        "  %11 = broadcast_to(%10; shape=[3,4])::f32[3,4]\n"
        "  out %5 scalar\n"
        "  out %7 column\n"
        "  out %9 row\n"
        "  out %11 higher\n");
}

TEST_CASE("reductions over no dims are x, over dims of size 1 a reshape") {
  Builder b("t");
  Var x = b.input("x", f32({3, 1, 1}));
  b.output(b.sum(x, {.dims = {}}), "none");
  b.output(b.sum(x, {.dims = {3, 2}}), "ones");
  b.output(b.maximum(x, {.dims = Shape{2}}), "max");
  b.output(b.minimum(x, {.dims = Shape{}}), "min");
  b.output(b.sum(x, {.dims = {1, 2}}), "real");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[3,1,1] x\n"
        "  %2 = reshape(%1; shape=[3])::f32[3]\n"
        "  %3 = reshape(%1; shape=[3,1])::f32[3,1]\n"
        "  %4 = sum(%1; dims=[1,2])::f32[1]\n"
        "  out %1 none\n"
        "  out %2 ones\n"
        "  out %3 max\n"
        "  out %1 min\n"
        "  out %4 real\n");
}

TEST_CASE("select with a splat condition, or the same value twice, is that value") {
  Builder b("t");
  Var c = b.input("c", {DType::boolean, {3}});
  Var x = b.input("x", f32({3}));
  Var y = b.input("y", f32({3}));
  Var yes = b.constant(DType::boolean, 1.0);
  Var no = fill(b, 0.0, DType::boolean, {3});
  b.output(b.select(yes, x, y), "x");
  b.output(b.select(no, x, y), "y");
  b.output(b.select(c, y, y), "same");
  b.output(b.select(c, x, y), "real");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::bool[3] c\n"
        "  in  %2::f32[3] x\n"
        "  in  %3::f32[3] y\n"
        "  %4 = const(true)::bool[]\n"
        "  %5 = fill(value=0.0, dtype=bool, shape=[3])::bool[3]\n"
        "  %6 = select(%1, %2, %3)::f32[3]\n"
        "  out %2 x\n"
        "  out %3 y\n"
        "  out %3 same\n"
        "  out %6 real\n");
}

// An i64 constant of shape `shape` holding `values`.
Var indices(Builder& b, Shape shape, const std::vector<int64_t>& values) {
  std::vector<uint8_t> bytes(values.size() * sizeof(int64_t));
  std::memcpy(bytes.data(), values.data(), bytes.size());
  return b.constant(i64(std::move(shape)), std::move(bytes));
}

TEST_CASE("a scatter_add through a self-inverse permutation is the same gather") {
  Builder b("t");
  Var y = b.input("y", f32({3, 4}));
  auto scatter = [&](Var idx) { return b.scatter_add(y, idx, {.dim = 2, .size = 4}); };
  b.output(scatter(indices(b, {1, 4}, {4, 3, 2, 1})), "reversed");
  b.output(scatter(indices(b, {1, 4}, {2, 1, 4, 3})), "swapped");
  b.output(scatter(indices(b, {1, 4}, {2, 3, 4, 1})), "cycle");       // its inverse differs
  b.output(scatter(indices(b, {1, 4}, {1, 1, 3, 4})), "duplicates");  // adds
  Tape t = b.finish();
  CHECK(after(simplify, t) ==
        "tape t\n"
        "  in  %1::f32[3,4] y\n"
        "  %2 = const([4, 3, 2, 1])::i64[1,4]\n"
        "  %3 = gather(%1, %2; dim=2)::f32[3,4]\n"
        "  %4 = const([2, 1, 4, 3])::i64[1,4]\n"
        "  %5 = gather(%1, %4; dim=2)::f32[3,4]\n"
        "  %6 = const([2, 3, 4, 1])::i64[1,4]\n"
        "  %7 = scatter_add(%1, %6; dim=2, size=4)::f32[3,4]\n"
        "  %8 = const([1, 1, 3, 4])::i64[1,4]\n"
        "  %9 = scatter_add(%1, %8; dim=2, size=4)::f32[3,4]\n"
        "  out %3 reversed\n"
        "  out %5 swapped\n"
        "  out %7 cycle\n"
        "  out %9 duplicates\n");
  // The same values run before and after (y has no -0.0, whose sign the scatter drops).
  TensorMap in = complete_inputs(t, {}, 5);
  std::vector<Tensor> want = Executor(t).run(in), got = Executor(*simplify(t).tape).run(in);
  for (size_t i = 0; i < want.size(); ++i) {
    CHECK(std::memcmp(want[i].raw(), got[i].raw(), static_cast<size_t>(want[i].bytes())) == 0);
  }
}

TEST_CASE("simplify leaves what only looks like an identity") {
  Builder b("t");
  Var x = b.input("x", f32({2}));
  Var nan = b.constant(DType::f32, std::numeric_limits<double>::quiet_NaN());
  Var one = b.constant(DType::f32, 1.0);
  Var zero = b.constant(DType::f32, 0.0);
  b.output(b.add(x, nan), "nan");
  b.output(b.div(one, x), "inverse");
  b.output(b.sub(x, one), "minus_one");
  b.output(b.max(x, zero), "max");
  CHECK(after(simplify, b.finish()) == "unchanged");
}

TEST_CASE("simplify keeps the location of the op it rewrites into a new one") {
  Builder b("t");
  Var x = b.input("x", f32({4}));
  b.set_loc({b.intern_file("m.jl"), 5});
  Var r = b.reshape(x, {.shape = {2, 2}});
  b.set_loc({b.intern_file("m.jl"), 6});
  b.output(b.reshape(r, {.shape = {1, 4}}), "y");
  CHECK(after(simplify, b.finish()) ==
        "tape t\n"
        "  in  %1::f32[4] x\n"
        "  %2 = reshape(%1; shape=[2,2])::f32[2,2]  # m.jl:5\n"
        "  %3 = reshape(%1; shape=[1,4])::f32[1,4]  # m.jl:6\n"
        "  out %3 y\n");
}

}  // namespace ytape::passes_test
