// What running Flux 0.14's own test files (test/layers/conv.jl, normalisation.jl,
// recurrent.jl, test/losses.jl, test/outputsize.jl) as published asked of the language and
// the prelude: each case a gap they showed, with Flux's meaning pinned.
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

TEST_CASE("Base names Flux's tests use: cld, fld, Returns, isnan, float(T), reshape of a range") {
  CHECK(eval_show("", "cld(7, 2), fld(7, 2), cld(-7, 2), fld(-7, 2), cld.((4, 5), 2)") ==
        "(4, 3, -3, -4, (2, 3))");
  CHECK(eval_show("",
                  "ntuple(Returns(3), 2), isnan(0.0 / 0.0), isnan(1.0), isinf(-1 / 0), "
                  "isfinite(1.0)") == "((3, 3), true, false, true, true)");
  CHECK(eval_show("", "float(Int), float(Float32), reshape(-2:3, 2, 3)") ==
        "(Float64, Float32, [-2 0 2; -1 1 3])");
  // eps(x) is the spacing of floats at x, of each element for eps.(x).
  CHECK(eval_show("",
                  "eps.([0.5, 1.0, 3.0]) == [eps(0.5), eps(1.0), eps(3.0)], eps(0.5), "
                  "eps.(Float32[2]), eps(Float64)") ==
        "(true, 1.1102230246251565e-16, Float32[2.3841858e-7], 2.220446049250313e-16)");
}

TEST_CASE("Flux.normalise is Flux 0.14's: ϵ added to the variance, as LayerNorm") {
  CHECK(eval_show("x = [0.1 0.5 0.9; 0.3 0.2 0.4]",
                  "LayerNorm(2)(x) ≈ Flux.normalise(x; dims=1), "
                  "Flux.normalise(x; dims=1)[1, 1] ≈ -0.1 / sqrt(0.01 + 1f-5)") == "(true, true)");
}

TEST_CASE("recurrent cells convert their input to the weights' element type, as Flux 0.14's") {
  CHECK(eval_show("x = rand(Float64, 2, 4)\nm1 = RNN(2 => 3)\nm2 = LSTM(2 => 3)\nm3 = GRU(2 => 3)",
                  "typeof(m1(x)), typeof(m1.state), typeof(m2(x)), typeof(m3(x))") ==
        "(Matrix{Float32}, Matrix{Float32}, Matrix{Float32}, Matrix{Float32})");
  CHECK(eval_show("m = RNN(2 => 3)\np = Parallel(vcat, Dense(2, 4), Dense(3, 6))",
                  "Flux.outputsize(m, (2, 4)), size(m.state), Flux.outputsize(Dense(10, 5), (10,); "
                  "padbatch=true), outputsize(p, (2,), (3,)), outputsize(p, ((2, 7), (3, 7)))") ==
        "((3, 4), (3, 1), (5, 1), (10,), (10, 7))");
}

TEST_CASE("+ of arrays equal up to trailing dims of 1, as Julia's promote_shape") {
  CHECK(eval_show("", "[1.0, 2.0] + [1.0 2.0]', [1.0, 2.0] - ones(2, 1, 1)") ==
        "([2.0; 4.0;;], [0.0; 1.0;;;])");
  CHECK(run_error("[1.0, 2.0] + ones(2, 2)").find("the shapes must be equal") != std::string::npos);
  check_trace_matches("f(x, y) = sum(abs2, x + y)\nx = [1f0, 2f0]\ny = [3f0 4f0]'", "f",
                      {"x", "y"});
}

TEST_CASE("recurrent layers over sequences; GRUv3; Flux's multigate and eachlastdim") {
  std::string p = R"(
seed!(3)
m = RNN(2 => 3)
x = rand(Float32, 2, 4, 5)
y = m(x)
Flux.reset!(m)
steps = [m(x[:, :, t]) for t in 1:5]
g = GRUv3(2 => 3)
)";
  CHECK(eval_show(p, "size(y), y[:, :, 5] == steps[5], size(g(x[:, :, 1])), size(g.cell.Wh)") ==
        "((3, 4, 5), true, (3, 4), (6, 3))");
  CHECK(eval_show("x = reshape(1:12, 6, 2)",
                  "Flux.multigate(x, 2, Val(3))[3], "
                  "length(Flux.eachlastdim(x)), selectdim(x, 2, 1)") ==
        "([5 11; 6 12], 2, [1, 2, 3, 4, 5, 6])");
  CHECK(eval_show("x = reshape(1:8, 2, 2, 2)\nidx = (1, :, 2)",
                  "x[idx...], eachslice(x; dims=3)[2] == x[:, :, 2]") == "([5, 7], true)");
  check_trace_matches(p + "f(x) = (Flux.reset!((m, g)); sum(abs2, m(x)) + sum(g(x[:, :, 2])))", "f",
                      {"x"});
}

TEST_CASE(
    "outputsize's needs: unsqueeze, NNlib's other activations, LayerNorm(a, b), channel checks") {
  CHECK(eval_show("",
                  "size(Flux.unsqueeze(dims=3)(ones(5, 7, 13))), size(LayerNorm(3, 2).scale), "
                  "size(LayerNorm(3, 2, tanh)(ones(3, 2))), "
                  "round.((lisht(1.0), logcosh(1.0), softshrink(0.7), trelu(0.5)); digits=4)") ==
        "((5, 7, 1, 13), (3, 2), (3, 2), (0.7616, 0.4338, 0.2, 0.0))");
  for (const char* bad :
       {"Conv((3, 3), 3 => 16)(ones(Float32, 5, 5, 2, 1))",
        "BatchNorm(3)(ones(Float32, 4, 4, 5, 1))", "InstanceNorm(3)(ones(Float32, 4, 4, 5, 1))",
        "GroupNorm(16, 4)(ones(Float32, 4, 4, 15, 1))",
        "ConvTranspose((3, 3), 2 => 4)(ones(Float32, 5, 5, 3, 1))"}) {
    CAPTURE(bad);
    CHECK(run_error(bad).find("DimensionMismatch: ") != std::string::npos);
  }
  CHECK(run_error("Conv((3, 3), 3 => 16)(ones(Float32, 5, 5, 3))")
            .find("DimensionMismatch: a convolution of weight size (3, 3, 3, 16) takes inputs "
                  "of 4 dims, got size (5, 5, 3)") != std::string::npos);
}

