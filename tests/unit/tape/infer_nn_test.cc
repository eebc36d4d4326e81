// Inference of the conv, pool and norm families: edge cases and messages.
#include <doctest/doctest.h>

#include "unit/tape/infer_helpers.h"

using namespace ytape;
using namespace ytape::testing;

// ---- conv -------------------------------------------------------------------------------

namespace {

Attrs conv_attrs(Ints stride, Ints pad, Ints dilation = {1, 1}, int64_t groups = 1) {
  return {{"stride", std::move(stride)},
          {"pad", std::move(pad)},
          {"dilation", std::move(dilation)},
          {"groups", groups}};
}

}  // namespace

TEST_CASE("conv2d output sizes follow PyTorch's formula") {
  CHECK(infer(Prim::conv2d, {"f32[5,5,1,2]", "f32[3,3,1,4]"}) == "f32[3,3,4,2]");
  // floor((W + pads - dilation * (k - 1) - 1) / stride) + 1, per axis.
  CHECK(infer(Prim::conv2d, {"f32[10,8,2,1]", "f32[3,2,2,6]"},
              conv_attrs({1, 2}, {1, 0, 0, 2}, {2, 3})) == "f32[7,4,6,1]");
  CHECK(infer(Prim::conv2d, {"f32[7,7,1,1]", "f32[2,2,1,1]"}, conv_attrs({3, 3}, {0, 0, 0, 0})) ==
        "f32[2,2,1,1]");
  CHECK(infer(Prim::conv2d, {"f64[56,56,64,8]", "f64[3,3,64,128]"},
              conv_attrs({2, 2}, {1, 1, 1, 1})) == "f64[28,28,128,8]");
  CHECK(infer(Prim::conv2d, {"f32[56,56,64,8]", "f32[1,1,64,128]"},
              conv_attrs({2, 2}, {0, 0, 0, 0})) == "f32[28,28,128,8]");
  // Grouped and depthwise.
  CHECK(infer(Prim::conv2d, {"f32[8,8,4,2]", "f32[3,3,2,6]"},
              conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)) == "f32[6,6,6,2]");
  CHECK(infer(Prim::conv2d, {"f32[8,8,4,1]", "f32[3,3,1,4]"},
              conv_attrs({1, 1}, {1, 1, 1, 1}, {1, 1}, 4)) == "f32[8,8,4,1]");
  // Empty batch, and an input that is all padding (it reads zeros).
  CHECK(infer(Prim::conv2d, {"f32[5,5,1,0]", "f32[3,3,1,4]"}) == "f32[3,3,4,0]");
  CHECK(infer(Prim::conv2d, {"f32[0,5,1,1]", "f32[3,3,1,1]"}, conv_attrs({1, 1}, {1, 2, 0, 0})) ==
        "f32[1,3,1,1]");
}

TEST_CASE("conv2d checks its arguments and attributes") {
  auto bad = [](std::string_view x, std::string_view w, const Attrs& attrs = {}) {
    return infer(Prim::conv2d, {x, w}, attrs);
  };
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1]", "f32[3,3,1,1]"),
                       "x (W, H, C, N) must have rank 4, got f32[5,5,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[3,3,1]"),
                       "w (kw, kh, cin/groups, cout) must have rank 4, got f32[3,3,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f64[3,3,1,1]"),
                       "arguments must have one dtype, got f32[5,5,1,1] and f64[3,3,1,1]; convert "
                       "one first",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("i64[5,5,1,1]", "i64[3,3,1,1]"),
                       "the arguments must be f32 or f64, got i64[5,5,1,1]", UserError);
  const char* x = "f32[8,8,4,1]";
  const char* w = "f32[3,3,4,8]";
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({0, 1}, {0, 0, 0, 0})), "stride=[0,1] must be positive",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1}, {0, 0, 0, 0})),
                       "stride must have 2 elements, got [1]", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {1, 1})), "pad must have 4 elements, got [1,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {1, 1, 1, -1})),
                       "pad=[1,1,1,-1] must be non-negative", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 0})),
                       "dilation=[1,0] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 0)),
                       "groups=0 must be positive", UserError);
  Attrs fft = conv_attrs({1, 1}, {0, 0, 0, 0});
  fft.set("algorithm", std::string("fft"));
  CHECK_THROWS_WITH_AS(bad(x, w, fft), "algorithm=\"fft\" is not auto, direct or winograd",
                       UserError);
  for (const char* algorithm : {"auto", "direct", "winograd"}) {
    Attrs ok = conv_attrs({1, 1}, {0, 0, 0, 0});
    ok.set("algorithm", std::string(algorithm));
    CHECK(infer(Prim::conv2d, {x, w}, ok) == "f32[6,6,8,1]");
  }
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 3)),
                       "groups=3 does not divide the 4 channels of x f32[8,8,4,1]", UserError);
  CHECK_THROWS_WITH_AS(bad(x, "f32[3,3,2,5]", conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
                       "groups=2 does not divide the 5 output channels of w f32[3,3,2,5]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[8,8,3,1]", w),
                       "w f32[3,3,4,8] takes 4 channels per group, but x f32[8,8,3,1] has 3 per "
                       "group (groups=1)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, w, conv_attrs({1, 1}, {0, 0, 0, 0}, {1, 1}, 2)),
                       "w f32[3,3,4,8] takes 4 channels per group, but x f32[8,8,4,1] has 2 per "
                       "group (groups=2)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad(x, "f32[0,3,4,8]"), "the kernel of w f32[0,3,4,8] is empty", UserError);
}

