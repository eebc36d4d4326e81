// Fusion: which groups of ops the executor runs as one kernel, and that a fused run gives
// the bytes of the unfused one.
#include "runtime/fusion.h"

#include <doctest/doctest.h>

#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/plan_print.h"
#include "tape/builder.h"

namespace ytape {

namespace {

// A residual block's patterns, forward and backward, plus near misses of the patterns:
//   r = relu(bn(x)), q = relu(r + x): batchnorm+relu, add+relu;
//   dx = bn_backward(select(q > 0, g, 0), ...): the relu mask folded into batch norm;
//   d2 = select(r > 0, g, 0), read twice by d2 + d2: an elementwise group of the three;
//   relu(y2) where y2 is also an output: none;
//   gt against 0.5, select of -0: no relu mask, but elementwise groups of two.
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

// Adam's update of one weight w with gradient g, as the prelude traces it: the moments m
// and v, then w, each an output; lr and the β powers are scalars. An intermediate result
// is also an output, which the group writes besides.
Tape adam(DType dtype, const Shape& shape) {
  Builder b("adam");
  Var w = b.input("w", {dtype, shape});
  Var g = b.input("g", {dtype, shape});
  Var m = b.input("m", {dtype, shape});
  Var v = b.input("v", {dtype, shape});
  Var lr = b.input("lr", {dtype, {}});
  Var b1t = b.input("b1t", {dtype, {}}), b2t = b.input("b2t", {dtype, {}});
  Var b1 = b.constant(dtype, 0.9), b2 = b.constant(dtype, 0.999), one = b.constant(dtype, 1.0);
  Var m2 = b.add(b.mul(b1, m), b.mul(b.sub(one, b1), g));
  Var v2 = b.add(b.mul(b2, v), b.mul(b.sub(one, b2), b.mul(g, g)));
  Var mhat = b.div(m2, b.sub(one, b1t));
  Var denominator = b.add(b.sqrt(b.div(v2, b.sub(one, b2t))), b.constant(dtype, 1e-8));
  Var step = b.mul(b.div(mhat, denominator), lr);
  b.output(m2, "m");
  b.output(v2, "v");
  b.output(b.sub(w, b.add(step, b.mul(b.constant(dtype, 1e-4), w))), "w");
  b.output(mhat, "mhat");
  return b.finish();
}

// Whether a run with fusion gives the bytes of a run of the same kernels unfused and of a
// run of the reference kernels, on inputs made up from `seed`.
bool fused_as_reference(const Tape& t, uint64_t seed) {
  TensorMap inputs = complete_inputs(t, {}, seed);
  ExecutorOptions unfused, reference;
  unfused.fusion = false;
  reference.kernels = KernelSet::reference;
  Executor fused(t), plain(t, unfused), naive(t, reference);
  std::vector<Tensor> got = fused.run(inputs);
  return same_bits(got, plain.run(inputs)) && same_bits(got, naive.run(inputs));
}

// x_n = sin(x_(n-1)) from x_0 = x of shape [16], and the gradient of sum(x_n) as the grad
// stage writes it: g_n = 1, g_(k-1) = g_k * cos(x_(k-1)), the output g_0. Each x_k but the
// last is read by a sin and a cos, so that the forward ops are single steps and the
// backward ones one chain that reads a new argument every two ops.
Tape sin_chain_gradient(int64_t n) {
  Builder b("chain");
  Var x = b.input("x", {DType::f32, {16}});
  std::vector<Var> xs{x};
  for (int64_t k = 0; k < n; ++k) xs.push_back(b.sin(xs.back()));
  b.output(b.sum(xs.back(), {.dims = {1}}), "y");
  Var g = b.constant(DType::f32, 1.0, {16});
  for (int64_t k = n; k-- > 0;) g = b.mul(g, b.cos(xs[static_cast<size_t>(k)]));
  b.output(g, "dx");
  return b.finish();
}

// A sum of 2^depth terms sin(x), cos(x), tanh(x), ... as a balanced tree of adds written
// depth first: evaluated in tape order it holds one partial sum per level at once.
Var tree(Builder& b, Var x, int depth, int& leaf) {
  if (depth == 0) {
    const Prim prims[] = {Prim::sin, Prim::cos, Prim::tanh};
    return b.call1(prims[leaf++ % 3], {x});
  }
  Var left = tree(b, x, depth - 1, leaf);
  return b.add(left, tree(b, x, depth - 1, leaf));
}

// Every group within the kernel's limits, and the ops fused in all.
size_t fused_ops(const std::vector<FusedGroup>& groups) {
  size_t ops = 0;
  for (const FusedGroup& g : groups) {
    CHECK(g.program.slots <= ElementwiseProgram::kMaxSlots);
    CHECK(g.args.size() <= ElementwiseProgram::kMaxArgs);
    CHECK(g.outs.size() <= 1 + ElementwiseProgram::kMaxOutputs);
    ops += g.others.size() + 1;
  }
  return ops;
}

// LayerNorm's tail and a masked bias, over x of `shape` (D, T, B): ((x - mean) / std) * γ
// + β, where mean and std have one value per column (1, T, B), γ and β one per row (D), and
// select(mask, that, x * w) with a bool mask of one value per (1, T) and w per (D, 1, B).
Tape layer_norm_tail(DType dtype, const Shape& shape) {
  Builder b("norm");
  const int64_t d = shape[0], t = shape[1], n = shape[2];
  Var x = b.input("x", {dtype, shape});
  Var mean = b.input("mean", {dtype, {1, t, n}});
  Var std = b.input("std", {dtype, {1, t, n}});
  Var scale = b.input("scale", {dtype, {d}});
  Var bias = b.input("bias", {dtype, {d}});
  Var mask = b.input("mask", {DType::boolean, {1, t}});
  Var w = b.input("w", {dtype, {d, 1, n}});
  Var y = b.add(b.mul(b.div(b.sub(x, mean), std), scale), bias);
  b.output(b.select(mask, y, b.mul(x, w)), "y");
  return b.finish();
}

}  // namespace

TEST_CASE("an optimizer's update runs as one elementwise group, with the bytes of its ops") {
  // Shapes under a block, over several blocks, and over the threads' grain.
  for (const Shape& shape : {Shape{37, 5}, Shape{1100}, Shape{40000}}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape[0]);
      CAPTURE(dtype_name(dtype));
      Tape t = adam(dtype, shape);
      std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
      // m: mul, mul, add; v: mul, mul, mul, add; mhat: div; w: div, sqrt, add, div, mul,
      // mul, add, sub. m, v and mhat, outputs, are written besides w; 1 - 0.9 is one on
      // single elements.
      REQUIRE(groups.size() == 1);
      CHECK(groups[0].kind == Fusion::elementwise);
      CHECK(groups[0].program.instructions.size() == 16);
      CHECK(groups[0].outs.size() == 4);
      TensorMap inputs = complete_inputs(t, {}, 5);
      ExecutorOptions unfused;
      unfused.fusion = false;
      ExecutorOptions reference;
      reference.kernels = KernelSet::reference;
      Executor fused(t), plain(t, unfused), naive(t, reference);
      std::vector<Tensor> want = naive.run(inputs);
      CHECK(same_bits(fused.run(inputs), want));
      CHECK(same_bits(plain.run(inputs), want));
      CHECK(same_bits(fused.run(inputs), want));  // a second run, its slots reused
    }
  }
}

