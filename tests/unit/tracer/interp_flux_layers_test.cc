// Flux's layers as its own tests pin them: fmap, Chain, Dense, Scale, Bilinear, Parallel,
// PairwiseFusion, one-hots, destructure and EmbeddingBag. Expected values are Flux's.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("Flux's layers as its tests pin them: fmap, Chain, Dense, Scale") {
  std::string p = R"(
using Flux
m = Chain(first = Dense(10, 5, σ), second = Dense(5, 2))
c = Chain([Dense(3, 2), Dense(2, 1)])
)";
  CHECK(eval_show(p, "m[1:2] == m, m == fmap(identity, m), keys(m[2:2].layers)") ==
        "(true, true, (:second,))");
  CHECK(eval_show(p, "fmap(x -> x isa Array ? 2x : x, Dense(ones(2, 2), [1.0, 2.0])).bias") ==
        "[2.0, 4.0]");
  CHECK(eval_show(p, "size(c(ones(Float32, 3))), c.layers isa AbstractVector") == "((1,), true)");
  CHECK(run_error(p + "Chain(layers = Dense(1, 1))")
            .find("ArgumentError: a Chain cannot have a layer named `layers`") !=
        std::string::npos);
  // Dense: the bias takes the weight's element type; wrong sizes and types are errors.
  CHECK(eval_show(p, "Dense(3, 4; init=Base.randn, bias=[1, 2, 3, 4]).bias") ==
        "[1.0, 2.0, 3.0, 4.0]");
  CHECK(run_error(p + "Dense(3, 4; bias=rand(5))")
            .find("DimensionMismatch: expected bias of size (4,), got size (5,)") !=
        std::string::npos);
  CHECK(run_error(p + "Dense(10 => 5)(1)").find("no method") != std::string::npos);
  // Scale(size..., σ), and no Scale without a size.
  CHECK(eval_show(p,
                  "Flux.Scale(2, 3, tanh; bias = false, init = zeros)(rand(2, 1, 4)) == "
                  "zeros(2, 3, 4)") == "true");
  CHECK(run_error(p + "Flux.Scale()").find("MethodError: no method matching Scale()") !=
        std::string::npos);
}

TEST_CASE("more of Flux's layers: Bilinear, Parallel, PairwiseFusion, one-hots, destructure") {
  std::string p = R"(
using Flux
seed!(2)
b = Flux.Bilinear(10, 10, 5)
par = Parallel(hcat, one = Dense(10, 10), two = identity)
pf = PairwiseFusion(vcat, x -> x .+ 1, x -> x .+ 2, x -> x .^ 3)
e = Embedding(10 => 4)
m1 = Chain(Dense(3, 4, tanh; bias=false), Dense(4, 2))
m1v = Chain([m1[1], m1[2]])
)";
  CHECK(eval_show(p, "size(b(randn(Float32, 10, 9))), size(Flux.Bilinear(randn(3, 4, 5)).bias)") ==
        "((5, 9), (3,))");
  CHECK(run_error(p + "Flux.Bilinear(rand(3, 4), false, tanh)")
            .find("ArgumentError: expected a 3-array of weights, got size (3, 4)") !=
        std::string::npos);
  CHECK(eval_show(p, "par[1] == par[:one], par[1:2] == par, size(par(ones(10, 2)))") ==
        "(true, true, (10, 4))");
  CHECK(eval_show(p, "Parallel(/, abs)(3, -4), Parallel(vcat, x = log)(1), Parallel(hcat)(1)") ==
        "(0.75, [0.0], Any[])");
  CHECK(run_error(p + "Parallel(+, sin, cos)(1, 2, 3)")
            .find("ArgumentError: Parallel with 2 sub-layers can take one input or 2 inputs, "
                  "but got 3 inputs") != std::string::npos);
  CHECK(run_error(p + "Parallel(hcat, connection = identity)")
            .find("ArgumentError: a Parallel cannot have a layer named `connection`") !=
        std::string::npos);
  CHECK(eval_show(p, "pf(2, 10, 20), pf(7)") ==
        "((3, [5, 12], [125, 1728, 8000]), (8, [10, 9], [1000, 729, 343]))");
  CHECK(eval_show(p, "PairwiseFusion(.+, x -> 2x, x -> 3x)(1, 2)") == "(2, 12)");
  // One-hot arrays; the Embedding of indices and of one-hots agree, in any number of dims.
  CHECK(eval_show(p, "OneHotVector(3, 4), size(Flux.onehotbatch([1 2; 3 4], 1:5))") ==
        "(Bool[0, 0, 1, 0], (5, 2, 2))");
  CHECK(eval_show(p, "x = [1 3; 2 4]; e(x) ≈ e(Flux.onehotbatch(x, 1:10)), size(e(x))") ==
        "(true, (4, 2, 2))");
  CHECK(run_error(p + "e(OneHotVector(3, 1000))").find("DimensionMismatch") != std::string::npos);
  // destructure: one flat vector, and a function that rebuilds the model from one.
  CHECK(eval_show(p,
                  "v, re = Flux.destructure(m1); length(v), re(2 .* v)[2].bias == 2 .* "
                  "m1[2].bias, sum(length, params(m1v))") == "(22, true, 22)");
}

TEST_CASE("EmbeddingBag: bags of labels reduced, in Flux's and PyTorch's forms") {
  std::string p = R"(
using Flux
seed!(5)
bag = Flux.EmbeddingBag(10 => 4, sum)
emb = Flux.Embedding(bag.weight)
)";
  CHECK(eval_show(p, "bag([1, 3]) ≈ emb(1) .+ emb(3), size(bag([1 2 5; 3 4 7]))") ==
        "(true, (4, 3))");
  CHECK(eval_show(p, "bag([1, 3, 2, 4], [1, 3]) == bag([[1, 3], [2, 4]]) == bag([1 2; 3 4])") ==
        "true");
  CHECK(eval_show(p, "bag(Flux.OneHotMatrix([1, 3], 10)) ≈ bag([1, 3])") == "true");
  CHECK(eval_show("", "Flux._splitat([1, 2, 3, 4], [1, 2, 4])") == "[[1], [2, 3], [4]]");
  CHECK(run_error(p + "Flux._splitat([1, 2, 3], [1, 3, 2])")
            .find("ArgumentError: offsets must increase, with no repeats") != std::string::npos);
  CHECK(run_error(p + "bag(Flux.OneHotVector(3, 10))")
            .find("EmbeddingBag is not defined for a one-hot vector") != std::string::npos);
}

}  // namespace ytape::tracer::testing
