// The cost model counts what the kernels do: a pooling window's reach beyond the image
// costs nothing, so no attribute makes `ytape stats` report a fraction of the real work
// (issue #42: a window of 2^30 over 4 columns was counted as 65 kFLOP and ran for hours
// before the kernels learned to skip the padding; now both count the image alone).
#include "tape/cost.h"

#include <doctest/doctest.h>

#include "tape/builder.h"

namespace ytape {

namespace {

constexpr int64_t k2to30 = int64_t{1} << 30;

// One pooling op of `prim` on x of `shape` and its FLOPs.
double pool_flops(Prim prim, const Shape& shape, const AttrsOf<Prim::max_pool2d>& a) {
  Builder b("pool");
  Var x = b.input("x", {DType::f32, shape});
  Attrs attrs{{"window", a.window}, {"stride", a.stride}, {"pad", a.pad}};
  std::vector<Var> y = b.call(prim, {x}, attrs);
  b.output(y[0], "y");
  Tape t = b.finish();
  return op_flops(t, t.ops.back());
}

}  // namespace

TEST_CASE("pooling costs one operation per element of x that a window reads") {
  // 2x2 windows at stride 2 over 4x4: each of 4 windows reads 4 elements, per plane.
  CHECK(pool_flops(Prim::max_pool2d, {4, 4, 3, 2}, {.window = {2, 2}, .stride = {2, 2}}) ==
        4 * 4 * 6);
  // Padded by 1: windows at -1, 1, 3 read 1, 2, 1 columns (and rows).
  CHECK(pool_flops(Prim::avg_pool2d, {4, 4, 1, 1},
                   {.window = {2, 2}, .stride = {2, 2}, .pad = {1, 1, 1, 1}}) == 4 * 4);
  // A window of 2^30 columns padded by 2^30 - 1 over 4: output column j reads j of them,
  // 10 in all per row, on 4 rows of 4096 planes; not 2^30 per output.
  for (Prim p : {Prim::max_pool2d, Prim::max_pool2d_with_indices, Prim::avg_pool2d}) {
    CAPTURE(prim_name(p));
    CHECK(pool_flops(p, {4, 4, 64, 64},
                     {.window = {k2to30, 1}, .stride = {1, 1}, .pad = {k2to30 - 1, 0, 0, 0}}) ==
          10 * 4 * 4096);
  }
}

TEST_CASE("pooling gradients cost their windows' reads and the zeroing of dx") {
  Builder b("grads");
  Var dy = b.input("dy", {DType::f32, {4, 4, 64, 64}});
  Var idx = b.input("idx", {DType::i64, {4, 4, 64, 64}});
  Shape x{4, 4, 64, 64};
  Var avg = b.avg_pool2d_backward(
      dy, {.shape = x, .window = {k2to30, 1}, .stride = {1, 1}, .pad = {k2to30 - 1, 0, 0, 0}});
  Var max = b.max_pool2d_backward(dy, idx, {.shape = x});
  b.output(avg, "avg");
  b.output(max, "max");
  Tape t = b.finish();
  CHECK(op_flops(t, t.ops[2]) == 65536 + 10 * 4 * 4096);
  CHECK(op_flops(t, t.ops[3]) == 65536 + 65536);
}

TEST_CASE("a convolution costs its multiply-adds, padding taps included, as its kernels do") {
  Builder b("conv");
  Var x = b.input("x", {DType::f32, {5, 5, 3, 1}});
  Var w = b.input("w", {DType::f32, {3, 3, 3, 8}});
  b.output(b.conv2d(x, w, {.pad = {1, 1, 1, 1}}), "y");
  Tape t = b.finish();
  CHECK(op_flops(t, t.ops.back()) == 2.0 * (5 * 5 * 8) * (3 * 3 * 3));
}

TEST_CASE("a reduction costs one operation per element it reads, not per result") {
  // A sum of 1000 x 300 over its first dim reads 300,000 elements into 300 results.
  Builder b("sum");
  Var x = b.input("x", {DType::f32, {1000, 300}});
  b.output(b.sum(x, {.dims = {1}}), "s");
  b.output(b.argmax(x, {.dim = 2}), "i");
  b.output(b.maximum(x, {.dims = {1, 2}}), "m");
  Tape t = b.finish();
  for (size_t i = 1; i < t.ops.size(); ++i) {
    CAPTURE(prim_name(t.ops[i].prim));
    CHECK(op_flops(t, t.ops[i]) == 300000);
  }
}

}  // namespace ytape