TEST_CASE("elementwise groups take bool and i64 results and broadcast single elements") {
  // select(i < j, a * 2, -a) + 1 over i64 indices and floats, and the i64 sum i * j + 3.
  Builder b("mixed");
  Shape shape{700};
  Var i = b.input("i", {DType::i64, shape});
  Var j = b.input("j", {DType::i64, shape});
  Var a = b.input("a", {DType::f32, shape});
  Var two = b.constant(DType::f32, 2.0);
  b.output(b.add(b.select(b.lt(i, j), b.mul(a, two), b.neg(a)), b.constant(DType::f32, 1.0)), "y");
  b.output(b.add(b.mul(i, j), b.constant(DType::i64, 3.0)), "k");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].program.instructions.size() == 5);
  CHECK(groups[1].program.instructions.size() == 2);
  CHECK(fused_as_reference(t, 9));
}

TEST_CASE("erf and the roundings fuse, with the bytes of the unfused kernels") {
  // round(floor(3x) - ceil(x) + erf(x) * 2.5): one group of eight ops, in both float types.
  for (DType d : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(d));
    Builder b("rounding");
    Var x = b.input("x", {d, {1500}});
    Var f = b.floor(b.mul(x, b.constant(d, 3.0)));
    Var e = b.mul(b.erf(x), b.constant(d, 2.5));
    b.output(b.round(b.add(b.sub(f, b.ceil(x)), e)), "y");
    Tape t = b.finish();
    std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].program.instructions.size() == 8);
    CHECK(fused_as_reference(t, 4));
  }
}

