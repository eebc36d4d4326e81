// A program's own derivatives (docs/rules.md): rrule, @adjoint and @scalar_rule calls are
// custom_rule ops whose pullback `ytape grad` uses; gradcheck checks each rule alone and
// names the one that disagrees.
#include <doctest/doctest.h>

#include <algorithm>
#include <cmath>

#include "grad/grad.h"
#include "grad/jvp.h"
#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

// Flux's src/losses/utils.jl (0.14), its code as published, and its losses.
const char* const kFluxLosses = R"(
using Flux, Zygote, ChainRulesCore
function xlogx(x)
  result = x * log(x)
  ifelse(iszero(x), zero(result), result)
end
function xlogy(x, y)
  result = x * log(y)
  ifelse(iszero(x), zero(result), result)
end
@adjoint function broadcasted(::typeof(xlogy), x::Zygote.Numeric, y::Zygote.Numeric)
  res = xlogy.(x, y)
  res, Δ -> (nothing, Zygote.unbroadcast(x, xlogy.(Δ, y)), Zygote.unbroadcast(y, Δ .* x ./ y))
end
ChainRulesCore.@scalar_rule xlogy(x, y) (log(y), x/y)  # should help Diffractor's broadcasting
ChainRulesCore.@scalar_rule xlogx(x) (log(y) + true)
ce(ŷ, y) = mean(.-sum(xlogy.(y, ŷ .+ 1e-7); dims = 1))
bce(ŷ, y) = mean(@.(-xlogy(y, ŷ + 1e-7) - xlogy(1 - y, 1 - ŷ + 1e-7)))
function kl(ŷ, y)
  entropy = sum(xlogx.(y); dims = 1)
  cross_entropy = .-sum(xlogy.(y, ŷ .+ 1e-7); dims = 1)
  mean(entropy .+ cross_entropy)
end
ŷ = [0.2 0.5; 0.3 0.25; 0.5 0.25]
onehot = [0.0 1.0; 1.0 0.0; 0.0 0.0]
soft = [0.1 0.6; 0.7 0.3; 0.2 0.1]
)";

int count(const Tape& t, Prim p) {
  int n = 0;
  for (const Op& op : t.ops) {
    n += op.kind == OpKind::call && op.prim == p;
    for (const Tape& r : op.regions) n += count(r, p);
  }
  return n;
}

// The gradient of `entry` on `args` (the tape's gradients, after its value).
std::vector<Tensor> gradients(const std::string& program, const std::string& entry,
                              const std::vector<std::string>& args, Traced* traced = nullptr) {
  Program in;
  in.run_text("t.jl", program);
  Traced t = trace(in, entry, args);
  validate(t.tape);
  Tape g = grad::gradient(t.tape);
  validate(g);
  Executor e(g);
  std::vector<Tensor> out = e.run(t.inputs);
  if (traced != nullptr) *traced = std::move(t);
  return out;
}

}  // namespace

TEST_CASE("Flux's xlogy rule: crossentropy's gradient in a one-hot target is -log(ŷ)") {
  Traced t;
  std::vector<Tensor> g = gradients(kFluxLosses, "ce", {"ŷ", "onehot"}, &t);
  // One op, the broadcast's rule (xlogy's scalar rule is inside its pullback).
  CHECK(std::count_if(t.tape.ops.begin(), t.tape.ops.end(),
                      [](const Op& op) { return op.prim == Prim::custom_rule; }) == 1);
  REQUIRE(g.size() == 3);
  const double* yhat = t.inputs[0].second.data<double>();
  for (int k = 0; k < 6; ++k) {
    // d/dy of mean over 2 columns of -y log(ŷ + ϵ): at y = 0 too, where xlogy's code says 0.
    CHECK(g[2].data<double>()[k] == doctest::Approx(-std::log(yhat[k] + 1e-7) / 2));
  }
  for (const char* f : {"ce", "bce", "kl"}) {
    for (const char* target : {"onehot", "soft"}) {
      if (std::string(f) == "kl" && std::string(target) == "onehot") continue;  // log(0)
      Program in;
      in.run_text("t.jl", kFluxLosses);
      Traced c = trace(in, f, {"ŷ", target});
      check::GradcheckResult r = check::gradcheck(c.tape, c.inputs, {});
      CHECK_MESSAGE(r.ok, f, " ", target, "\n", check::gradcheck_table(r));
      CHECK(!r.rules.empty());
    }
  }
  // xlogx's rule reads an undefined `y` (Flux's own slip): it is not used, and says so; the
  // derivative is xlogx's code's, which is Zygote's (its broadcast takes dual numbers).
  Program in;
  in.run_text("t.jl", kFluxLosses);
  trace(in, "kl", {"ŷ", "soft"});
  CHECK(in.output().find("ytape: note: ") != std::string::npos);
  CHECK(in.output().find("the rule for xlogx (t.jl:16) is not used") != std::string::npos);
}

