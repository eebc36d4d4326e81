// gradient, withgradient, value_and_gradient and pullback inside programs: at top level and
// inside traces, against `ytape grad` of the same function and against finite differences.
#include <doctest/doctest.h>

#include <cmath>

#include "grad/grad.h"
#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

const char* const kModel = R"(
struct Lin
  w
  b
  σ
  n::Int
end
(m::Lin)(x) = m.σ.(m.w * x .+ m.b)
loss(m, x) = sum(m(x) .^ 2) / m.n
m = Lin([0.5 -1.0 0.25; 1.5 0.75 -0.5], [0.1, -0.2], tanh, 2)
x = [1.0, -2.0, 0.5]
)";

// The outputs of `t` run on `inputs`.
std::vector<Tensor> run_tape(const Tape& t, const TensorMap& inputs) {
  Executor e(t);
  return e.run(inputs);
}

void check_same(const Tensor& a, const Tensor& b) {
  REQUIRE(a.type() == b.type());
  for (int64_t k = 0; k < a.size(); ++k)
    CHECK(element_value(a, k) == doctest::Approx(element_value(b, k)).epsilon(1e-12));
}

}  // namespace

TEST_CASE("gradient, withgradient and value_and_gradient at top level") {
  std::string p = R"(
struct Affine; w; b; end
(m::Affine)(x) = m.w * x .+ m.b
sq(m, x) = sum(m(x) .^ 2)
a = Affine(Float32[1 2; 3 4], Float32[0.5, -0.5])
)";
  CHECK(eval_show("f(x) = sum(x .^ 2)", "gradient(f, Float32[1, 2, 3])") ==
        "(Float32[2.0, 4.0, 6.0],)");
  CHECK(eval_show("", "gradient(x -> x^3, 2.0)") == "(12.0,)");
  // Structs give named tuples of their fields; a second argument its own gradient.
  CHECK(eval_show(p, "gradient(sq, a, Float32[1, 1])") ==
        "((w = Float32[7.0 7.0; 13.0 13.0], b = Float32[7.0, 13.0]), Float32[46.0, 66.0])");
  CHECK(eval_show(p, "withgradient(m -> sq(m, Float32[1, 1]), a)") ==
        "(val = 54.5f0, grad = ((w = Float32[7.0 7.0; 13.0 13.0], b = Float32[7.0, 13.0]),))");
  CHECK(eval_show(p, "value_and_gradient(sq, a, Float32[1, 1])[1]") == "54.5f0");
  // A tuple result: withgradient differentiates its first item and returns it whole.
  CHECK(eval_show(p, "withgradient(m -> (sq(m, Float32[1, 1]), :aux), a).val") == "(54.5f0, :aux)");
  // What has no gradient is nothing; an unused float argument gets zeros.
  CHECK(eval_show("", "gradient((x, n, y) -> n * sum(x), [1.0, 2.0], 3, [5.0])") ==
        "([3.0, 3.0], nothing, [0.0])");
  CHECK(eval_show("", "Zygote.gradient(x -> 2x, 1.5), Flux.withgradient(x -> 2x, 1.5).val") ==
        "((2.0,), 3.0)");
}

TEST_CASE("gradient inside a trace equals ytape grad of the same function") {
  std::string p = std::string(kModel) + "g(m, x) = gradient(loss, m, x)\n";
  Program in;
  in.run_text("t.jl", p);
  Traced inside = trace(in, "g", {"m", "x"});
  validate(inside.tape);
  Traced plain = trace(in, "loss", {"m", "x"});
  Tape g = grad::gradient(plain.tape);
  std::vector<Tensor> a = run_tape(inside.tape, inside.inputs);
  std::vector<Tensor> b = run_tape(g, plain.inputs);
  // out.1.w, out.1.b, out.2 against loss, grad.m.w, grad.m.b, grad.x; n and σ have none.
  REQUIRE(inside.tape.outputs.size() == 3);
  CHECK(inside.tape.outputs[0].name == "out.1.w");
  CHECK(inside.tape.outputs[2].name == "out.2");
  for (size_t k = 0; k < 3; ++k) check_same(a[k], b[k + 1]);
}

