// The blocked layouts (c8, c16) and the conversions between layouts; every blocked
// kernel in both, whichever this machine's oneDNN prefers.
#include "runtime/layout.h"

#include <doctest/doctest.h>

#include <cmath>

#include "kernel_harness.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/plan_print.h"
#include "tape/builder.h"

namespace ytape {

constexpr Layout kBlocked[] = {Layout::c8, Layout::c16};

TEST_CASE("blockable: rank-4 f32 or bool images with a multiple of the block's channels") {
  for (Layout l : kBlocked) {
    CHECK(blockable(Type{DType::f32, {5, 4, 32, 2}}, l));
    CHECK(blockable(Type{DType::boolean, {1, 1, 16, 1}}, l));
    CHECK_FALSE(blockable(Type{DType::f32, {5, 4, 0, 2}}, l));
    CHECK_FALSE(blockable(Type{DType::f64, {5, 4, 32, 2}}, l));
    CHECK_FALSE(blockable(Type{DType::f32, {20, 32, 2}}, l));
  }
  CHECK(blockable(Type{DType::f32, {5, 4, 24, 2}}, Layout::c8));
  CHECK_FALSE(blockable(Type{DType::f32, {5, 4, 24, 2}}, Layout::c16));
  CHECK_FALSE(blockable(Type{DType::f32, {5, 4, 32, 2}}, Layout::plain));
}

TEST_CASE("oneDNN's convolutions want the layout the executor keeps") {
  // AVX-512 (or AMX) kernels block by 16, AVX2 ones by 8.
  CHECK(is_blocked(native_blocked_layout()));
  ExecutorOptions options;
  Builder b("conv");
  Var x = b.input("x", {DType::f32, {6, 6, 16, 2}});
  Var w = b.input("w", {DType::f32, {3, 3, 16, 16}});
  b.output(b.relu(b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}})), "y");
  Tape t = b.finish();
  Executor e(t, options);
  CHECK(e.plan().layout_of[t.outputs[0].var.id] == native_blocked_layout());
}

TEST_CASE("relayout puts element (w, h, c, n) where nChw8c and nChw16c have it, and back") {
  for (Layout l : kBlocked) {
    const int64_t B = block_of(l);
    CAPTURE(B);
    for (DType dtype : {DType::f32, DType::boolean}) {
      Type type{dtype, {3, 2, 32, 2}};
      Tensor plain = testing::random_tensor(type, 5, 0, 100);
      Tensor blocked = Tensor::uninitialized(type), back = Tensor::uninitialized(type);
      relayout(plain, Layout::plain, blocked, l);
      relayout(blocked, l, back, Layout::plain);
      std::vector<double> p = testing::to_doubles(plain), b = testing::to_doubles(blocked);
      for (int64_t n = 0; n < 2; ++n)
        for (int64_t c = 0; c < 32; ++c)
          for (int64_t h = 0; h < 2; ++h)
            for (int64_t w = 0; w < 3; ++w) {
              int64_t at_plain = w + 3 * (h + 2 * (c + 32 * n));
              int64_t at_blocked = c % B + B * (w + 3 * (h + 2 * (c / B + 32 / B * n)));
              REQUIRE(b[at_blocked] == p[at_plain]);
            }
      testing::check_equal(back, p);
      Tensor other = Tensor::uninitialized(type);  // c8 <-> c16 directly
      Layout l2 = l == Layout::c8 ? Layout::c16 : Layout::c8;
      relayout(blocked, l, other, l2);
      relayout(other, l2, back, Layout::plain);
      testing::check_equal(back, p);
    }
  }
}