TEST_CASE("asin, acos and atan fuse, with the bytes of the unfused kernels") {
  // atan(x) + asin(tanh(x)) * acos(tanh(x) / 2): one group of seven ops, in both float types.
  for (DType d : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(d));
    Builder b("inverse_trig");
    Var x = b.input("x", {d, {1500}});
    Var t = b.tanh(x);
    Var a = b.mul(b.asin(t), b.acos(b.div(t, b.constant(d, 2.0))));
    b.output(b.add(b.atan(x), a), "y");
    Tape tape = b.finish();
    std::vector<FusedGroup> groups = find_fusions(tape, kernel_table(KernelSet::fast));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].program.instructions.size() == 7);
    CHECK(fused_as_reference(tape, 5));
  }
}

TEST_CASE("rem fuses, with the bytes of the unfused kernel") {
  // rem(3x, y) * x + rem(x, 0.7): one group of five ops, in both float types.
  for (DType d : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(d));
    Builder b("remainders");
    Var x = b.input("x", {d, {1500}});
    Var y = b.input("y", {d, {1500}});
    Var r = b.mul(b.rem(b.mul(x, b.constant(d, 3.0)), y), x);
    b.output(b.add(r, b.rem(x, b.constant(d, 0.7))), "z");
    Tape tape = b.finish();
    std::vector<FusedGroup> groups = find_fusions(tape, kernel_table(KernelSet::fast));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].program.instructions.size() == 5);
    CHECK(fused_as_reference(tape, 6));
  }
}

TEST_CASE("fusion finds the residual block's groups and leaves the near misses") {
  Tape t = block(DType::f32);
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  std::vector<Fusion> kinds;
  for (const FusedGroup& g : groups) kinds.push_back(g.kind);
  CHECK(kinds == std::vector<Fusion>{Fusion::batchnorm_relu, Fusion::add_relu,
                                     Fusion::relu_mask_batchnorm_backward, Fusion::elementwise,
                                     Fusion::elementwise, Fusion::elementwise});
  // d2 + d2: gt, select, add; the mask is a bool block in a slot, d2 a float one.
  const FusedGroup& twice = groups[3];
  CHECK(twice.others.size() == 2);
  CHECK(twice.program.instructions.size() == 3);
  CHECK(twice.program.slots == 2);
  CHECK(twice.args.size() == 3);  // r, 0, g
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
      CHECK(a.plan().steps.size() + 8 ==
            b.plan().steps.size());  // 6 groups take 8 ops more than their own
      CHECK(same_bits(a.run(inputs), b.run(inputs)));
    }
  }
}

TEST_CASE("a batch norm whose statistics are read before its relu runs fused where it is") {
  // A running mean computed from the statistics between the batch norm and its relu (as
  // the prelude's BatchNorm does) reads them after the fused group, which runs at the
  // batch norm: the relu reads nothing else.
  Builder b("stats");
  Var x = b.input("x", {DType::f32, {5, 4, 32, 2}});
  Var scale = b.input("scale", {DType::f32, {32}});
  Var bias = b.input("bias", {DType::f32, {32}});
  std::vector<Var> bn = b.batchnorm_with_stats(x, scale, bias);
  b.output(b.mul(bn[1], b.constant(DType::f32, 0.1)), "running_mean");
  b.output(b.relu(bn[0]), "y");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].kind == Fusion::batchnorm_relu);
  CHECK(t.ops[groups[0].at].prim == Prim::batchnorm_with_stats);
  std::vector<PlannedStep> plan = planned_steps(Executor(t).plan());
  REQUIRE(plan.size() == 2);
  CHECK(plan[0].name == "batchnorm+relu");
  CHECK(plan[1].op->prim == Prim::mul);
  TensorMap inputs = complete_inputs(t, {}, 3);
  ExecutorOptions unfused;
  unfused.fusion = false;
  Executor fused(t), plain(t, unfused);
  CHECK(same_bits(fused.run(inputs), plain.run(inputs)));
}