TEST_CASE("an rrule's pullback is the gradient, as written: a clipped gradient") {
  std::string p = R"(
clip(x) = x
function ChainRulesCore.rrule(::typeof(clip), x)
  y = clip(x)
  clip_pullback(dy) = (NoTangent(), clamp.(dy, -1, 1))
  return y, clip_pullback
end
f(x) = sum(3 .* clip(x) .^ 2)
x = [0.125, -0.25, 2.0]
)";
  Traced t;
  std::vector<Tensor> g = gradients(p, "f", {"x"}, &t);
  // 6x clamped to [-1, 1]: 0.75, -1, 1.
  CHECK(g[1].data<double>()[0] == doctest::Approx(0.75));
  CHECK(g[1].data<double>()[1] == doctest::Approx(-1.0));
  CHECK(g[1].data<double>()[2] == doctest::Approx(1.0));
  // Run forward, the op is its body.
  check_trace_matches(p, "f", {"x"});
  // Inside a program's gradient too.
  CHECK(eval_show(p, "gradient(f, x)") == "([0.75, -1.0, 1.0],)");
  // gradcheck names the rule: it disagrees with clip's code on purpose.
  check::GradcheckResult r = check::gradcheck(t.tape, t.inputs, {});
  CHECK(!r.ok);
  REQUIRE(r.rules.size() == 1);
  CHECK(r.rules[0].name == "clip");
  CHECK(r.rules[0].rule == "t.jl:3");
  CHECK(r.rules[0].call == "t.jl:8");
  CHECK(!r.rules[0].ok);
  CHECK(check::gradcheck_table(r).find("the rule for clip (t.jl:3) disagrees") !=
        std::string::npos);
}

TEST_CASE("vmap of a function with a rule: its pullback batched, a shared operand's summed") {
  std::string p = R"(
clip(x) = x
function ChainRulesCore.rrule(::typeof(clip), x)
  clip_pullback(dy) = (NoTangent(), clamp.(dy, -1, 1))
  return clip(x), clip_pullback
end
f(w, x) = sum(3 .* clip(w .* x) .^ 2)
g(w, xs) = sum(vmap(x -> f(w, x), xs))
w = [0.5, 1.0, -2.0]
xs = [0.25 1.0; -0.5 0.125; 1.0 0.0]
loop(w, xs) = gradient(f, w, xs[:, 1])[1] .+ gradient(f, w, xs[:, 2])[1]
scale(w, x) = w .* x
ChainRulesCore.rrule(::typeof(scale), w, x) = scale(w, x), dy -> (NoTangent(), 2 .* dy .* x, dy .* w)
f2(w, x) = sum(scale(w, x) .^ 2)
g2(w, xs) = sum(vmap(x -> f2(w, x), xs))
loop2(w, xs) = gradient(f2, w, xs[:, 1])[1] .+ gradient(f2, w, xs[:, 2])[1]
)";
  // Example 1's cotangent 6 w x = [0.75, -3, -12] clamped to [0.75, -1, -1], times x.
  CHECK(eval_show(p, "gradient(f, w, xs[:, 1])[1]") == "[0.1875, 0.5, -1.0]");
  CHECK(eval_show(p, "gradient(g, w, xs)[1]") == eval_show(p, "loop(w, xs)"));
  CHECK(eval_show(p, "gradient(g, w, xs)[2][:, 1]") == eval_show(p, "gradient(f, w, xs[:, 1])[2]"));
  CHECK(eval_show(p, "gradient(g, w, xs)[2][:, 2]") == eval_show(p, "gradient(f, w, xs[:, 2])[2]"));
  CHECK(eval_show(p, "g(w, xs)") == eval_show(p, "f(w, xs[:, 1]) + f(w, xs[:, 2])"));
  // w is shared by the examples: the batched pullback sums its cotangents (the rule's, twice
  // the true one, so that the body's derivative would not pass).
  CHECK(eval_show(p, "gradient(g2, w, xs)[1]") == eval_show(p, "loop2(w, xs)"));
  CHECK(eval_show(p, "loop2(w, xs)") != eval_show(p, "2 .* w .* sum(xs .^ 2; dims=2)[:, 1]"));
}

TEST_CASE("gradcheck names a rule whose pullback is wrong, and passes a right one") {
  std::string p = R"(
sq(x) = x .^ 2
good(x) = x .^ 3
ChainRulesCore.rrule(::typeof(sq), x) = sq(x), dy -> (NoTangent(), 3 .* x .* dy)
ChainRulesCore.rrule(::typeof(good), x) = good(x), dy -> (NoTangent(), @thunk(3 .* x .^ 2 .* dy))
f(x) = sum(sq(x) .+ good(x))
x = [0.5, -1.5]
)";
  Program in;
  in.run_text("t.jl", p);
  Traced t = trace(in, "f", {"x"});
  check::GradcheckResult r = check::gradcheck(t.tape, t.inputs, {});
  CHECK(!r.ok);
  REQUIRE(r.rules.size() == 2);
  CHECK((r.rules[0].name == "sq" && !r.rules[0].ok));
  CHECK((r.rules[1].name == "good" && r.rules[1].ok));
}

