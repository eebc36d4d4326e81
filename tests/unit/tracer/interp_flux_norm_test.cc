// Flux's normalisation and dropout layers with the meaning Flux 0.14's own tests pin: the
// batch's statistics in training and the running ones kept (BatchNorm, InstanceNorm,
// GroupNorm), Flux.normalise, and dropout that keeps nothing at p = 1.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("Flux.normalise is Flux 0.14's: ϵ added to the variance, as LayerNorm") {
  CHECK(eval_show("x = [0.1 0.5 0.9; 0.3 0.2 0.4]",
                  "LayerNorm(2)(x) ≈ Flux.normalise(x; dims=1), "
                  "Flux.normalise(x; dims=1)[1, 1] ≈ -0.1 / sqrt(0.01 + 1f-5)") == "(true, true)");
}

TEST_CASE(
    "pullback of a layer as Flux's tests call it: its value in training, its statistics kept") {
  std::string p = R"(
evalwgrad(f, x...) = pullback(f, x...)[1]
m = BatchNorm(2)
x = [1.0 3.0 5.0; 2.0 4.0 6.0]
y = evalwgrad(m, x)
)";
  // Flux's values (test/layers/normalisation.jl): the batch's statistics, and the running
  // ones moved by momentum 0.1, σ² with the corrected variance.
  CHECK(eval_show(p, "round.(y; digits=5), m.μ ≈ [0.3, 0.4], m.σ² ≈ [1.3, 1.3]") ==
        "([-1.22474 0.0 1.22474; -1.22474 0.0 1.22474], true, true)");
  CHECK(eval_show(p,
                  "m.β == [0, 0], m.γ == [1, 1], m.ϵ, m.λ, Flux.hasaffine(m), "
                  "length(Flux.params(m)), length(Flux.params(BatchNorm(2; affine=false)))") ==
        "(true, true, 1.0e-5, identity, true, 2, 0)");
  // The back function of a layer's pullback: its statistics moved once, not again.
  CHECK(eval_show(p + "g = pullback(m, x)[2](ones(2, 3))", "g[1] == zero(x), m.μ ≈ [0.57, 0.76]") ==
        "(true, true)");
  CHECK(eval_show("", "pullback(x -> sum(abs2, x), [1.0, 2.0])[2](1.0)") == "([2.0, 4.0],)");
  CHECK(run_error(p + "m.foo").find("BatchNorm has no field 'foo'") != std::string::npos);
}

TEST_CASE("InstanceNorm and GroupNorm with running statistics, as Flux 0.14's") {
  std::string p = R"(
evalwgrad(f, x...) = pullback(f, x...)[1]
m = InstanceNorm(2; affine=true, track_stats=true)
x = Float32.(reshape(collect(1:12), 3, 2, 2))
y = evalwgrad(m, x)
g = GroupNorm(4, 2; track_stats=true)
z = evalwgrad(g, Float32.(reshape(collect(1:24), 3, 4, 2)))
)";
  CHECK(eval_show(p,
                  "m.μ ≈ [0.5, 0.8], length(Flux.params(m)), g.μ ≈ [0.95, 1.55], g.G, "
                  "Flux.hasaffine(InstanceNorm(2)), length(Flux.params(InstanceNorm(2)))") ==
        "(true, 2, true, 2, false, 0)");
  // In test mode the running statistics normalize.
  CHECK(eval_show(p,
                  "m(x) ≈ (x .- reshape(m.μ, 1, 2, 1)) ./ sqrt.(reshape(m.σ², 1, 2, 1) .+ 1f-5)") ==
        "true");
  CHECK(eval_show(
            "x = rand(Float32, 3, 4)\nbn = trainmode!(BatchNorm(3))",
            "ForwardDiff.jacobian(bn, x) isa Matrix{Float32}, size(ForwardDiff.jacobian(bn, x)), "
            "permutedims(reshape(1:6, 1, 2, 3), [3, 1, 2])[:, 1, 2]") ==
        "(true, (12, 12), [2, 4, 6])");
}

TEST_CASE("Dropout(1) and AlphaDropout(1) keep nothing, as NNlib's (not NaN); Flux.dropout") {
  std::string p = R"(
evalwgrad(f, x...) = pullback(f, x...)[1]
x = [1.0, 2.0, 3.0]
)";
  CHECK(eval_show(p,
                  "evalwgrad(Dropout(1), x), evalwgrad(AlphaDropout(1), x) == zero(x), "
                  "evalwgrad(Dropout(0), x), Flux.dropout(x, 0.5; active=false)") ==
        "([0.0, 0.0, 0.0], true, [1.0, 2.0, 3.0], [1.0, 2.0, 3.0])");
  CHECK(eval_show("seed!(1)",
                  "count(iszero, Flux.dropout(ones(100), 0.9)) > 50, values(()), "
                  "values((1, 2)), floatmin(Float32) > 0") == "(true, (), (1, 2), true)");
  // The gradient at p = 1 is zeros too, not NaN.
  CHECK(eval_show(p, "gradient(v -> sum(trainmode!(Dropout(1))(v)), x)[1]") == "[0.0, 0.0, 0.0]");
}

}  // namespace ytape::tracer::testing
