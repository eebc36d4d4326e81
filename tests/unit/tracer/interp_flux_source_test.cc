// What Flux's own source (src/layers/normalise.jl) asked of the language beyond the
// prelude's layers: `in` as a name, Colon, CUDA's types in signatures, rand!, similar with
// a type and dims. Expected values are Julia's.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("`in` names a parameter or variable where an operand starts; between, it is `in`") {
  std::string p = R"(
struct Norm; β; end
trainable(in::Norm) = (β = in.β,)
twice(in) = 2 * in
)";
  CHECK(eval_show(p, "trainable(Norm(3)), twice(4)") == "((β = 3,), 8)");
  CHECK(eval_show(p, "2 in [1, 2], in(3, (1, 2)), [i for i in 1:3], 3 ∈ 1:2") ==
        "(true, false, [1, 2, 3], false)");
}

TEST_CASE("Colon is the type of `:`") {
  std::string p = "shape(s, ::Colon) = :all\nshape(s, dims) = dims";
  CHECK(eval_show(p, "shape(1, :), shape(1, 2), shape(1, :a), typeof(:), Colon() == (:)") ==
        "(:all, 2, :a, Colon, true)");
  CHECK(eval_show(p, "(:) isa Colon, :a isa Colon, (:) isa Symbol, Colon <: Symbol") ==
        "(true, false, true, true)");
}

TEST_CASE("CUDA's types name methods that never apply; rand! and similar(x, T, dims)") {
  std::string p = R"(
mask(rng::CUDA.RNG, x::CuArray, p) = :gpu
mask(rng, x, p) = :cpu
x = zeros(Float32, 3, 2)
)";
  CHECK(eval_show(p, "mask(Flux.rng_from_array(x), x, 0.5)") == ":cpu");
  CHECK(eval_show(p, "y = rand!(similar(x, Float64, (2, 2))); typeof(y), all(0 .<= y .< 1)") ==
        "(Matrix{Float64}, true)");
  CHECK(eval_show(
            p, "size(similar(x, Int, 4)), typeof(similar(x, Float64)), size(similar(x, (1, 5)))") ==
        "((4,), Matrix{Float64}, (1, 5))");
  CHECK(eval_show(p,
                  "seed!(1); a = rand!(MersenneTwister(3), similar(x)); b = "
                  "rand!(MersenneTwister(3), similar(x)); a == b") == "true");
}

}  // namespace ytape::tracer::testing