TEST_CASE("conv2d rejects a kernel that does not fit and absurd sizes") {
  auto bad = [](std::string_view x, std::string_view w, const Attrs& attrs = {}) {
    return infer(Prim::conv2d, {x, w}, attrs);
  };
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[7,7,1,1]"),
                       "the kernel of w f32[7,7,1,1] with dilation=[1,1] does not fit in x "
                       "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
  CHECK(bad("f32[5,5,1,1]", "f32[7,7,1,1]", conv_attrs({1, 1}, {1, 1, 1, 1})) == "f32[1,1,1,1]");
  CHECK_THROWS_WITH_AS(bad("f32[5,5,1,1]", "f32[7,7,1,1]", conv_attrs({1, 1}, {1, 1, 0, 1})),
                       "the kernel of w f32[7,7,1,1] with dilation=[1,1] does not fit in x "
                       "f32[5,5,1,1] with pad=[1,1,0,1] (along H)",
                       UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {3, 1})),
      "the kernel of w f32[3,3,1,1] with dilation=[3,1] does not fit in x "
      "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
      UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {k2to48, 1})),
      "the kernel of w f32[3,3,1,1] with dilation=[281474976710656,1] does not fit in x "
      "f32[5,5,1,1] with pad=[0,0,0,0] (along W)",
      UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[5,5,1,1]", "f32[3,3,1,1]", conv_attrs({1, 1}, {0, 0, 0, 0}, {INT64_MAX, 1})),
      "dilation=[9223372036854775807,1]: 9223372036854775807 is too large", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({1, 1}, {k2to48, 0, 0, 0})),
                       "the result: dimension 281474976710657 is too large", UserError);
  CHECK_THROWS_WITH_AS(
      bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({INT64_MAX, 1}, {0, 0, 0, 0})),
      "stride=[9223372036854775807,1]: 9223372036854775807 is too large", UserError);
  CHECK(bad("f32[1,1,1,1]", "f32[1,1,1,1]", conv_attrs({k2to48, 1}, {0, 0, 0, 0})) ==
        "f32[1,1,1,1]");
}