TEST_CASE("a long chain is one group, as a short one") {
  for (int64_t n : {5, 20000}) {
    CAPTURE(n);
    Builder b("chain");
    Var x = b.input("x", {DType::f32, {700}});
    for (int64_t k = 0; k < n; ++k) x = b.sin(x);
    b.output(b.sum(x, {.dims = {1}}), "y");
    Tape t = b.finish();
    std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].program.instructions.size() == static_cast<size_t>(n));
    CHECK(groups[0].program.slots == 2);  // a result never overwrites its argument
    CHECK(fused_as_reference(t, 2));
  }
}

TEST_CASE("a long chain's gradient is a series of groups, each within the kernel's limits") {
  // The forward sines, each read by a cosine of the backward too, are groups of nine: the
  // last one's result and eight more written (kMaxOutputs). A short backward is one group,
  // as it always was; a long one reads more arguments than a step can have, and each group
  // takes as many as fit, from the end.
  Tape short_chain = sin_chain_gradient(10);
  std::vector<FusedGroup> groups = find_fusions(short_chain, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].program.instructions.size() == 9);  // x_2 ... x_10; x_1 a step of its own
  CHECK(groups[0].outs.size() == 1 + ElementwiseProgram::kMaxOutputs);
  CHECK(groups[0].program.slots == 0);  // every result is an output
  CHECK(groups[1].program.instructions.size() == 20);
  CHECK(groups[1].args.size() == 11);  // x_0 ... x_9 and the constant
  CHECK(fused_as_reference(short_chain, 3));
  const int64_t n = 3000;
  Tape t = sin_chain_gradient(n);
  groups = find_fusions(t, kernel_table(KernelSet::fast));
  CHECK(fused_ops(groups) == 3 * n);  // every sin, cos and mul
  const size_t forward = (n + 8) / 9;
  REQUIRE(groups.size() == forward + (2 * n + 61) / 62);
  for (size_t i = forward + 1; i < groups.size(); ++i) {
    CHECK(groups[i].args.size() == ElementwiseProgram::kMaxArgs);  // the earlier g and 31 x
    CHECK(groups[i].program.slots == 3);                           // g, cos(x_k), and their product
  }
  CHECK(fused_as_reference(t, 3));
}

TEST_CASE("a group that would hold more results at once than the kernel has slots is split") {
  // Depth 9 holds 9 partial sums and a leaf at once, two more than the kernel's 8 slots.
  Builder b("tree");
  Var x = b.input("x", {DType::f64, {600}});
  int leaves = 0;
  b.output(tree(b, x, 9, leaves), "y");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  CHECK(fused_ops(groups) == 1023);  // 512 leaves and 511 adds
  CHECK(groups.size() > 1);
  CHECK(groups.back().program.slots == ElementwiseProgram::kMaxSlots);
  CHECK(fused_as_reference(t, 4));
}

TEST_CASE("elementwise groups take arguments that broadcast, with the bytes of the unfused ops") {
  // Rows that a block of 512 elements cuts anywhere; more elements than a thread's grain;
  // rows of 128, which the blocks hold whole (a vector per row the same in every block);
  // rows of 600, most blocks within one (a value per row read in place).
  for (const Shape& shape : {Shape{37, 5, 3}, Shape{37, 50, 3}, Shape{130, 300, 2},
                             Shape{128, 20, 3}, Shape{600, 7, 2}}) {
    for (DType dtype : {DType::f32, DType::f64}) {
      CAPTURE(shape[1]);
      CAPTURE(dtype_name(dtype));
      Tape t = layer_norm_tail(dtype, shape);
      std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
      REQUIRE(groups.size() == 1);
      CHECK(groups[0].program.instructions.size() == 6);
      CHECK(groups[0].args.size() == 7);  // x, mean, std, scale, bias, mask, w
      CHECK(fused_as_reference(t, 8));
    }
  }
}