TEST_CASE("a gradient inside a trace matches finite differences") {
  // g's outputs are d(loss)/dw; compare each element with central differences of loss.
  std::string p = std::string(kModel) + "g(m, x) = gradient(m -> loss(m, x), m)[1].w\n";
  Program in;
  in.run_text("t.jl", p);
  Traced inside = trace(in, "g", {"m", "x"});
  Traced plain = trace(in, "loss", {"m", "x"});
  Tensor dw = run_tape(inside.tape, inside.inputs)[0];
  for (auto& [name, t] : plain.inputs) {
    if (name != "m.w") continue;
    for (int64_t k = 0; k < t.size(); ++k) {
      double h = 1e-6, w0 = t.data<double>()[k];
      Tensor saved = t;
      TensorMap up = plain.inputs, down = plain.inputs;
      auto at = [&](TensorMap& m, double v) {
        for (auto& [n, x] : m) {
          if (n != "m.w") continue;
          x = Tensor::of_bytes(
              x.type(), std::span<const uint8_t>(static_cast<const uint8_t*>(x.raw()), x.bytes()));
          x.data<double>()[k] = v;
        }
      };
      at(up, w0 + h);
      at(down, w0 - h);
      double fd = (run_tape(plain.tape, up)[0].data<double>()[0] -
                   run_tape(plain.tape, down)[0].data<double>()[0]) /
                  (2 * h);
      CHECK(dw.data<double>()[k] == doctest::Approx(fd).epsilon(1e-6));
    }
  }
}

TEST_CASE("a gradient of a gradient, and ytape grad through one, are exact") {
  // d/dx sum(d/dz sum(sin z)) = -sin x.
  CHECK(eval_show("h(x) = gradient(y -> sum(gradient(z -> sum(sin.(z)), y)[1]), x)[1]",
                  "h([0.0, 1.0]) == -sin.([0.0, 1.0])") == "true");
  check_trace_matches(
      "h(x) = gradient(y -> sum(gradient(z -> sum(sin.(z) .* z), y)[1]), x)[1]\n"
      "x = [0.3, -1.2, 2.0]",
      "h", {"x"});
  // The inlined backward ops differentiate again, to finite differences.
  check_gradient(
      "f(x) = sum(gradient(z -> sum(tanh.(z) .* exp.(z)), x)[1] .^ 2)\n"
      "x = [0.3, -1.2, 2.0]");
}

TEST_CASE("values a gradient's function closes over are constants of it") {
  // w is differentiated; x, captured from the trace below, is not, at any depth.
  std::string p = R"(
x = [0.5, -1.0]
w = [2.0, 3.0]
h(w, x) = gradient(w -> sum(tanh.(w .* x)), w)[1]
deep(w, x) = gradient(a -> sum(gradient(b -> sum(b .* b .* x), a)[1] .* x), w)[1]
)";
  check_trace_matches(p, "h", {"w", "x"});
  CHECK(eval_show(p, "h(w, x) == x .* (1 .- tanh.(w .* x) .^ 2)") == "true");
  // d/da sum(2 a x .* x) = 2 x .^ 2.
  CHECK(eval_show(p, "deep(w, x)") == "[0.5, 2.0]");
  check_trace_matches(p, "deep", {"w", "x"});
  // The same array as an argument and captured: only the argument is differentiated.
  CHECK(eval_show(p, "gradient(v -> sum(v .* w), w)[1]") == "[2.0, 3.0]");
}