TEST_CASE("@scalar_rule and @adjoint: each decides its function's derivative") {
  std::string p = R"(
soft(x) = log(1 + exp(x))
@scalar_rule soft(x) @setup(s = 1 / (1 + exp(-x))) (2s,)
twice(x) = 2x
Zygote.@adjoint twice(x) = twice(x), Δ -> (5Δ,)
f(x) = sum(soft.(x)) + sum(twice(x))
x = [0.0, 1.0]
)";
  std::vector<Tensor> g = gradients(p, "f", {"x"});
  for (int k = 0; k < 2; ++k) {
    double x = k;
    CHECK(g[1].data<double>()[k] == doctest::Approx(2 / (1 + std::exp(-x)) + 5));
  }
  check_trace_matches(p, "f", {"x"});
  // Scalar calls too, and Ω (the function's value) in the partials.
  std::string q = R"(
e(x) = exp(x)
@scalar_rule e(x) Ω + 1
g(x) = e(x) * 2
x = 0.5
)";
  CHECK(eval_show(q, "gradient(g, x)") == eval_show("", "(2 * (exp(0.5) + 1),)"));
}

TEST_CASE("second order differentiates the pullback") {
  std::string p = R"(
cube(x) = x^3
ChainRulesCore.rrule(::typeof(cube), x) = cube(x), dy -> (NoTangent(), 3x^2 * dy)
d(x) = gradient(cube, x)[1]
)";
  CHECK(eval_show(p, "gradient(d, 2.0)") == "(12.0,)");
  // The gradient tape's own gradient, checked against finite differences.
  std::string q = R"(
cube(x) = x .^ 3
ChainRulesCore.rrule(::typeof(cube), x) = cube(x), dy -> (NoTangent(), 3 .* x .^ 2 .* dy)
f(x) = sum(cube(x) .* x)
x = [0.5, -1.5, 2.0]
)";
  Program in;
  in.run_text("t.jl", q);
  Traced t = trace(in, "f", {"x"});
  Tape g = grad::gradient(t.tape);
  check::GradcheckResult r = check::gradcheck(g, t.inputs, {});
  CHECK_MESSAGE(r.ok, check::gradcheck_table(r));
}

TEST_CASE("an frule is the op's pushforward, which forward mode uses") {
  // A clip whose forward rule scales its tangent by 2 (to tell it from the code's 1).
  std::string p = R"(
clip(x) = x
ChainRulesCore.rrule(::typeof(clip), x) = clip(x), dy -> (NoTangent(), clamp.(dy, -1, 1))
ChainRulesCore.frule((ṡelf, ẋ), ::typeof(clip), x) = clip(x), 2 .* ẋ
f(x) = sum(clip(x) .* x)
x = [0.5, -1.0]
)";
  Program in;
  in.run_text("t.jl", p);
  Traced t = trace(in, "f", {"x"});
  auto rule = std::find_if(t.tape.ops.begin(), t.tape.ops.end(),
                           [](const Op& op) { return op.prim == Prim::custom_rule; });
  REQUIRE(rule != t.tape.ops.end());
  REQUIRE(rule->regions.size() == 3);
  CHECK(rule->regions[2].name == "pushforward");
  Tape j = grad::jvp(t.tape);
  validate(j);
  TensorMap inputs = t.inputs;
  Tensor v(Type{DType::f64, {2}});
  v.data<double>()[0] = v.data<double>()[1] = 1.0;
  inputs.emplace_back("tangent.x", v);
  // d/dt of sum(clip(x + t) .* (x + t)) with clip's tangent 2: sum(2x + x) = -1.5.
  CHECK(Executor(j).run(inputs)[1].data<double>()[0] == doctest::Approx(-1.5));
  CHECK(eval_show(p, "jvp(f, (x,), ([1.0, 1.0],))[2]") == "-1.5");
  // Reverse mode still takes the pullback: 2x clamped... of sum(clip(x) .* x): dy = x.
  CHECK(eval_show(p, "gradient(f, x)") == "([1.0, -2.0],)");
}

TEST_CASE("a rule that cannot be a region is not used, with a note") {
  std::string p = R"(
loud(x) = (println("hi"); x .* 2)
ChainRulesCore.rrule(::typeof(loud), x) = loud(x), dy -> (NoTangent(), 7 .* dy)
f(x) = sum(loud(x))
x = [1.0, 2.0]
)";
  Program in;
  in.run_text("t.jl", p);
  Traced t = trace(in, "f", {"x"});
  CHECK(count(t.tape, Prim::custom_rule) == 0);
  CHECK(in.output().find("the rule for loud (t.jl:3) is not used") != std::string::npos);
  Program bad;
  bad.run_text("t.jl", "h(x) = sum(x)\nrrule(::typeof(h), x) = 1\ngradient(h, [1.0])");
  CHECK(bad.output().find("the rule for h (t.jl:2) is not used") != std::string::npos);
  CHECK(bad.output().find("returned an Int64, not (value, pullback)") != std::string::npos);
}

}  // namespace ytape::tracer::testing