// The kernels that read and write blocked images give the plain kernels' results.
TEST_CASE("batch norm and convolutions on blocked images match their plain runs") {
  using L = Layout;
  Shape image{7, 5, 32, 2};
  Tensor x = testing::random_tensor({DType::f32, image}, 1);
  Tensor dy = testing::random_tensor({DType::f32, image}, 2);
  Tensor scale = testing::random_tensor({DType::f32, {32}}, 3);
  Tensor bias = testing::random_tensor({DType::f32, {32}}, 4);
  auto same = [](const std::vector<Tensor>& got, const std::vector<Tensor>& want, double tol) {
    REQUIRE(got.size() == want.size());
    for (size_t i = 0; i < got.size(); ++i)
      testing::check_close(got[i], testing::to_doubles(want[i]), tol, tol);
  };
  std::vector<Tensor> stats = testing::run_op(Prim::batchnorm_with_stats, {x, scale, bias});
  std::vector<Tensor> bwd_args{dy, x, scale, stats[1], stats[2]};
  for (L bl : kBlocked) {
    same(testing::run_op_in_layouts(Prim::batchnorm_with_stats, {x, scale, bias}, {},
                                    {bl, L::plain, L::plain, bl}),
         stats, 1e-5);
    same(testing::run_op_in_layouts(Prim::batchnorm_backward, bwd_args, {},
                                    {bl, bl, L::plain, L::plain, L::plain, bl}),
         testing::run_op(Prim::batchnorm_backward, bwd_args), 1e-5);
  }

  // conv2d: 32 -> 16 channels, 3x3, padded; every mix of image layouts.
  Tensor w = testing::random_tensor({DType::f32, {3, 3, 32, 16}}, 5);
  Tensor dz = testing::random_tensor({DType::f32, {7, 5, 16, 2}}, 6);
  Attrs attrs{{"pad", std::vector<int64_t>{1, 1, 1, 1}}};
  Attrs input_shape = attrs, filter_shape = attrs;
  input_shape.set("shape", image);
  filter_shape.set("shape", w.shape());
  std::vector<Tensor> y = testing::run_op(Prim::conv2d, {x, w}, attrs);
  std::vector<Tensor> dx = testing::run_op(Prim::conv2d_backward_input, {dz, w}, input_shape);
  std::vector<Tensor> dw = testing::run_op(Prim::conv2d_backward_filter, {x, dz}, filter_shape);
  for (L in : {L::plain, L::c8, L::c16}) {
    for (L out : {L::plain, L::c8, L::c16}) {
      same(testing::run_op_in_layouts(Prim::conv2d, {x, w}, attrs, {in, L::plain, out}), y, 1e-5);
      same(testing::run_op_in_layouts(Prim::conv2d_backward_input, {dz, w}, input_shape,
                                      {out, L::plain, in}),
           dx, 1e-5);
      same(testing::run_op_in_layouts(Prim::conv2d_backward_filter, {x, dz}, filter_shape,
                                      {in, out, L::plain}),
           dw, 1e-5);
    }
  }
}

// Pooling on blocked images gives the plain kernels' values and indices exactly: the same
// taps win, ties go to the first tap and NaN beats every number, for windows with and
// without padding, strides and overlap.
TEST_CASE("max pooling and its gradient on blocked images match their plain runs exactly") {
  using L = Layout;
  Shape image{9, 7, 32, 2};
  // Few distinct values, so that windows hold ties; and a few NaNs.
  Tensor x = testing::random_tensor({DType::f32, image}, 7, -3, 3);
  float* px = x.data<float>();
  for (int64_t i = 0; i < x.size(); ++i) px[i] = std::round(px[i]);
  for (int64_t i : {5, 77, 400, 1001, 2500}) px[i] = std::nanf("");
  struct Case {
    std::vector<int64_t> window, stride, pad;
  };
  // The last two: windows far wider than the image, of which only the image is read.
  for (const Case& c : {Case{{3, 3}, {2, 2}, {1, 1, 1, 1}}, Case{{2, 2}, {2, 2}, {0, 0, 0, 0}},
                        Case{{3, 2}, {1, 2}, {1, 2, 0, 1}}, Case{{20, 9}, {1000, 4}, {19, 0, 8, 8}},
                        Case{{int64_t{1} << 30, 1}, {1, 1}, {(int64_t{1} << 30) - 1, 0, 0, 0}}}) {
    CAPTURE(c.window);
    Attrs attrs{{"window", c.window}, {"stride", c.stride}, {"pad", c.pad}};
    std::vector<Tensor> want = testing::run_op(Prim::max_pool2d_with_indices, {x}, attrs);
    Tensor dy = testing::random_tensor(want[0].type(), 8);
    Attrs shape{{"shape", image}};
    std::vector<Tensor> args{dy, want[1]};
    for (L bl : kBlocked) {
      std::vector<Tensor> got =
          testing::run_op_in_layouts(Prim::max_pool2d_with_indices, {x}, attrs, {bl, bl, L::plain});
      testing::check_equal(got[0], testing::to_doubles(want[0]));
      testing::check_equal(got[1], testing::to_doubles(want[1]));
      testing::check_equal(testing::run_op_in_layouts(Prim::max_pool2d, {x}, attrs, {bl, bl})[0],
                           testing::to_doubles(want[0]));
      testing::check_equal(
          testing::run_op_in_layouts(Prim::max_pool2d_backward, args, shape, {bl, L::plain, bl})[0],
          testing::to_doubles(testing::run_op(Prim::max_pool2d_backward, args, shape)[0]));
    }
  }
}

// A convolution's bias, (1, 1, C, 1), added to a blocked image is read plain: the kernel
// repeats it in the image's order, with the bits of the plain run.
TEST_CASE("elementwise ops add per-channel vectors to blocked images exactly") {
  using L = Layout;
  Tensor x = testing::random_tensor({DType::f32, {5, 3, 32, 2}}, 1);
  Tensor bias = testing::random_tensor({DType::f32, {1, 1, 32, 1}}, 2);
  Tensor one = testing::random_tensor({DType::f32, {}}, 3);
  auto same = [](Prim p, const std::vector<Tensor>& args, const std::vector<L>& layouts) {
    CAPTURE(prim_name(p));
    testing::check_equal(testing::run_op_in_layouts(p, args, {}, layouts)[0],
                         testing::to_doubles(testing::run_op(p, args)[0]));
  };
  Tensor mask = testing::run_op(Prim::gt, {x, bias})[0];
  for (L bl : kBlocked) {
    same(Prim::add, {x, bias}, {bl, L::plain, bl});
    same(Prim::sub, {bias, x}, {L::plain, bl, bl});
    same(Prim::mul, {x, one}, {bl, L::plain, bl});
    same(Prim::select, {mask, bias, x}, {bl, L::plain, bl, bl});
  }
}