TEST_CASE("a group of more broadcast arguments than the kernel gathers is split") {
  // x * v1 * ... * v10, each v of one value per row: at most kMaxGathered in a group.
  Builder b("many");
  Var y = b.input("x", {DType::f32, {40, 30}});
  std::vector<Var> vs;
  for (int k = 0; k < 10; ++k) vs.push_back(b.input("v" + std::to_string(k), {DType::f32, {40}}));
  for (Var v : vs) y = b.mul(y, v);
  b.output(y, "y");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 2);
  CHECK(groups[0].program.instructions.size() == 2);
  CHECK(groups[1].program.instructions.size() == ElementwiseProgram::kMaxGathered);
  CHECK(fused_as_reference(t, 5));
}

TEST_CASE("a group on a blocked image reads its per-channel arguments plain") {
  // a = conv(x) + bias; relu(a) * scale + conv(x), and conv(a) after it: the convolution
  // writes blocked, and the group after it stays blocked, its (1, 1, C, 1) vectors gathered
  // in the blocks' order, a written blocked besides for the second convolution.
  Builder b("channels");
  Var x = b.input("x", {DType::f32, {9, 7, 16, 2}});
  Var w = b.input("w", {DType::f32, {3, 3, 16, 32}});
  Var bias = b.input("bias", {DType::f32, {1, 1, 32, 1}});
  Var scale = b.input("scale", {DType::f32, {1, 1, 32, 1}});
  Var w2 = b.input("w2", {DType::f32, {3, 3, 32, 16}});
  Var y = b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}});
  Var a = b.add(y, bias);
  b.output(b.add(b.mul(b.relu(a), scale), y), "z");
  b.output(b.conv2d(a, w2), "c");
  Tape t = b.finish();
  Executor fused(t);
  std::vector<PlannedStep> plan = planned_steps(fused.plan());
  REQUIRE(plan.size() == 3);
  CHECK(plan[1].name == "elementwise");
  CHECK(plan[1].outs.size() == 2);
  CHECK(is_blocked(plan[1].writes[0]));
  CHECK(is_blocked(plan[1].writes[1]));
  CHECK(is_blocked(plan[1].reads[0]));
  CHECK(plan[1].reorders.empty());
  CHECK(plan[2].reorders.empty());
  TensorMap inputs = complete_inputs(t, {}, 4);
  ExecutorOptions unfused, plain;
  unfused.fusion = false;
  plain.blocked_layouts = false;
  std::vector<Tensor> want = Executor(t, unfused).run(inputs);
  CHECK(same_bits(fused.run(inputs), want));
  CHECK(same_bits(Executor(t, plain).run(inputs), want));
}

TEST_CASE("a group writes the results that later ops read too, not those read before it runs") {
  // LayerNorm's forward: c = x - mean is read by c * c, whose sum comes before the tail
  // ((c / std) * γ + β) reads c: the group of c * c takes c and writes it too; the tail's
  // group cannot take c (the sum would read c * c before the tail runs).
  Builder b("norm");
  const Shape shape{37, 50, 3};
  Var x = b.input("x", {DType::f32, shape});
  Var mean = b.input("mean", {DType::f32, {1, 50, 3}});
  Var scale = b.input("scale", {DType::f32, {37}});
  Var bias = b.input("bias", {DType::f32, {37}});
  Var c = b.sub(x, mean);
  Var sum = b.reshape(b.sum(b.mul(c, c), {.dims = {1}}), {.shape = {1, 50, 3}});
  Var variance = b.div(sum, b.constant(DType::f32, 37.0));
  Var std = b.sqrt(b.add(variance, b.constant(DType::f32, 1e-5)));
  b.output(b.add(b.mul(b.div(c, std), scale), bias), "y");
  b.output(c, "c");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 3);
  CHECK(groups[0].program.instructions.size() == 2);  // sub, mul
  CHECK(groups[0].outs == VarList{t.ops[groups[0].at].outs[0], c});
  CHECK(groups[1].program.instructions.size() == 3);  // div, add, sqrt of the statistics
  CHECK(groups[2].program.instructions.size() == 3);  // div, mul, add
  CHECK(groups[2].outs.size() == 1);
  CHECK(fused_as_reference(t, 6));
}