TEST_CASE("conv2d gradients take the shape of what they differentiate") {
  Attrs a = conv_attrs({2, 2}, {3, 3, 3, 3});
  a.set("shape", Ints{224, 224, 3, 1});
  // With stride 2, inputs of 223 and 224 both give 112: hence the shape attribute.
  CHECK(infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a) ==
        "f32[224,224,3,1]");
  a.set("shape", Ints{223, 224, 3, 1});
  CHECK(infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a) ==
        "f32[223,224,3,1]");
  a.set("shape", Ints{225, 224, 3, 1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "dy f32[112,112,64,1] must have shape [113,112,64,1], the output of conv2d "
      "for x [225,224,3,1] and w [7,7,3,64]",
      UserError);
  a.set("shape", Ints{224, 224, 3});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "shape must have 4 elements, got [224,224,3]", UserError);
  a.set("shape", Ints{224, 224, 3, -1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f32[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "shape: dimension -1 is negative", UserError);
  a.set("shape", Ints{224, 224, 3, 1});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_input, {"f64[112,112,64,1]", "f32[7,7,3,64]"}, a),
      "arguments must have one dtype, got f64[112,112,64,1] and f32[7,7,3,64]; "
      "convert one first",
      UserError);

  a.set("shape", Ints{7, 7, 3, 64});
  CHECK(infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64,1]"}, a) ==
        "f32[7,7,3,64]");
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64]"}, a),
      "dy f32[112,112,64] must have shape [112,112,64,1], the output of conv2d "
      "for x [224,224,3,1] and w [7,7,3,64]",
      UserError);
  a.set("shape", Ints{7, 7, 4, 64});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"f32[224,224,3,1]", "f32[112,112,64,1]"}, a),
      "w f32[7,7,4,64] takes 4 channels per group, but x f32[224,224,3,1] has 3 "
      "per group (groups=1)",
      UserError);
  a.set("shape", Ints{7, 7, 3, 64});
  CHECK_THROWS_WITH_AS(
      infer(Prim::conv2d_backward_filter, {"i64[224,224,3,1]", "i64[112,112,64,1]"}, a),
      "the arguments must be f32 or f64, got i64[224,224,3,1]", UserError);
}

// ---- pool -------------------------------------------------------------------------------

namespace {

Attrs pool_attrs(Ints window, Ints stride, Ints pad = {0, 0, 0, 0}) {
  return {{"window", std::move(window)}, {"stride", std::move(stride)}, {"pad", std::move(pad)}};
}

}  // namespace

TEST_CASE("pooling output sizes follow PyTorch's formula") {
  CHECK(infer(Prim::max_pool2d, {"f32[4,4,1,1]"}, pool_attrs({2, 2}, {2, 2})) == "f32[2,2,1,1]");
  CHECK(infer(Prim::avg_pool2d, {"f64[5,5,3,2]"}, pool_attrs({2, 2}, {2, 2})) == "f64[2,2,3,2]");
  CHECK(infer(Prim::avg_pool2d, {"f32[5,6,3,2]"}, pool_attrs({3, 2}, {1, 2}, {1, 1, 0, 1})) ==
        "f32[5,3,3,2]");
  CHECK(infer(Prim::max_pool2d, {"f32[4,4,0,0]"}, pool_attrs({2, 2}, {2, 2})) == "f32[2,2,0,0]");
  CHECK(infer(Prim::max_pool2d_with_indices, {"f64[3,3,2,1]"}, pool_attrs({3, 3}, {1, 1})) ==
        "f64[1,1,2,1] i64[1,1,2,1]");
  // A stride that skips the last elements, as PyTorch's floor does.
  CHECK(infer(Prim::max_pool2d, {"f32[3,3,1,1]"}, pool_attrs({2, 2}, {3, 3}, {0, 1, 0, 0})) ==
        "f32[1,1,1,1]");
}

TEST_CASE("pooling checks its argument and attributes") {
  auto bad = [](std::string_view x, const Attrs& attrs) {
    return infer(Prim::max_pool2d, {x}, attrs);
  };
  Attrs a = pool_attrs({2, 2}, {2, 2});
  CHECK_THROWS_WITH_AS(bad("f32[4,4]", a), "x (W, H, C, N) must have rank 4, got f32[4,4]",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("i64[4,4,1,1]", a), "x must be f32 or f64, got i64[4,4,1,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d, {"i64[4,4,1,1]"}, a),
                       "x must be f32 or f64, got i64[4,4,1,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({0, 2}, {2, 2})),
                       "window=[0,2] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2})),
                       "stride must have 2 elements, got [2]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, -2})),
                       "stride=[2,-2] must be positive", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, 2}, {1, 1})),
                       "pad must have 4 elements, got [1,1]", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[4,4,1,1]", pool_attrs({2, 2}, {2, 2}, {0, 0, -1, 0})),
                       "pad=[0,0,-1,0] must be non-negative", UserError);
  CHECK_THROWS_WITH_AS(bad("f32[2,2,1,1]", pool_attrs({3, 3}, {1, 1})),
                       "window=[3,3] does not fit in x f32[2,2,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[3,2,1,1]", pool_attrs({3, 3}, {1, 1})),
                       "window=[3,3] does not fit in x f32[3,2,1,1] with pad=[0,0,0,0] (along H)",
                       UserError);
  CHECK_THROWS_WITH_AS(bad("f32[0,2,1,1]", pool_attrs({1, 1}, {1, 1})),
                       "window=[1,1] does not fit in x f32[0,2,1,1] with pad=[0,0,0,0] (along W)",
                       UserError);
}