// A convolution, its bias and a relu, read by another convolution: the image stays
// blocked from the first convolution to the second, with no reorder for the add.
TEST_CASE("a convolution's bias keeps its output blocked") {
  Builder b("conv_bias");
  Var x = b.input("x", {DType::f32, {6, 6, 16, 2}});
  Var w = b.input("w", {DType::f32, {3, 3, 16, 32}});
  Var bias = b.input("bias", {DType::f32, {32}});
  Var w2 = b.input("w2", {DType::f32, {3, 3, 32, 16}});
  Var y = b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}});
  Var z = b.relu(b.add(y, b.reshape(bias, {.shape = Shape{1, 1, 32, 1}})));
  b.output(b.conv2d(z, w2, {.pad = Shape{1, 1, 1, 1}}), "out");
  Tape t = b.finish();
  ExecutorOptions plain_options;
  plain_options.blocked_layouts = false;
  Executor plain(t, plain_options);
  TensorMap inputs = complete_inputs(t, {}, 4);
  for (Layout l : kBlocked) {
    ExecutorOptions options;
    options.block = l;
    Executor blocked(t, options);
    CHECK(blocked.plan().reorders_per_run() == 0);
    CHECK(blocked.plan().layout_of[z.id] == l);
    testing::check_close(blocked.run(inputs)[0], testing::to_doubles(plain.run(inputs)[0]), 1e-4,
                         1e-4);
  }
}

// A tape output is computed as any other value, blocked where the plan keeps it blocked,
// and returned as a plain copy: asking for an intermediate value changes no result's bits
// (it used to run its batch norm plain, which sums in another order).
TEST_CASE("an output in the middle of a blocked chain changes no other output") {
  Builder b("chain");
  Var x = b.input("x", {DType::f32, {6, 6, 16, 2}});
  Var w = b.input("w", {DType::f32, {3, 3, 16, 16}});
  Var scale = b.input("scale", {DType::f32, {16}});
  Var bias = b.input("bias", {DType::f32, {16}});
  Var y = b.batchnorm(b.conv2d(x, w, {.pad = Shape{1, 1, 1, 1}}), scale, bias);
  Var z = b.conv2d(b.relu(y), w, {.pad = Shape{1, 1, 1, 1}});
  b.output(z, "z");
  Tape without = b.finish();
  Tape with = without;
  with.outputs.push_back({y, "y"});
  Executor one(without), two(with);
  CHECK(two.plan().layout_of[y.id] == native_blocked_layout());
  CHECK(plan_str(two.plan()).find("copied plain for the caller") != std::string::npos);
  TensorMap inputs = complete_inputs(without, {}, 6);
  Tensor z1 = one.run(inputs)[0];
  for (int run = 0; run < 2; ++run) {  // the second run refills the outputs' buffers
    std::vector<Tensor> outs = two.run(inputs);
    testing::check_equal(outs[0], testing::to_doubles(z1));
    ExecutorOptions plain;
    plain.blocked_layouts = false;
    Executor reference(with, plain);
    testing::check_close(outs[1], testing::to_doubles(reference.run(inputs)[1]), 1e-5, 1e-5);
  }
}

// Reductions read blocked images as they are, or through a plain copy where the kept
// dims would come out in another order.
TEST_CASE("reductions of blocked images match their plain runs") {
  using L = Layout;
  Tensor x = testing::random_tensor({DType::f32, {5, 3, 32, 2}}, 6);
  using Dims = std::vector<int64_t>;
  for (const Dims& dims : {Dims{1, 2, 4}, Dims{1, 2}, Dims{3}, Dims{1, 3, 4}, Dims{1, 2, 3, 4},
                           Dims{1}, Dims{4}, Dims{}}) {
    CAPTURE(dims);
    Attrs attrs{{"dims", dims}};
    for (L bl : kBlocked) {
      for (Prim p : {Prim::maximum, Prim::minimum}) {
        testing::check_equal(testing::run_op_in_layouts(p, {x}, attrs, {bl, L::plain})[0],
                             testing::to_doubles(testing::run_op(p, {x}, attrs)[0]));
      }
      testing::check_close(testing::run_op_in_layouts(Prim::sum, {x}, attrs, {bl, L::plain})[0],
                           testing::to_doubles(testing::run_op(Prim::sum, {x}, attrs)[0]), 1e-6,
                           1e-6);
    }
  }
}

}  // namespace ytape
