// Batching (grad/vmap.h): a tape over a batch computes, in slice b of each batched output,
// what the tape computes on the inputs' slices b, for every family's rule; values that
// depend on no batched input stay unbatched; ops without a rule are named.
#include "grad/vmap.h"

#include <doctest/doctest.h>

#include <cstring>
#include <string>
#include <vector>

#include "grad/grad.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "samples/cpp/models.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"
#include "unit/runtime/kernel_harness.h"

namespace ytape::grad {

namespace {

using testing::check_close;

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

// Slice b of a batched tensor: its last dim dropped.
Tensor slice(const Tensor& t, int64_t b) {
  Shape shape = t.shape();
  int64_t n = shape.back();
  shape.pop_back();
  Type type{t.type().dtype, shape};
  int64_t bytes = t.bytes() / n;
  return Tensor::of_bytes(
      type, {static_cast<const uint8_t*>(t.raw()) + b * bytes, static_cast<size_t>(bytes)});
}

// vmap(t) over `over` at `n`, run once on batched inputs, against t run on each slice.
void check_vmap(const Tape& t, const std::vector<std::string>& over, int64_t n, double tol = 1e-5) {
  Tape v = vmap(t, {over, n});
  validate(v);
  TensorMap batched = complete_inputs(v, {}, 11);
  std::vector<Tensor> got = Executor(v).run(batched);
  Executor single(t);
  for (int64_t b = 0; b < n; ++b) {
    TensorMap inputs;
    for (const auto& [name, whole] : batched) {
      bool chosen = false;
      for (size_t i = 0; i < t.num_inputs(); ++i) {
        if (t.ops[i].name == name) chosen = whole.rank() > t.type(t.ops[i].outs[0]).rank();
      }
      inputs.emplace_back(name, chosen ? slice(whole, b) : whole);
    }
    std::vector<Tensor> want = single.run(inputs);
    for (size_t k = 0; k < want.size(); ++k) {
      CAPTURE(t.outputs[k].name);
      CAPTURE(b);
      bool per_example = got[k].rank() == want[k].rank() + 1;
      Tensor mine = per_example ? slice(got[k], b) : got[k];
      REQUIRE(mine.type() == want[k].type());
      check_close(mine, testing::to_doubles(want[k]), tol, tol);
    }
  }
}

Tape traced(const std::string& path, const std::string& entry, const std::vector<std::string>& args,
            tracer::LoopMode loops = tracer::LoopMode::auto_) {
  tracer::Limits limits;
  limits.loops = loops;
  tracer::Program program(limits);
  program.set_print([](std::string_view) {});
  program.run_file(path);
  return tracer::trace(program, entry, args).tape;
}

}  // namespace

TEST_CASE("vmap of the MLP's gradient gives each example's gradient") {
  Tape g = gradient(samples::mlp(3), {});
  check_vmap(g, {"x"}, 5);
}

TEST_CASE("vmap of the digits CNN's gradient gives per-example gradients") {
  // Flux's layers in test mode (the batch norm's running statistics, no dropout), one image.
  std::string dir = YTAPE_SOURCE_DIR "/tests/unit/grad/";
  Tape f = traced(dir + "vmap_cnn.jl", "loss", {"model", "x", "y"});
  Tape g = gradient(f, {.wrt = {"model"}});
  check_vmap(g, {"x", "y"}, 4, 1e-4);
}

TEST_CASE("vmap batches every family's ops, batched or not on each side") {
  Builder b("families");
  Var x = b.input("x", f32({6, 5, 4, 2}));  // an image batch (W, H, C, N)
  Var w = b.input("w", f32({3, 3, 4, 3}));  // conv weights
  Var m = b.input("m", f32({7, 6}));        // a matrix
  Var v = b.input("v", f32({6, 3}));
  Var s = b.input("s", f32({4}));
  Var idx = b.input("idx", {DType::i64, {1, 3}});
  Var y = b.conv2d(x, w, {.pad = {1, 1, 1, 1}});
  Var dx = b.conv2d_backward_input(y, w, {.shape = {6, 5, 4, 2}, .pad = {1, 1, 1, 1}});
  Var dw = b.conv2d_backward_filter(x, y, {.shape = {3, 3, 4, 3}, .pad = {1, 1, 1, 1}});
  std::vector<Var> pooled = b.max_pool2d_with_indices(y, {.window = {2, 2}, .stride = {2, 2}});
  Var back = b.max_pool2d_backward(pooled[0], pooled[1], {.shape = {6, 5, 3, 2}});
  Var avg = b.avg_pool2d_backward(b.avg_pool2d(y, {.window = {2, 2}, .stride = {1, 1}}),
                                  {.shape = {6, 5, 3, 2}, .window = {2, 2}, .stride = {1, 1}});
  std::vector<Var> bn = b.batchnorm_with_stats(x, s, s);
  std::vector<Var> bnb = b.batchnorm_backward(bn[0], x, s, bn[1], bn[2]);
  Var mv = b.matmul(m, v);                           // (7, 3)
  Var vt = b.matmul(mv, mv, {.transpose_a = true});  // (3, 3)
  Var sm = b.softmax(b.mul(mv, b.relu(mv)), {.dims = {1}});
  Var red = b.sum(b.permutedims(sm, {.perm = {2, 1}}), {.dims = {2}});  // (3)
  Var cat = b.concat({b.slice(m, {.start = {1, 1}, .stop = {7, 3}, .step = {2, 1}}),
                      b.pad(v, {.lo = {0, 0}, .hi = {1, 0}, .interior = {0, 0}})},
                     {.dim = 1});           // (4, 3) and (7, 3)
  Var gat = b.gather(mv, idx, {.dim = 1});  // (1, 3)
  Var sca = b.scatter_add(gat, idx, {.dim = 1, .size = 7});
  Var cmp = b.select(b.gt(mv, b.constant(DType::f32, 0)), mv,
                     b.broadcast_to(b.reshape(red, {.shape = {1, 3}}), {.shape = {7, 3}}));
  b.output(b.sum(dx, {.dims = {1, 2, 3, 4}}), "dx");
  b.output(dw, "dw");
  b.output(back, "back");
  b.output(avg, "avg");
  b.output(bnb[0], "bn_dx");
  b.output(bnb[1], "bn_dscale");
  b.output(vt, "vt");
  b.output(cat, "cat");
  b.output(sca, "scatter");
  b.output(cmp, "select");
  Tape t = b.finish();
  for (std::vector<std::string> over :
       {std::vector<std::string>{"x"}, {"w"}, {"x", "w"}, {"m"}, {"v"}, {"m", "v", "s", "idx"}}) {
    CAPTURE(over.front());
    check_vmap(t, over, 3, 1e-4);
  }
}

TEST_CASE("vmap batches attention: the batch is one more slice; the mask is shared") {
  Builder b("attention");
  Var q = b.input("q", f32({4, 3, 2}));  // (d, queries, slices)
  Var k = b.input("k", f32({4, 5, 2}));
  Var v = b.input("v", f32({6, 5, 2}));
  // Query i sees keys 1..i+2.
  Var key = b.iota({.dtype = DType::i64, .shape = {5, 3}, .dim = 1});
  Var query = b.iota({.dtype = DType::i64, .shape = {5, 3}, .dim = 2});
  Var seen = b.le(key, b.add(query, b.constant(DType::i64, 2)));
  std::vector<Var> a = b.attention(q, k, v, seen);
  std::vector<Var> g = b.attention_backward(q, k, v, seen, a[0], a[1], b.sin(a[0]));
  b.output(a[0], "out");
  b.output(a[1], "lse");
  for (size_t i = 0; i < 3; ++i) b.output(g[i], fmt::format("d{}", i + 1));
  Tape t = b.finish();
  for (std::vector<std::string> over :
       {std::vector<std::string>{"q"}, {"k", "v"}, {"q", "k", "v"}}) {
    CAPTURE(over.front());
    check_vmap(t, over, 3, 1e-4);
  }
  Builder per_example("masks");
  Var mq = per_example.input("q", f32({4, 3}));
  Var mk = per_example.input("k", f32({4, 5}));
  Var mv = per_example.input("v", f32({6, 5}));
  Var mask = per_example.input("mask", {DType::boolean, {5, 3}});
  per_example.output(per_example.attention(mq, mk, mv, mask)[0], "out");
  CHECK_THROWS_WITH_AS(vmap(per_example.finish(), {{"mask"}, 2}),
                       doctest::Contains("attention's mask has no batching rule"), UserError);
}

TEST_CASE("vmap names an op it cannot batch, and bad requests") {
  Builder b("effect");
  Var x = b.input("x", f32({3}));
  b.print({x}, {.format = "x {}"});
  b.output(b.neg(x), "y");
  Tape t = b.finish();
  CHECK_THROWS_WITH_AS(vmap(t, {{"x"}, 2}), doctest::Contains("print has no batching rule"),
                       UserError);
  CHECK_THROWS_WITH_AS(vmap(t, {{"z"}, 2}), doctest::Contains("--over 'z' matches no input"),
                       UserError);
  CHECK_THROWS_WITH_AS(vmap(t, {{}, 2}), doctest::Contains("name the inputs"), UserError);
  CHECK_THROWS_WITH_AS(vmap(t, {{"x"}, 0}), doctest::Contains("at least 1"), UserError);
}

}  // namespace ytape::grad