TEST_CASE("every pad of a pooling is smaller than its window, so each window holds x") {
  auto pool = [](Prim p, Ints window, Ints stride, Ints pad) {
    return infer(p, {"f32[4,4,1,1]"},
                 pool_attrs(std::move(window), std::move(stride), std::move(pad)));
  };
  CHECK(pool(Prim::max_pool2d, {2, 2}, {1, 1}, {1, 1, 1, 1}) == "f32[5,5,1,1]");
  // A window of 2^30 over 4 pixels, padded by 2^30 - 1: valid, 4 windows (the kernels and
  // the cost model visit only what lies in x).
  CHECK(pool(Prim::max_pool2d, {k2to30, 1}, {1, 1}, {k2to30 - 1, 0, 0, 0}) == "f32[4,4,1,1]");
  // Strides beyond the padded x give one window, as in PyTorch.
  CHECK(pool(Prim::avg_pool2d, {3, 3}, {k2to48, k2to48}, {1, 1, 1, 1}) == "f32[1,1,1,1]");
  for (Prim p : {Prim::max_pool2d, Prim::avg_pool2d, Prim::max_pool2d_with_indices}) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(pool(p, {2, 2}, {1, 1}, {2, 0, 0, 0}),
                         "pad=[2,0,0,0] must be smaller than window=[2,2] on each side (along W); "
                         "pad x with a pad op for windows of padding",
                         UserError);
    CHECK_THROWS_WITH_AS(pool(p, {2, 2}, {1, 1}, {0, 0, 0, 2}),
                         "pad=[0,0,0,2] must be smaller than window=[2,2] on each side (along H); "
                         "pad x with a pad op for windows of padding",
                         UserError);
  }
  // A high pad as large as the window: refused though the last window reads x (ONNX's rule).
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {2, 2}, {2, 2}, {0, 2, 0, 0}),
                       "pad=[0,2,0,0] must be smaller than window=[2,2] on each side (along W); "
                       "pad x with a pad op for windows of padding",
                       UserError);
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {k2to30, 1}, {1, 1}, {k2to30, 0, 0, 0}),
                       "pad=[1073741824,0,0,0] must be smaller than window=[1073741824,1] on each "
                       "side (along W); pad x with a pad op for windows of padding",
                       UserError);
  CHECK_THROWS_WITH_AS(pool(Prim::max_pool2d, {2, 2}, {1, 1}, {0, 0, INT64_MAX, 0}),
                       "pad=[0,0,9223372036854775807,0]: 9223372036854775807 is too large",
                       UserError);
}

