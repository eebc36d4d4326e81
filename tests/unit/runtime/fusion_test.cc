// Fusion: which groups of ops the executor runs as one kernel, and that a fused run gives
// the bytes of the unfused one.
#include "runtime/fusion.h"

#include <doctest/doctest.h>

#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "tape/builder.h"

namespace ytape {

namespace {

// A residual block's patterns, forward and backward, plus near misses that must not fuse:
//   r = relu(bn(x)), q = relu(r + x): batchnorm+relu, add+relu;
//   dx = bn_backward(select(q > 0, g, 0), ...): the relu mask folded into batch norm;
//   d2 = select(r > 0, g, 0), read twice: relu_backward alone;
//   relu(y2) where y2 is also an output; gt against 0.5; select of -0: none.
Tape block(DType dtype) {
  Builder b("block");
  Shape image{5, 4, 32, 2};
  Var x = b.input("x", {dtype, image});
  Var g = b.input("g", {dtype, image});
  Var scale = b.input("scale", {dtype, {32}});
  Var bias = b.input("bias", {dtype, {32}});
  Var zero = b.constant(dtype, 0.0);
  std::vector<Var> bn = b.batchnorm_with_stats(x, scale, bias);
  Var r = b.relu(bn[0]);
  Var q = b.relu(b.add(r, x));
  Var masked = b.select(b.gt(q, zero), g, zero);
  std::vector<Var> back = b.batchnorm_backward(masked, x, scale, bn[1], bn[2]);
  Var d2 = b.select(b.gt(r, zero), g, zero);
  b.output(back[0], "dx");
  b.output(back[1], "dscale");
  b.output(b.add(d2, d2), "d2");
  Var y2 = b.batchnorm(g, scale, bias);
  b.output(y2, "y2");
  b.output(b.relu(y2), "relu_y2");
  b.output(b.select(b.gt(g, b.constant(dtype, 0.5)), x, zero), "half");
  b.output(b.select(b.gt(g, zero), x, b.constant(dtype, -0.0)), "negative_zero");
  return b.finish();
}

}  // namespace

TEST_CASE("fusion finds the residual block's groups and leaves the near misses") {
  Tape t = block(DType::f32);
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  std::vector<Fusion> kinds;
  for (const FusedGroup& g : groups) kinds.push_back(g.kind);
  CHECK(kinds == std::vector<Fusion>{Fusion::batchnorm_relu, Fusion::add_relu,
                                     Fusion::relu_mask_batchnorm_backward, Fusion::relu_backward});
  // The masked backward reads g and the relu's output instead of the select's.
  const FusedGroup& masked = groups[2];
  CHECK(masked.args.size() == 6);
  CHECK(masked.op->prim == Prim::batchnorm_backward);
  CHECK(masked.others.size() == 2);
  // The reference kernels have no fused ones.
  CHECK(find_fusions(t, kernel_table(KernelSet::reference)).empty());
}

TEST_CASE("fused runs give the bytes of unfused runs, in both layouts and float types") {
  for (DType dtype : {DType::f32, DType::f64}) {
    for (bool blocked : {true, false}) {
      CAPTURE(dtype_name(dtype));
      CAPTURE(blocked);
      Tape t = block(dtype);
      TensorMap inputs = complete_inputs(t, {}, 3);
      ExecutorOptions fused, unfused;
      fused.blocked_layouts = unfused.blocked_layouts = blocked;
      unfused.fusion = false;
      Executor a(t, fused), b(t, unfused);
      CHECK(a.plan().size() + 5 == b.plan().size());  // 4 groups take 5 ops more than their own
      CHECK(same_bits(a.run(inputs), b.run(inputs)));
    }
  }
}

TEST_CASE("a batch norm whose statistics are read before its relu is not fused with it") {
  // A running mean computed from the statistics between the batch norm and its relu (as
  // the prelude's BatchNorm does) must not read them before a fused group at the relu
  // would write them.
  Builder b("stats");
  Var x = b.input("x", {DType::f32, {5, 4, 32, 2}});
  Var scale = b.input("scale", {DType::f32, {32}});
  Var bias = b.input("bias", {DType::f32, {32}});
  std::vector<Var> bn = b.batchnorm_with_stats(x, scale, bias);
  b.output(b.mul(bn[1], b.constant(DType::f32, 0.1)), "running_mean");
  b.output(b.relu(bn[0]), "y");
  Tape t = b.finish();
  CHECK(find_fusions(t, kernel_table(KernelSet::fast)).empty());
  TensorMap inputs = complete_inputs(t, {}, 3);
  ExecutorOptions unfused;
  unfused.fusion = false;
  Executor fused(t), plain(t, unfused);
  CHECK(same_bits(fused.run(inputs), plain.run(inputs)));
}

}  // namespace ytape
