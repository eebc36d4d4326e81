// The prelude's layers and losses: traced tapes compute what the interpreter computes.
#include <fmt/format.h>

#include "interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("a small convolutional network through the prelude") {
  std::string program = R"(
seed!(5)
model = Chain(
  Conv((3, 3), 2 => 4, relu; pad=1),
  BatchNorm(4; active=true),
  SkipConnection(Conv((3, 3), 4 => 4; pad=1, bias=false), +),
  MaxPool((2, 2)),
  Parallel(+, MeanPool((3, 3); stride=1, pad=1), x -> x .* 0.5f0),
  GlobalMeanPool(),
  flatten,
  Dense(4 => 3, tanh),
)
x = randn(Float32, 8, 8, 2, 2)
labels = [3, 1]
y = randn(Float32, 3, 2)
forward(model, x) = model(x)
loss(model, x, labels) = logitcrossentropy_labels(model(x), labels)
losses(z, y) = (mse(z, y), sum(softmax(z)), logsumexp(z; dims=1), sum(logsoftmax(z; dims=2)))
)";
  check_trace_matches(program, "forward", {"model", "x"});
  check_trace_matches(program, "loss", {"model", "x", "labels"});
  check_trace_matches(program, "losses", {"y", "y"});
  std::string text = trace_text(program, "loss", {"model", "x", "labels"});
  CHECK(text.find("in  %1::f32[3,3,2,4] model.layers.1.weight\n") != std::string::npos);
  CHECK(text.find("conv2d(") != std::string::npos);
  CHECK(text.find("batchnorm_with_stats(") != std::string::npos);
  CHECK(text.find("max_pool2d(") != std::string::npos);
  CHECK(text.find("avg_pool2d(") != std::string::npos);
}

TEST_CASE("gelu is one primitive with the bits of NNlib's formula written out") {
  for (const char* type : {"Float32", "Float64"}) {
    std::string x = fmt::format("x = collect({}, -6:0.125:6)", type);
    CHECK(eval_show(x,
                    "gelu.(x) == 0.5 .* x .* (1 .+ tanh.(0.7978845608028654 .* (x .+ "
                    "0.044715 .* (x .* x .* x)))), gelu(2.0) == gelu_tanh(2.0)") == "(true, true)");
  }
  std::string text = trace_text("f(x) = sum(gelu.(x))", "f", {"f32[3]"});
  CHECK(text.find("gelu(") != std::string::npos);
  CHECK(text.find("tanh(") == std::string::npos);
}

TEST_CASE("prelude values match their definitions") {
  CHECK(eval_show("", "softmax([1.0, 1.0])") == "[0.5, 0.5]");
  CHECK(eval_show("", "logsumexp([0.0, 0.0])") == "[0.6931471805599453]");
  CHECK(eval_show("", "mse([1.0, 2.0], [1.0, 4.0])") == "2.0");
  CHECK(eval_show("", "logitcrossentropy_labels([0.0 0.0; 0.0 0.0], [1, 2])") ==
        "0.6931471805599453");
  CHECK(eval_show("", "c = Chain(x -> x .+ 1, x -> x .* 2); c([1.0])") == "[4.0]");
  CHECK(eval_show("", "c = Chain(Dense(2 => 1)); size(c.layers[1].weight)") == "(1, 2)");
  CHECK(eval_show("", "leakyrelu.([-1f0, 2f0])") == "Float32[-0.01, 2.0]");
}

TEST_CASE(
    "MLUtils' names: splitobs, shuffleobs, eachobs, unbatch, batchseq, zeros_like, randn_like") {
  std::string p = "x = reshape(collect(1.0:24.0), 2, 3, 4)\nxf = ones(Float32, 2, 2)\n";
  CHECK(eval_show(p, "size.(splitobs(x; at = 0.5)), size.(splitobs(x; at = (0.25, 0.5)))") ==
        "(((2, 3, 2), (2, 3, 2)), ((2, 3, 1), (2, 3, 2), (2, 3, 1)))");
  CHECK(eval_show(p,
                  "sort(vec(shuffleobs(x)[1, 1, :])), length(eachobs(x)), "
                  "size(first(eachobs(x; batchsize = 3)))") ==
        "([1.0, 7.0, 13.0, 19.0], 4, (2, 3, 3))");
  CHECK(
      eval_show(p, "length(unbatch(x)), size(unstack(x; dims = 2)[3]), batch([[1, 2], [3, 4]])") ==
      "(4, (2, 4), [1 3; 2 4])");
  CHECK(eval_show(p, "batchseq([[1, 2, 3], [4, 5]], 0)") == "[[1, 4], [2, 5], [3, 0]]");
  CHECK(eval_show(p,
                  "size(randn_like(xf)), eltype(randn_like(xf)), eltype(rand_like(xf, Float64)), "
                  "zeros_like(xf), ones_like(xf, Int, (1, 2)), fill_like(xf, 7)[2]") ==
        "((2, 2), Float32, Float64, Float32[0.0 0.0; 0.0 0.0], [1 1], 7.0f0)");
}

}  // namespace ytape::tracer::testing