TEST_CASE("a branch inside a gradient's function is a cond, or guarded under --loops unroll") {
  std::string p = R"(
f(x) = gradient(z -> sum(z) > 0 ? sum(z .^ 2) : -sum(z), x)[1]
x = [1.0, 2.0]
)";
  for (LoopMode mode : {LoopMode::auto_, LoopMode::unroll}) {
    CAPTURE(static_cast<int>(mode));
    Limits limits;
    limits.loops = mode;
    Program in(limits);
    in.run_text("t.jl", p);
    Traced t = trace(in, "f", {"x"});
    bool flat = mode == LoopMode::unroll;
    CHECK(print_tape(t.tape).find(flat ? "guard" : "cond(") != std::string::npos);
    Executor e(t.tape);
    CHECK(e.run(t.inputs)[0].data<double>()[1] == 4.0);
    TensorMap negative = t.inputs;
    negative[0].second.data<double>()[0] = -5.0;
    if (flat) {
      CHECK_THROWS_WITH_AS(e.run(negative),
                           doctest::Contains("was true when the program was traced"), UserError);
    } else {
      CHECK(e.run(negative)[0].data<double>()[1] == -1.0);  // the gradient of -sum(z)
    }
  }
}

TEST_CASE("errors of gradient") {
  CHECK(run_error("gradient(x -> x .* 2, [1.0, 2.0])")
            .find("gradient: the function must return a real number to differentiate, got an "
                  "Array{Float64, 1}") != std::string::npos);
  CHECK(run_error("gradient()").find("gradient(f, args...) needs a function") != std::string::npos);
  // A value of the gradient's trace kept past it.
  std::string leak = R"(
r = Ref([0.0])
function f(x)
  gradient(z -> (r[] = z; sum(z)), x)
  sum(r[])
end
x = [1.0]
)";
  CHECK(trace_error(leak, "f", {"x"}).find("used outside of it") != std::string::npos);
}

TEST_CASE("a training step with gradient traces to one deterministic tape") {
  std::string p = std::string(kModel) + R"(
function step(m, x)
  l, g = withgradient(m -> loss(m, x), m)
  Lin(m.w .- 0.1 .* g[1].w, m.b .- 0.1 .* g[1].b, m.σ, m.n), l
end
)";
  std::string text = trace_text(p, "step", {"m", "x"});
  CHECK(text == trace_text(p, "step", {"m", "x"}));
  // The returned model's arrays are outputs; its activation is static and is none.
  CHECK(text.find(" out.1.w\n") != std::string::npos);
  CHECK(text.find("out.1.σ") == std::string::npos);
  check_trace_matches(p + "flat(m, x) = (step(m, x)[1].w, step(m, x)[2])", "flat", {"m", "x"});
}

TEST_CASE("BatchNorm trains inside gradient, moving its running statistics, and tests outside") {
  std::string p = R"(
bn = BatchNorm(2)
x = Float32[1 2 3 4; -1 0 1 6]
function step(m, x)
  l, g = withgradient(m -> sum(m(x) .^ 2), m)
  m, l
end
flat(m, x) = (s = step(deepcopy(m), x); (s[1].μ, s[1].σ², s[2]))
evaluate(m, x) = m(x)
)";
  // Outside gradient: the running statistics (zeros and ones at first).
  CHECK(eval_show(p, "bn(x) == x ./ sqrt(1f0 + 1f-5)") == "true");
  // Inside: the batch's statistics, and the running ones move by momentum 0.1 towards
  // the batch mean and corrected variance: rows [1 2 3 4] (2.5, 5/3), [-1 0 1 6] (1.5, 29/3).
  CHECK(eval_show(p,
                  "g = gradient(m -> sum(m(x)), bn); bn.μ, "
                  "isapprox(bn.σ², [0.9 + 0.1 * 5 / 3, 0.9 + 0.1 * 29 / 3]; rtol=1e-6)") ==
        "(Float32[0.25, 0.15], true)");
  CHECK(eval_show(p, "gradient(m -> sum(m(x) .* x), bn)[1].bias") == "Float32[10.0, 6.0]");
  check_trace_matches(p, "flat", {"bn", "x"});
  check_trace_matches(p, "evaluate", {"bn", "x"});
  // The running statistics of a returned model are outputs; static settings are not.
  std::string text = trace_text(p, "step", {"bn", "x"});
  CHECK(text.find(" out.1.μ\n") != std::string::npos);
  CHECK(text.find("out.1.track_stats") == std::string::npos);
  // testmode! and trainmode! decide wherever the layer runs; track_stats=false always
  // normalizes with the batch's statistics and keeps none.
  CHECK(eval_show(p, "testmode!(bn); gradient(m -> sum(m(x)), bn); bn.μ") == "Float32[0.0, 0.0]");
  CHECK(eval_show(p, "trainmode!(bn); bn(x); bn.μ") == "Float32[0.25, 0.15]");
  CHECK(eval_show("b = BatchNorm(2; track_stats=false)", "b(Float32[1 3; 2 2])") ==
        "Float32[-0.999995 0.999995; 0.0 0.0]");
  check_gradient(
      "bn = BatchNorm(2)\nf(x) = sum(gradient(m -> sum(m(x) .^ 3), bn)[1].weight)\n"
      "x = [1.0 2.0 3.0 4.0; -1.0 0.0 1.0 6.0]");
}

