// Flux's convolution and pooling layers with the meaning Flux 0.14's own tests pin: 3-d
// layers composed of 2-d primitives, Conv a true convolution and CrossCor not, SamePad,
// 1-d forms, and NNlib's pools over windows of only padding.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("3-d layers, composed of 2-d primitives: Flux's sizes, and traced as computed") {
  std::string p = R"(
x = rand(Float32, 10, 11, 12, 10, 2)
c = Conv((3, 4, 5), 10 => 5; groups=5)
t = ConvTranspose((3, 5, 3), 10 => 6; pad=SamePad(), groups=2)
m = Chain(CrossCor((2, 2, 2), 10 => 2; stride=2, pad=1), MaxPool((2, 2, 2)), MeanPool((1, 2, 3)))
)";
  CHECK(eval_show(p, "size(c(x)), size(t(x)), size(m(x))") ==
        "((8, 8, 8, 5, 2), (10, 11, 12, 6, 2), (3, 1, 1, 2, 2))");
  CHECK(eval_show(p, "size(GlobalMeanPool()(x)), size(GlobalMaxPool()(x[:, 1, 1, :, :]))") ==
        "((1, 1, 1, 10, 2), (1, 10, 2))");
  check_trace_matches(p + "f(x) = sum(abs2, c(x)) + sum(t(x)) + sum(m(x))", "f", {"x"});
}

TEST_CASE("pooling windows of only padding are NNlib's: -floatmax for max, 0 for mean") {
  std::string p = R"(
x = reshape(Float32.(1:16), 4, 4, 1, 1)
mp = MaxPool((2, 2); stride=2, pad=3)
x3 = reshape(Float32.(1:8), 2, 2, 2, 1, 1)
)";
  // Padded by 3 at stride 2, the first window of each dim holds only padding, the second
  // x's first row or column; NNlib's max starts from nextfloat(-Inf) = -floatmax.
  CHECK(eval_show(p, "size(mp(x)), mp(x)[1:2, 2:3, 1, 1]") ==
        "((5, 5, 1, 1), Float32[-3.4028235e38 -3.4028235e38; 1.0 9.0])");
  CHECK(eval_show(p, "MeanPool((2, 2); stride=2, pad=3)(x)[1:2, 2:3, 1, 1]") ==
        "Float32[0.0 0.0; 0.25 3.5]");
  CHECK(eval_show(p,
                  "MaxPool((2, 2, 2); pad=2)(x3)[2, 2, :, 1, 1], MeanPool((2, 2, 2); "
                  "pad=2)(x3)[2, 2, 2, 1, 1]") ==
        "(Float32[-3.4028235e38, 8.0, -3.4028235e38], 4.5f0)");
  check_trace_matches(
      p + "f(x) = sum(abs2, mp(x)[2:4, 2:4, :, :]) + sum(MeanPool((3, 3); pad=3)(x))", "f", {"x"});
}

TEST_CASE(
    "Conv is a true convolution, as Flux's; CrossCor is not; ConvTranspose is Conv's transpose") {
  std::string p = R"(
w = reshape(Float32.(1:4), 2, 2, 1, 1)
x = zeros(Float32, 3, 3, 1, 1)
x[2, 2, 1, 1] = 1
c = Conv(w, false)
t = ConvTranspose(w, false)
)";
  // The impulse response of a convolution is its kernel; of a cross-correlation the
  // kernel reversed. ConvTranspose, the transpose of the convolution, scatters each pixel
  // through the kernel reversed.
  CHECK(eval_show(p, "c(x)[:, :, 1, 1] == w[:, :, 1, 1]") == "true");
  CHECK(eval_show(p, "CrossCor(w, false)(x)[:, :, 1, 1] == w[end:-1:1, end:-1:1, 1, 1]") == "true");
  CHECK(eval_show(p, "t(reshape([1f0], 1, 1, 1, 1))[:, :, 1, 1] == w[end:-1:1, end:-1:1, 1, 1]") ==
        "true");
  check_trace_matches(p + "f(x) = sum(abs2, c(x)) + sum(CrossCor(w, false)(x))", "f", {"x"});
}

TEST_CASE(
    "convolution and pooling layers: Flux's constructors, 1-d forms, SamePad, NNlib's pools") {
  std::string p = R"(
x = reshape(Float32.(1:16), 4, 4, 1, 1)
x1 = reshape(Float32.(1:10), 10, 1, 1)
)";
  CHECK(eval_show(
            p,
            "maxpool(x, PoolDims(x, 2)) == MaxPool((2, 2))(x), "
            "size(MeanPool((3,); pad=SamePad())(x1)), size(MaxPool((2, 2); pad=SamePad())(x))") ==
        "(true, (4, 1, 1), (2, 2, 1, 1))");
  CHECK(eval_show(
            p,
            "size(ConvTranspose((3,), 2 => 4; groups=2, pad=SamePad())(ones(Float32, 10, 2, 1))), "
            "size(ConvTranspose((3, 5), 3 => 6; stride=3, outpad=(1, 0))(ones(Float32, 4, 4, 3, "
            "1)))") == "((10, 4, 1), (13, 14, 6, 1))");
  // SamePad with a dilation of 0 along a kernel dim of 1 (Flux's k .÷ 2), a 5-d weight made.
  CHECK(eval_show(p,
                  "size(Conv((1,), 1 => 1; pad=SamePad(), dilation=(0,))(x1)), "
                  "Flux._channels_in(Conv((1, 2, 3), 2 => 4)), "
                  "Flux._channels_out(ConvTranspose((3,), 10 => 15; groups=5)), "
                  "size(DepthwiseConv(rand(2, 3, 4, 5, 6), rand(30)).weight)") ==
        "((10, 1, 1), 2, 15, (2, 3, 4, 1, 30))");
  CHECK(run_error("Conv((2, 2), 3 => 10; groups=2)")
            .find("AssertionError: Input channel dimension must be divisible by groups.") !=
        std::string::npos);
  CHECK(run_error("Conv((3, 3), 1 => 1; init=(_...) -> rand(3, 3, 1))")
            .find("DimensionMismatch: the initializer made a weight of size (3, 3, 1), expected "
                  "(3, 3, 1, 1)") != std::string::npos);
  // SamePad at stride 3 over a kernel of 2 pads (0, -1): the transpose of a convolution
  // that crops the last element, which it never reads, so its gradient there is 0.
  CHECK(eval_show(p,
                  "t = ConvTranspose(reshape([1.0, 2.0], 2, 1, 1), false; stride=3, "
                  "pad=SamePad()); (t.pad, t(reshape([1.0, 10.0], 2, 1, 1))[:, 1, 1])") ==
        "((0, -1), [2.0, 1.0, 0.0, 20.0, 10.0, 0.0])");
  CHECK(run_error("Conv((2, 2, 5), 1 => 1)(ones(Float32, 3, 3, 3, 1, 1))")
            .find("conv3d: the kernel of w f32[2,2,5,1,1] with dilation=[1,1,1] does not fit "
                  "in x f32[3,3,3,1,1] with pad=[0,0,0,0,0,0] (along D)") != std::string::npos);
  CHECK(eval_show("m = f32(Chain(Dense(rand(2, 2)), Dense(2 => 1)))",
                  "eltype(m[1].weight), eltype(m[2].weight), eltype(f64(m)[2].bias)") ==
        "(Float32, Float32, Float64)");
}

}  // namespace ytape::tracer::testing
