// Flux's implicit style, as the model zoo's scripts train: gradient(() -> ..., params),
// Grads, pullback, Flux.Optimise's update! and train!, and the plumbing of those scripts
// (@epochs, @with_kw, macros of unused code, PROGRAM_FILE, ENV, CUDA's questions,
// ProgressMeter's Progress, DrWatson's struct2dict).
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

const char* const kChain = R"(
using Flux
Random.seed!(3)
m = Chain(Dense(3, 4, tanh), Dense(4, 2))
x = rand(3, 5)
y = rand(2, 5)
loss(m, x, y) = Flux.mse(m(x), y)
ps = Flux.params(m)
)";

}  // namespace

TEST_CASE("gradient(() -> ..., params) equals the explicit gradient, looked up by array") {
  std::string p = std::string(kChain) + R"(
gs = gradient(() -> loss(m, x, y), ps)
ge = gradient(m -> loss(m, x, y), m)[1]
d1 = maximum(abs.(gs[m[1].weight] .- ge.layers[1].weight))
d2 = maximum(abs.(gs[m[2].bias] .- ge.layers[2].bias))
)";
  CHECK(eval_show(p, "d1, d2") == "(0.0f0, 0.0f0)");
  CHECK(eval_show(p, "length(gs), haskey(gs, m[1].bias), haskey(gs, x)") == "(4, true, false)");
  // The arrays hold their own values again after the gradient.
  CHECK(eval_show(p, "m[1].weight isa Matrix{Float32}") == "true");
  // An array of the parameters that the loss does not use has a zero gradient (as an
  // unused float argument has), and one not among them is an error.
  CHECK(eval_show(p, "sum(abs, gradient(() -> sum(m[2].bias), ps)[m[1].weight])") == "0.0f0");
  CHECK(run_error(p + "gs[x]").find("KeyError: this array is not one of the parameters") !=
        std::string::npos);
  // Traced: the same numbers as the interpreter's.
  check_trace_matches(p + "f(m, x, y) = gradient(() -> loss(m, x, y), Flux.params(m))[m[1].weight]",
                      "f", {"m", "x", "y"});
}

TEST_CASE("pullback: the value, and gradients scaled by the cotangent") {
  std::string p = std::string(kChain) + R"(
l, back = Flux.pullback(() -> loss(m, x, y), ps)
g1 = back(1f0)
g2 = back(2.0)
le, backe = pullback((m, x) -> loss(m, x, y), m, x)
)";
  CHECK(eval_show(p, "l == loss(m, x, y), g2[m[1].weight] == 2 .* g1[m[1].weight]") ==
        "(true, true)");
  CHECK(eval_show(p, "le == l, backe(1)[1].layers[2].bias == g1[m[2].bias]") == "(true, true)");
  CHECK(eval_show(p, "backe(1)[2] == gradient(x -> loss(m, x, y), x)[1]") == "true");
}

TEST_CASE("Flux.Optimise.update! steps the arrays in place, state kept per rule and array") {
  // Three implicit Adam steps equal three steps of Optimisers' explicit update.
  std::string p = std::string(kChain) + R"(
m2 = deepcopy(m)
opt = ADAM(0.01)
for i in 1:3
  gs = gradient(() -> loss(m, x, y), ps)
  Flux.Optimise.update!(opt, ps, gs)
end
st = Optimisers.setup(Adam(0.01), m2)
for i in 1:3
  g = gradient(m -> loss(m, x, y), m2)[1]
  st, m2 = Optimisers.update(st, m2, g)
end
d = maximum(abs.(m[1].weight .- m2.layers[1].weight)) + maximum(abs.(m[2].bias .- m2.layers[2].bias))
)";
  CHECK(eval_show(p, "d < 1e-12, m[1].weight === ps[1]") == "(true, true)");
  // One array with Descent: x -= η dx.
  CHECK(eval_show("w = [1.0, 2.0]; Flux.Optimise.update!(Descent(0.5), w, [2.0, 2.0]); w", "w") ==
        "[0.0, 1.0]");
  CHECK(eval_show("Optimiser(WeightDecay(0.1), ADAM(0.01))", "1") == "1");
}

TEST_CASE("Flux.train!(loss, params, data, opt; cb) and @epochs, as the model zoo calls them") {
  std::string p = std::string(kChain) + R"(
data = Flux.DataLoader((x, y), batchsize=2)
lossxy(x, y) = loss(m, x, y)
calls = Ref(0)
before = lossxy(x, y)
@epochs 3 Flux.train!(lossxy, ps, data, Descent(0.1), cb = () -> calls[] += 1)
)";
  Program in;
  std::string printed;
  in.set_print([&](std::string_view line) { printed += std::string(line) + "\n"; });
  in.run_text("t.jl", p);
  CHECK(printed == "[ Info: Epoch 1\n[ Info: Epoch 2\n[ Info: Epoch 3\n");
  CHECK(show(in.eval_text("calls[], lossxy(x, y) < before")) == "(9, true)");
}