namespace ytape::grad {

TEST_CASE("vmap batches region ops: a scan, its gradient, conds on one and on each example") {
  std::string dir = YTAPE_SOURCE_DIR "/tests/unit/grad/";
  Tape rnn = traced(YTAPE_SOURCE_DIR "/tests/cli/regions/rnn_loop.jl", "cell",
                    {"f32[5,5]", "f32[5,3]", "f32[3,6]", "f32[5]"}, tracer::LoopMode::scan);
  REQUIRE(std::ranges::count_if(rnn.ops, [](const Op& op) { return op.prim == Prim::scan; }) == 1);
  check_vmap(rnn, {"xs"}, 3);
  check_vmap(rnn, {"h"}, 2);
  check_vmap(rnn, {"W", "xs"}, 2);
  Tape g = gradient(rnn, {});
  check_vmap(g, {"xs", "h"}, 3, 1e-4);
  Tape branch =
      traced(dir + "vmap_regions.jl", "branch", {"f32[4]", "f32[4]"}, tracer::LoopMode::scan);
  REQUIRE(std::ranges::count_if(branch.ops, [](const Op& op) { return op.prim == Prim::cond; }) ==
          1);
  check_vmap(branch, {"x"}, 4);  // one selector for the batch: the cond, its branches batched
  check_vmap(branch, {"y"}, 3);  // the selector differs by example: both branches, selected
  check_vmap(gradient(branch, {}), {"x", "y"}, 3, 1e-4);
}

TEST_CASE("vmap of a while loop: its condition the same for the batch, or one per example") {
  std::string dir = YTAPE_SOURCE_DIR "/tests/unit/grad/";
  Tape newton =
      traced(dir + "vmap_regions.jl", "newton", {"f64[]", "f64[3]"}, tracer::LoopMode::scan);
  check_vmap(newton, {"v"}, 3, 1e-9);  // the trips depend on a alone
  check_vmap(newton, {"a"}, 4, 1e-9);  // each example's own trips
  check_vmap(newton, {"a", "v"}, 3, 1e-9);
  Tape count =
      traced(dir + "vmap_regions.jl", "count_up", {"f64[]", "f64[2]"}, tracer::LoopMode::scan);
  check_vmap(count, {"a"}, 6, 0);  // from 0 to 10 trips: each example stops at its own
}

}  // namespace ytape::grad