TEST_CASE("dropgrad, ignore_derivatives and @non_differentiable stop the gradient") {
  // d/dx sum(x .* c) with c = x held constant is c, not 2x.
  CHECK(eval_show("", "gradient(x -> sum(x .* dropgrad(x)), [1.0, 2.0])") == "([1.0, 2.0],)");
  CHECK(eval_show("", "gradient(x -> sum(x .* Zygote.dropgrad(x .^ 2)), [1.0, 2.0])") ==
        "([1.0, 4.0],)");
  CHECK(eval_show("", "gradient(x -> x * ignore_derivatives(() -> 3x), 2.0)") == "(6.0,)");
  CHECK(eval_show("", "gradient(x -> x * ChainRulesCore.ignore_derivatives(3x), 2.0)") == "(6.0,)");
  CHECK(eval_show("", "gradient(x -> (c = @ignore_derivatives x^2; c * x), 3.0)") == "(9.0,)");
  CHECK(eval_show("", "gradient(x -> x * Zygote.@ignore(sin(x)), 0.5) == (sin(0.5),)") == "true");
  // Through tuples and immutable structs; integers, strings and functions pass as they are.
  CHECK(eval_show("struct P; a; b; end",
                  "gradient(x -> (t = dropgrad((x, P(x, \"s\"))); x * t[1] + t[2].a), 2.0)") ==
        "(2.0,)");
  CHECK(eval_show("", "dropgrad((1, \"s\", sin, [1.0]))") == "(1, \"s\", sin, [1.0])");
  // Every method of a function declared non-differentiable, by either macro.
  std::string p = R"(
sq(x) = x .^ 2
sq(x, k) = x .^ k
ChainRulesCore.@non_differentiable sq(::Any)
cube(x) = x^3
Zygote.@nograd cube
)";
  CHECK(eval_show(p, "gradient(x -> sum(x .* sq(x)), [1.0, 2.0])") == "([1.0, 4.0],)");
  CHECK(eval_show(p, "gradient(x -> sum(x .* sq(x, 3)), [2.0])") == "([8.0],)");
  CHECK(eval_show(p, "gradient(x -> x * cube(x), 2.0)") == "(8.0,)");
  CHECK(eval_show(p, "sq([3.0])") == "[9.0]");
  CHECK(run_error("@non_differentiable 3(::Any)").find("a function's signature") !=
        std::string::npos);
}

TEST_CASE("inside gradient an rrule gives the value on concrete arguments, as Zygote's calls") {
  // Flux's istraining(): false, but true inside a gradient through its rrule.
  std::string p = R"(
istraining() = false
ChainRulesCore.rrule(::typeof(istraining)) = true, _ -> (NoTangent(),)
f(x) = istraining() ? 2x : x
sq(x) = x^2
ChainRulesCore.rrule(::typeof(sq), x) = sq(x), dy -> (NoTangent(), 100dy)
)";
  CHECK(eval_show(p, "f(1.0), gradient(f, 1.0), withgradient(f, 1.0).val") == "(1.0, (2.0,), 2.0)");
  // On traced arguments the rule is used (tests/unit/tracer/interp_rules_test.cc).
  CHECK(eval_show(p, "gradient(sq, 3.0)") == "(100.0,)");
  CHECK(run_error("h() = 1\nrrule(::typeof(h)) = 1\ngradient(x -> x * h(), 1.0)")
            .find("rrule for h returned an Int64, not (value, pullback)") != std::string::npos);
}