TEST_CASE("a group needed only for a result it writes besides runs with all it reads") {
  // c = x * x + x * sin(x), which nothing reads; x * x is summed after it. The group of
  // c writes x * x too, so it runs; so does the group of sin(x) * x, read by a sum that
  // nothing reads, for the sin(x) it writes, which c's group reads.
  Builder b("dead");
  Var x = b.input("x", {DType::f64, {3}});
  Var s = b.sin(x);
  b.sum(b.mul(s, x));
  Var square = b.mul(x, x);
  b.add(square, b.mul(x, s));
  b.output(b.sum(square), "y");
  Tape t = b.finish();
  std::vector<PlannedStep> plan = planned_steps(Executor(t).plan());
  REQUIRE(plan.size() == 3);
  CHECK(plan[0].name == "elementwise");
  CHECK(plan[0].outs == VarList{t.ops[2].outs[0], s});
  CHECK(plan[1].name == "elementwise");
  CHECK(plan[2].name == "sum");
  CHECK(fused_as_reference(t, 1));
}

TEST_CASE("broadcast_to joins an elementwise group, which reads its argument") {
  // (x - b) * b + 1 with b = broadcast_to(m), m of one value per column: one group of four
  // ops that reads x and m, in both float types.
  for (DType d : {DType::f32, DType::f64}) {
    CAPTURE(dtype_name(d));
    Builder b("broadcast");
    Var x = b.input("x", {d, {37, 50, 3}});
    Var m = b.input("m", {d, {1, 50, 3}});
    Var one = b.constant(d, 1.0);
    Var wide = b.broadcast_to(m, {.shape = Shape{37, 50, 3}});
    b.output(b.add(b.mul(b.sub(x, wide), wide), one), "y");
    Tape t = b.finish();
    std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
    REQUIRE(groups.size() == 1);
    CHECK(groups[0].program.instructions.size() == 4);
    CHECK(groups[0].args == VarList{m, x, one});
    CHECK(fused_as_reference(t, 2));
  }
  // A single element broadcast, and a value per column of 600 rows, which most blocks
  // read as one value.
  Builder b("single");
  Var x = b.input("x", {DType::f32, {600, 4}});
  Var s = b.input("s", {DType::f32, {}});
  Var c = b.input("c", {DType::f32, {1, 4}});
  Var y = b.mul(b.broadcast_to(s, {.shape = Shape{600, 4}}), x);
  b.output(b.sub(y, b.broadcast_to(c, {.shape = Shape{600, 4}})), "y");
  Tape t = b.finish();
  std::vector<FusedGroup> groups = find_fusions(t, kernel_table(KernelSet::fast));
  REQUIRE(groups.size() == 1);
  CHECK(groups[0].program.instructions.size() == 4);
  CHECK(fused_as_reference(t, 3));
}

TEST_CASE(
    "a group's outputs are written over the inputs they replace where no later op reads those") {
  // Adam's group writes m, v and w (outputs 0, 1, 2) over the inputs m, v and w (2, 3, 0),
  // as a training loop carries them: the bytes of a run that donates nothing.
  Tape t = adam(DType::f32, {1100});
  ExecutorOptions carry;
  carry.donate = {{0, 2}, {1, 3}, {2, 0}};  // m, v, w
  Executor donating(t, carry), plain(t);
  CHECK(donating.plan().donations.size() == 3);
  TensorMap given = complete_inputs(t, {}, 7);
  TensorMap copy;
  for (const auto& [name, tensor] : given) copy.emplace_back(name, tensor.clone());
  std::vector<Tensor> want = plain.run(given);
  REQUIRE(copy[2].first == "m");
  const void* m = copy[2].second.raw();
  std::vector<Tensor> got = donating.run(copy);
  CHECK(got[0].raw() == m);
  CHECK(same_bits(got, want));
  // a = 2x replaces x, but x is read again after a is written (a + x): refused.
  Builder b("late");
  Var x = b.input("x", {DType::f32, {700}});
  Var a = b.mul(x, b.constant(DType::f32, 2.0));
  b.output(a, "out.x");
  b.output(b.add(a, x), "y");
  Tape late = b.finish();
  ExecutorOptions replace;
  replace.donate = {{0, 0}};
  Executor refused(late, replace);
  REQUIRE(planned_steps(refused.plan()).size() == 1);
  CHECK(refused.plan().donations.empty());
}

}  // namespace ytape
