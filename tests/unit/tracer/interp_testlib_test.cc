// What Flux's own test files use: Test's macros, exceptions, Julia's === and ==, and the
// layers' constructors and checks as Flux's tests pin them.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("=== is egal: immutable values by content, mutable ones by identity") {
  std::string p = R"(
struct R
  e
  t
end
mutable struct M
  x
end
a = [1.0]
m = M(1)
)";
  CHECK(eval_show(p, "R(1, a) === R(1, a), R(1, [1.0]) === R(1, [1.0]), (1, a) === (1, a)") ==
        "(true, false, true)");
  CHECK(eval_show(p, "m === m, M(1) === M(1), [] === [], a === a, a === [1.0]") ==
        "(true, false, false, true, false)");
  // == compares numbers and arrays by value, collections item by item, the rest as ===.
  CHECK(eval_show(p, "R(1, a) == R(1, a), R(1, [1.0]) == R(1, [1.0]), ([1.0],) == ([1.0],)") ==
        "(true, false, true)");
  CHECK(eval_show(p, "(1, 2) == (1, 2.0), Any[1, [2.0]] == Any[1.0, [2]], (a=1,) == (b=1,)") ==
        "(true, true, false)");
  CHECK(eval_show(p, "M(1) == M(1), (x = R(1, a),) == (x = R(1, a),), (1, a) != (1, [2.0])") ==
        "(false, true, true)");
  check_trace_matches("f(x, y) = ifelse((x, 1) == (y, 1), 1f0, 0f0)\nx = [1f0]\ny = [1f0]", "f",
                      {"x", "y"});
}

TEST_CASE("@test_throws names the exception type; @test_broken, @test_skip, @test_nowarn") {
  CHECK(run_error("@test_throws DimensionMismatch [1.0 2.0] * [1.0, 2.0, 3.0]\n"
                  "@test_throws MethodError Dense(10, 10.5)\n"
                  "@test_throws ArgumentError throw(ArgumentError(\"no\"))\n"
                  "@test_throws Exception error(\"any\")\n"
                  "@test_throws ErrorException error(\"plain\")\n"
                  "@test_throws KeyError Dict(:a => 1)[:b]\n"
                  "@test_throws DimensionMismatch [1.0, 2.0] .+ [1.0, 2.0, 3.0]\n"
                  "@test_broken 1 == 2\n@test_broken error(\"x\")\n@test_skip error(\"x\")\n"
                  "@test_nowarn sum([1])") == "no error");
  CHECK(run_error("@test_throws ArgumentError error(\"plain\")")
            .find("Test Failed: error(\"plain\") threw ErrorException (plain); expected "
                  "ArgumentError") != std::string::npos);
  CHECK(run_error("@test_throws MethodError sum([1])")
            .find("Test Failed: sum([1]) did not throw; expected MethodError") !=
        std::string::npos);
  CHECK(run_error("@test_broken 1 == 1").find("Unexpected Pass: 1 == 1 holds now") !=
        std::string::npos);
  // throw(e) ends the program with e's type and message, as Julia prints it.
  CHECK(run_error("throw(DomainError(-1, \"negative\"))").find("DomainError with -1: negative") !=
        std::string::npos);
}

TEST_CASE("Base odds and ends Flux's tests use") {
  CHECK(eval_show("", "eltype([]), eltype((1, 2)), eltype((1, 2.0)), typeof(sin)") ==
        "(Any, Int64, Union{Int64, Float64}, typeof(sin))");
  CHECK(eval_show("seed!(1)\nb = rand(Bool, 2, 3)", "size(b), eltype(b)") == "((2, 3), Bool)");
  // isapprox compares at the precision of the less precise float type, as Julia's.
  CHECK(eval_show("", "Float32[1] ≈ [1.0 + 1e-5], [1.0] ≈ [1.0 + 1e-5], 1f0 ≈ 1.00001") ==
        "(true, false, true)");
  // Keywords splatted from :name => value pairs.
  CHECK(eval_show("g(; kw...) = kw", "g(; [:a => 1, :b => 2]...)") == "(a = 1, b = 2)");
  CHECK(run_error("g(; kw...) = kw\ng(; [1, 2]...)")
            .find("keywords are splatted from a named tuple or from :name => value pairs") !=
        std::string::npos);
}

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

TEST_CASE("ranges broadcast as arrays; strings concatenate; typeof(f) as a type parameter") {
  CHECK(eval_show("", "(1:4) .== 2, eltype(1:3), (1:3) .* 2") ==
        "(Bool[0, 1, 0, 0], Int64, [2, 4, 6])");
  CHECK(eval_show("", "\"a\" * \"b\" * \"c\", inv(4), inv(2f0), hcat(), vcat()") ==
        "(\"abc\", 0.25, 0.5f0, Any[], Any[])");
  CHECK(eval_show("struct P{F, T}\n  f::F\n  t::T\nend",
                  "P(hcat, ()) isa P{typeof(hcat), Tuple{}}") == "true");
}

TEST_CASE(
    "Test's syntax as Flux's tests write it: do ... end[1], @test keywords, exception values") {
  std::string p = R"(
g = gradient([1.0, 2.0]) do v
  sum(abs2, v)
end[1]
@test [1.0, 1.0] ≈ [1.0, 1.0 + 1e-9] rtol=1e-6
@test 1.0 ≈ 1.1 atol=0.2
@test 1 == 2 skip=true
@test 1 == 2 broken=true
@test_throws DomainError(-1, "no") throw(DomainError(-1, "no"))
)";
  CHECK(eval_show(p, "g") == "[2.0, 4.0]");
  CHECK(run_error("@test 1.0 ≈ 1.1 atol=0.01").find("Test Failed: 1.0 ≈ 1.1") != std::string::npos);
  CHECK(run_error("@test_throws DomainError(-1, \"yes\") throw(DomainError(-1, \"no\"))")
            .find("threw DomainError with -1: no; expected DomainError with -1: yes") !=
        std::string::npos);
  CHECK(run_error("@test 1 == 1 atol").find("@test takes keywords after its expression") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
