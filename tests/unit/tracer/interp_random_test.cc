// The program's random numbers: reproducible from the seed, drawn from collections as
// Julia's, RNG objects that are streams of their own, and one draw per element inside
// f.(x).
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("random numbers are reproducible from the seed") {
  std::string a = eval_show("seed!(1); x = rand(Float32, 3)", "x");
  std::string b = eval_show("seed!(1); x = rand(Float32, 3)", "x");
  std::string c = eval_show("seed!(2); x = rand(Float32, 3)", "x");
  CHECK(a == b);
  CHECK(a != c);
  CHECK(eval_show("Random.seed!(3)", "size(randn(2, 2))") == "(2, 2)");
}

TEST_CASE("rand draws from a collection, as Julia's") {
  // Each element of a range, array or tuple, uniformly; dims after the collection.
  std::string p = "seed!(4)\nd = rand(1:3, 3000)\nc = [count(d .== k) for k in 1:3]";
  CHECK(eval_show(p, "size(d), eltype(d), all(900 .< c) && all(c .< 1100), sum(c)") ==
        "((3000,), Int64, true, 3000)");
  CHECK(eval_show("seed!(1)", "r = rand(0:9); r isa Int && 0 <= r <= 9") == "true");
  CHECK(eval_show("seed!(1)", "all(v -> (v == 2) | (v == 3), rand((2, 3), 10))") == "true");
  CHECK(eval_show("seed!(1)",
                  "x = rand([1.5, 2.5], 2, 2); size(x), all((x .== 1.5) .| (x .== 2.5))") ==
        "((2, 2), true)");
  CHECK(eval_show("seed!(5); a = rand(1:100, 4)", "a") ==
        eval_show("seed!(5); a = rand(1:100, 4)", "a"));
  CHECK(run_error("rand(1:0)").find("rand: the collection is empty") != std::string::npos);
  CHECK(trace_error("f(x) = x .+ rand(1:3)", "f", {"1.0"})
            .find("rand(collection) inside a traced function would be one sample frozen") !=
        std::string::npos);
}

TEST_CASE("RNG objects: a seeded one is a stream of its own, default_rng the program's") {
  std::string p = R"(
seed!(5)
a = rand(MersenneTwister(1), Float32, 4)
b = rand(MersenneTwister(1), Float32, 4)
rng = Xoshiro(2)
c = randn(rng, 3)
d = randn(rng, 3)
seed!(rng, 2)
e = randn(rng, 3)
seed!(5)
f = rand(Float32, 4)
g = rand(MersenneTwister(1), Float32, 4)
h = rand(Float32, 4)
seed!(5)
i = rand(default_rng(), Float32, 4)
j = rand(Float32, 4)
)";
  // Equal seeds draw equal numbers; a stream goes on from draw to draw and starts again
  // at seed!; a seeded generator's draws leave the program's stream as it was.
  CHECK(eval_show(p, "a == b, c != d, c == e, f != a, h == j, i == f, copy(rng).draws == 1") ==
        "(true, true, true, true, true, true, true)");
  // The initializers, shuffle and randperm take one first; Dropout and Flux.dropout too.
  CHECK(eval_show("",
                  "glorot_uniform(MersenneTwister(1), 3, 2) == "
                  "glorot_uniform(MersenneTwister(1), 3, 2), size(Flux.kaiming_normal("
                  "Xoshiro(0), 4, 5; gain=1)), sort(shuffle(MersenneTwister(2), [3, 1, 2])), "
                  "sort(randperm(Xoshiro(1), 3)), Dropout(0.5).rng isa Random.TaskLocalRNG, "
                  "Dropout(0.5; rng=MersenneTwister(1)).rng isa MersenneTwister, "
                  "only(values((; rng = 3))), only([7])") ==
        "(true, (4, 5), [1, 2, 3], [1, 2, 3], true, true, 3, 7)");
  CHECK(run_error("only([1, 2])").find("only: the collection has 2 elements, not 1") !=
        std::string::npos);
  CHECK(eval_show("x = ones(100)",
                  "count(iszero, trainmode!(Dropout(0.9; rng=MersenneTwister(1)))(x)) > 50, "
                  "Flux.dropout(MersenneTwister(1), x, 0.9) == "
                  "Flux.dropout(MersenneTwister(1), x, 0.9)") == "(true, true)");
}

TEST_CASE("the uniform initializers are (rand .- 0.5f0) .* scale, at top level and traced") {
  // At top level the draw is shifted and scaled in its own buffer: the same bits.
  std::string p = R"(
seed!(7); a = glorot_uniform(30, 20)
seed!(7); b = (rand(Float32, 30, 20) .- 0.5f0) .* sqrt(24f0 / 50)
seed!(7); c = Flux.kaiming_uniform(8, 9)
seed!(7); d = (rand(Float32, 8, 9) .- 0.5f0) .* (2 * sqrt(2f0) * sqrt(3f0 / fans((8, 9))[1]))
seed!(7); e = _scaled_rand(Float32, 0.5f0, Float64(2), 5)
seed!(7); f = (rand(Float32, 5) .- 0.5f0) .* Float64(2)
)";
  CHECK(eval_show(p, "a == b, c == d, eltype(a), e == f, eltype(e), rand(Float32) != a[1]") ==
        "(true, true, Float32, true, Float64, true)");
  // Traced, a draw of the tape and the two ops.
  std::string text =
      trace_text("g(x) = sum(x .* glorot_uniform(3, 2))\nx = ones(Float32, 3, 2)", "g", {"x"});
  CHECK(text.find("rand(dtype=f32, shape=[3,2]") != std::string::npos);
  CHECK(text.find("sub(") != std::string::npos);
}

TEST_CASE("a number drawn inside f.(x) is one draw per element, as Julia calls f per element") {
  std::string p = R"(
seed!(2)
noisy(t) = t + rand(Float32)
x = zeros(Float32, 50)
y = noisy.(x)
z = map(t -> t + randn(), zeros(50))
s = rrelu.(-ones(Float32, 50))
k = map(t -> t + rand(1:1000), zeros(Int, 50))
)";
  // Before, every element got the same draw.
  CHECK(eval_show(p,
                  "maximum(y) - minimum(y) > 0.5, all(0 .<= y .< 1), std(z) > 0.5, "
                  "eltype(s), all(-1 / 3 .< s .<= -1 / 8), maximum(s) - minimum(s) > 0.1, "
                  "maximum(k) - minimum(k) > 100, eltype(k)") ==
        "(true, true, true, Float32, true, true, true, Int64)");
  // Traced, the draw is one random op of the broadcast's shape.
  CHECK(trace_text(p + "f(v) = sum(noisy.(v))\nv = zeros(Float32, 4)", "f", {"v"})
            .find("rand(dtype=f32, shape=[4]") != std::string::npos);
}

}  // namespace ytape::tracer::testing