TEST_CASE("getproperty methods answer names that are no fields, as Julia's x.name calls them") {
  std::string p = R"(
struct Celsius
  t
end
getproperty(c::Celsius, s::Symbol) = s === :kelvin ? c.t + 273 : error("no property $s")
)";
  CHECK(eval_show(p, "Celsius(10).kelvin, Celsius(10).t") == "(283, 10)");
  CHECK(run_error(p + "Celsius(1).f").find("no property f") != std::string::npos);
  CHECK(run_error("struct P\n  a\nend\nP(1).b").find("P has no field 'b'; its fields are a") !=
        std::string::npos);
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

TEST_CASE("pullback of an array-valued function: back(Δ) gives the gradients of sum(Δ .* f)") {
  std::string p = R"(
f(x, a) = x .* a .+ sin.(x)
x = [1.0, 2.0, 3.0]
y, back = pullback(f, x, 2.0)
g1 = back([1.0, 1.0, 1.0])
g2 = back([1.0, 0.0, -1.0])
)";
  // Twice, with different cotangents; the scalar argument's gradient is sum(Δ .* x).
  CHECK(eval_show(p,
                  "y == f(x, 2.0), g1[1] ≈ 2 .+ cos.(x), g1[2] ≈ 6, "
                  "g2[1] ≈ [2 + cos(1.0), 0, -2 - cos(3.0)], g2[2] ≈ -2") ==
        "(true, true, true, true, true)");
  // Dropout's back function sees the mask its value was computed with.
  CHECK(eval_show("seed!(3); m = trainmode!(Dropout(0.5)); x = rand(50) .+ 1\n"
                  "y, back = pullback(m, x); g = back(ones(50))[1]",
                  "g == y ./ x, count(iszero, g) > 10, count(iszero, g) < 40") ==
        "(true, true, true)");
  // In a traced function the back function differentiates the record again there.
  std::string traced = R"(
h(x) = (y = pullback(v -> v .* v, x); sum(y[2](y[1])[1]))
x = [1.0, 2.0, 3.0]
)";
  check_trace_matches(traced, "h", {"x"});
  CHECK(eval_show(traced, "h(x)") == std::to_string(2 * (1 + 8 + 27)) + ".0");
  CHECK(run_error(p + "back(ones(2))")
            .find("Δ must be a float array of the shape of the pullback's value, [3], got") !=
        std::string::npos);
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

TEST_CASE("v\"1.7\" is a version number; VERSION is 1.9's, as published code tests it") {
  CHECK(eval_show("",
                  "VERSION >= v\"1.7\", VERSION < v\"1.10\", v\"1.7\" == v\"1.7.0\", "
                  "v\"2\" > v\"1.99.3\", v\"1.2.3\" <= v\"1.2.3\", sprint(show, v\"1.7\")") ==
        "(true, true, true, true, true, \"v\\\"1.7.0\\\"\")");
  CHECK(run_error("a = v\"1.x\"").find("'1.x' is not a version number") != std::string::npos);
  CHECK(run_error("a = v\"1.2.3.4\"").find("at most three parts") != std::string::npos);
  CHECK(run_error("a = r\"a+\"").find("prefix (r\"...\") are not supported") != std::string::npos);
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

TEST_CASE("@autosize: each `_` is the size of the input the layer first sees, as Flux's") {
  std::string p = R"(
m = @autosize (3, 1) Chain(Dense(_ => 4), Dense(_ => div(_, 2)), BatchNorm(_, affine=false))
c = @autosize (8, 8, 1, 2) Chain(c = Conv((3, 3), _ => 5; pad=SamePad()), f = Flux.flatten,
                                 d = Dense(_ => _ ÷ 4, relu)) |> gpu
mo = @autosize (3, 45) Maxout(() -> Dense(_ => 6, tanh), 2)
)";
  CHECK(eval_show(p,
                  "size(m[1].weight), size(m[2].weight), length(m[3].μ), "
                  "size(c[:c].weight), size(c[:d].weight), size(mo(randn(3, 45)))") ==
        "((4, 3), (2, 4), 2, (3, 3, 1, 5), (80, 320), (6, 45))");
  CHECK(run_error("m = @autosize 3 Dense(_ => 2)")
            .find("@autosize takes the input's size as a tuple and a model") != std::string::npos);
  CHECK(run_error("m = @autosize (3,) _")
            .find("@autosize takes `_` as the size argument of a layer") != std::string::npos);
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

TEST_CASE("losses as Flux's tests pin them: integer targets, label_smoothing and margin checks") {
  CHECK(eval_show("", "Flux.kldivergence([1 2 3], [1 2 3]) ≈ 0") == "true");
  CHECK(run_error("label_smoothing([0.0, 1.0], 1.2)")
            .find("ArgumentError: α must be between 0 and 1") != std::string::npos);
  CHECK(run_error("Flux.siamese_contrastive_loss([0.1, 0.2], [1, 0]; margin=-1)")
            .find("DomainError with -1: Margin must be non-negative") != std::string::npos);
}

}  // namespace ytape::tracer::testing