TEST_CASE("an @adjoint rule gives its function's derivative") {
  std::string p = R"(
sq(x) = x^2
@adjoint sq(x) = sq(x), dy -> (100dy,)
@adjoint function Broadcast.broadcasted(f::typeof(sq), args...)
  Zygote.∇map(__context__, f, args...)
end
)";
  CHECK(eval_show(p, "gradient(sq, 3.0), sq.([1.0, 2.0])") == "((100.0,), [1.0, 4.0])");
}

TEST_CASE("a traced dropgrad is a stop_gradient op that ytape grad does not differentiate") {
  Program in;
  in.run_text("t.jl", "f(x) = sum(x .* dropgrad(x .^ 2))\nx = [1.0, -2.0, 3.0]");
  Traced t = trace(in, "f", {"x"});
  validate(t.tape);
  int stops = 0;
  for (const Op& op : t.tape.ops)
    stops += op.kind == OpKind::call && op.prim == Prim::stop_gradient;
  CHECK(stops == 1);
  Tape g = grad::gradient(t.tape);
  std::vector<Tensor> out = run_tape(g, t.inputs);
  REQUIRE(out.size() == 2);
  CHECK(out[0].data<double>()[0] == doctest::Approx(1 - 8 + 27));
  for (int k = 0; k < 3; ++k) {
    double x = t.inputs.begin()->second.data<double>()[k];
    CHECK(out[1].data<double>()[k] == doctest::Approx(x * x));
  }
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

}  // namespace ytape::tracer::testing

namespace ytape::tracer::testing {

TEST_CASE("jvp, pushforward and hvp in programs: forward mode, at top level and traced") {
  std::string p = R"(
f(x, y) = sum(sin.(x) .* y)
x = [0.5, 1.0]; y = [2.0, 3.0]
g(x) = sum(x .^ 3)
h(x) = jvp(f, (x, y), (ones(2), zeros(2)))[2]
)";
  // d/dt f(x + t e1, y) = cos(0.5) * 2; the value first, as JAX's jvp.
  CHECK(eval_show(p, "jvp(f, (x, y), ([1.0, 0.0], [0.0, 0.0])) == (f(x, y), 2cos(0.5))") == "true");
  CHECK(eval_show(p, "jvp(x -> x .^ 2, (x,), (ones(2),))") == "([0.25, 1.0], [1.0, 2.0])");
  CHECK(eval_show(p, "pushforward(f, x, y)([0.0, 1.0], zeros(2)) == 3cos(1.0)") == "true");
  CHECK(eval_show(p, "hvp(g, x, [1.0, 0.0]), hvp(g, x, [0.0, 1.0])") == "([3.0, 0.0], [0.0, 6.0])");
  // A jvp inside a traced function differentiates in reverse mode too.
  CHECK(eval_show(p, "gradient(h, x)[1] == -sin.(x) .* y") == "true");
  check_gradient("f(x) = sum(jvp(x -> exp.(x) .* x, (x,), (x,))[2])\nx = [0.5, -1.0, 2.0]");
  // A tangent's shape is its argument's; a result that does not depend on it has zeros.
  CHECK(run_error(p + "jvp(f, (x, y), (ones(3), zeros(2)))")
            .find("jvp: the tangent of arg1 is f64[3], but the argument is f64[2]") !=
        std::string::npos);
  CHECK(eval_show(p, "jvp(x -> (sum(x), 2.0), (x,), (ones(2),))") == "((1.5, 2.0), (2.0, 0.0))");
  CHECK(run_error("jvp(sin, 1.0, 1.0)").find("jvp takes f, a tuple of its arguments") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