TEST_CASE("pooling gradients") {
  Attrs shape{{"shape", Ints{5, 5, 3, 2}}};
  CHECK(infer(Prim::max_pool2d_backward, {"f64[2,2,3,2]", "i64[2,2,3,2]"}, shape) ==
        "f64[5,5,3,2]");
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"i64[2,2,3,2]", "i64[2,2,3,2]"}, shape),
                       "dy must be f32 or f64, got i64[2,2,3,2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "f32[2,2,3,2]"}, shape),
                       "idx must be i64, got f32[2,2,3,2]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3]", "i64[2,2,3]"}, shape),
                       "dy (W', H', C, N) must have rank 4, got f32[2,2,3]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "i64[2,3,3,2]"}, shape),
                       "dy f32[2,2,3,2] and idx i64[2,3,3,2] must have one shape", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,1]", "i64[2,2,3,1]"}, shape),
                       "shape=[5,5,3,2] must have the C and N of dy f32[2,2,3,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::max_pool2d_backward, {"f32[2,2,3,2]", "i64[2,2,3,2]"},
                             {{"shape", Ints{5, 5, 3}}}),
                       "shape must have 4 elements, got [5,5,3]", UserError);

  Attrs a = pool_attrs({2, 2}, {2, 2});
  a.set("shape", Ints{5, 5, 3, 2});
  CHECK(infer(Prim::avg_pool2d_backward, {"f32[2,2,3,2]"}, a) == "f32[5,5,3,2]");
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"f32[3,2,3,2]"}, a),
                       "dy f32[3,2,3,2] must have shape [2,2,3,2], the output of avg_pool2d for x "
                       "[5,5,3,2]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"i64[2,2,3,2]"}, a),
                       "dy must be f32 or f64, got i64[2,2,3,2]", UserError);
  a.set("window", Ints{6, 2});
  CHECK_THROWS_WITH_AS(infer(Prim::avg_pool2d_backward, {"f32[2,2,3,2]"}, a),
                       "window=[6,2] does not fit in x f32[5,5,3,2] with pad=[0,0,0,0] (along W)",
                       UserError);
}

// ---- norm -------------------------------------------------------------------------------

TEST_CASE("batchnorm normalizes over all dims but the second to last") {
  CHECK(infer(Prim::batchnorm, {"f32[16,32]", "f32[16]", "f32[16]"}) == "f32[16,32]");
  CHECK(infer(Prim::batchnorm, {"f64[10,3,4]", "f64[3]", "f64[3]"}, {{"eps", 0}}) == "f64[10,3,4]");
  CHECK(infer(Prim::batchnorm_with_stats, {"f32[56,56,64,8]", "f32[64]", "f32[64]"}) ==
        "f32[56,56,64,8] f32[64] f32[64]");
  CHECK(infer(Prim::batchnorm_backward, {"f64[16,32]", "f64[16,32]", "f64[16]", "f64[16]",
                                         "f64[16]"}) == "f64[16,32] f64[16] f64[16]");
  for (Prim p : {Prim::batchnorm, Prim::batchnorm_with_stats}) {
    CAPTURE(prim_name(p));
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16]", "f32[16]", "f32[16]"}),
                         "x must have rank >= 2 (channels second to last), got f32[16]", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"i64[16,32]", "i64[16]", "i64[16]"}),
                         "x must be f32 or f64, got i64[16,32]", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[32]", "f32[16]"}),
                         "scale must be f32[16] (one per channel of x f32[16,32]), got f32[32]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f64[16]"}),
                         "bias must be f32[16] (one per channel of x f32[16,32]), got f64[16]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[]"}),
                         "bias must be f32[16] (one per channel of x f32[16,32]), got f32[]",
                         UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[16]"}, {{"eps", -1}}),
                         "eps=-1.0 must be non-negative", UserError);
    CHECK_THROWS_WITH_AS(infer(p, {"f32[16,32]", "f32[16]", "f32[16]"}, {{"eps", NAN}}),
                         "eps=nan must be non-negative", UserError);
  }
}

TEST_CASE("batchnorm_backward checks dy and the statistics") {
  const char* x = "f32[8,8,4,2]";
  const char* c = "f32[4]";
  CHECK(infer(Prim::batchnorm_backward, {x, x, c, c, c}) == "f32[8,8,4,2] f32[4] f32[4]");
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {"f32[8,8,4,1]", x, c, c, c}),
                       "dy must be f32[8,8,4,2] like x, got f32[8,8,4,1]", UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, "f32[2]", c, c}),
                       "scale must be f32[4] (one per channel of x f32[8,8,4,2]), got f32[2]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, c, "f64[4]", c}),
                       "mean must be f32[4] (one per channel of x f32[8,8,4,2]), got f64[4]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {x, x, c, c, "f32[4,1]"}),
                       "invstd must be f32[4] (one per channel of x f32[8,8,4,2]), got f32[4,1]",
                       UserError);
  CHECK_THROWS_WITH_AS(infer(Prim::batchnorm_backward, {"f32[4]", "f32[4]", c, c, c}),
                       "x must have rank >= 2 (channels second to last), got f32[4]", UserError);
}