TEST_CASE("jacobian and hessian, by gradients of gradients") {
  std::string p = "f(x) = sum(x .^ 3) + x[1] * x[2]";
  CHECK(eval_show(p, "hessian(f, [1.0, 2.0])") == "[6.0 1.0; 1.0 12.0]");
  CHECK(eval_show(p, "jacobian((x, y) -> x .* y, [1.0, 2.0], [3.0, 4.0])") ==
        "([3.0 0.0; 0.0 4.0], [1.0 0.0; 0.0 2.0])");
  // Integer arguments are taken as floats; hessian_dual and hessian_reverse are hessian.
  CHECK(eval_show(p, "Zygote.hessian_dual(f, [1, 2]) == Zygote.hessian_reverse(f, [1.0, 2.0])") ==
        "true");
  CHECK(eval_show("", "Float32 <: AbstractFloat, Int <: AbstractFloat, Real >: Int") ==
        "(true, false, true)");
}

TEST_CASE("implicit parameters must be a vector of arrays") {
  CHECK(run_error("gradient(() -> 1.0, 3)")
            .find("gradient(() -> ..., ps): the parameters are a vector of arrays, as "
                  "Flux.params(m) gives, got an Int64") != std::string::npos);
}

TEST_CASE("a vector of values is an AbstractVector, and Tuple(v) its items") {
  CHECK(eval_show("g(x::AbstractVector) = 1\ng(x) = 2\ng(x::Tuple) = 3", "g([]), g((1,))") ==
        "(1, 3)");
  CHECK(eval_show("v = Any[1, :a]", "Tuple(v), Any[]") == "((1, :a), Any[])");
  // A generator over a matrix keeps its shape, as a comprehension does.
  CHECK(eval_show("m = [1.0 2.0; 3.0 4.0]", "collect(x^2 for x in m), sum(x for x in m)") ==
        "([1.0 4.0; 9.0 16.0], 10.0)");
  CHECK(eval_show("v = Any[1, :a]", "findfirst(x -> x === :a, v), findlast(iseven, [2, 4, 5])") ==
        "(2, 2)");
}

TEST_CASE("a script's plumbing: PROGRAM_FILE, @__FILE__, cd, ENV, CUDA's questions") {
  CHECK(eval_show("", "abspath(\"a/./b/../c.jl\") == abspath(\"a/c.jl\")") == "true");
  CHECK(eval_show("", "@__FILE__, @__DIR__") == "(\"<eval>\", \".\")");
  CHECK(eval_show("ENV[\"K\"] = \"v\"", "ENV[\"K\"], haskey(ENV, \"HOME\")") == "(\"v\", false)");
  CHECK(eval_show("", "CUDA.functional(), has_cuda(), CUDA.allowscalar(false)") ==
        "(false, false, nothing)");
  CHECK(run_error("cd(\"no/such/folder\")").find("cd: 'no/such/folder' is not a folder") !=
        std::string::npos);
  // @with_kw is @kwdef.
  CHECK(eval_show("@with_kw mutable struct A\n  η::Float64 = 3e-4\n  n::Int = 2\nend",
                  "A(n = 5).n, A().η") == "(5, 0.0003)");
}

TEST_CASE("a macro the language lacks is an error where it runs, not where it is read") {
  // A function the program never calls may use one (BSON.@save in a checkpoint function).
  CHECK(run_error("save(m) = BSON.@save \"m.bson\" m\nx = 1") == "no error");
  CHECK(run_error("f(x) = @time x\nf(1)")
            .find("t.jl:1:8: the macro @time is not supported; "
                  "the supported ones are @., @assert,") == 0);
  CHECK(run_error("y = @asert x > 0").find("; did you mean '@assert'?") != std::string::npos);
}

TEST_CASE("ProgressMeter's Progress and next! count the steps; DrWatson's struct2dict") {
  std::string p = R"(
p = Progress(3)
for loss in (1.0, 0.5)
  next!(p; showvalues=[(:loss, loss)])
end
mutable struct Args
  η
  epochs
end
)";
  CHECK(eval_show(p, "p.counter, p.n") == "(2, 3)");
  CHECK(eval_show(p, "d = struct2dict(Args(0.1, 3)); d[:η], d[:epochs], length(d)") ==
        "(0.1, 3, 2)");
}

}  // namespace ytape::tracer::testing
