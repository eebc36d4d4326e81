// gradcheck itself: a central difference that straddles a kink is retried, not judged;
// a wrong gradient still fails; NaN shows as NaN; the verdict does not change between runs.
#include "check/gradcheck.h"

#include <doctest/doctest.h>

#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "check/kinks.h"
#include "tape/builder.h"
#include "tape/print.h"
#include "tape/validate.h"

namespace ytape::check {

namespace {

// loss = sum(f(x)) for x of `n` f64 elements.
Tape sum_of(Prim f, int64_t n) {
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {n}});
  b.output(b.sum(b.call1(f, {x}), {.dims = {1}}), "loss");
  return b.finish();
}

TensorMap values(std::initializer_list<double> xs) {
  Tensor t(Type{DType::f64, {static_cast<int64_t>(xs.size())}});
  std::copy(xs.begin(), xs.end(), t.data<double>());
  return {{"x", t}};
}

// The decisions with_decisions adds for one op of `p` on f64 values: an elementwise op of
// one or two arguments, or a KINK or JUMP op of another family with the attributes here
// (nullopt for other primitives).
std::optional<size_t> decisions_of(Prim p) {
  static const std::map<Prim, Attrs> kOthers = {
      {Prim::maximum, {{"dims", std::vector<int64_t>{1}}}},
      {Prim::minimum, {{"dims", std::vector<int64_t>{1}}}},
      {Prim::argmax, {{"dim", 1}}},
      {Prim::max_pool2d,
       {{"window", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}}}},
      {Prim::max_pool2d_with_indices,
       {{"window", std::vector<int64_t>{2, 2}}, {"stride", std::vector<int64_t>{2, 2}}}}};
  const PrimInfo& info = prim_info(p);
  bool elementwise = info.elementwise() && info.arity <= 2 && info.attrs.empty();
  auto other = kOthers.find(p);
  if (!elementwise && other == kOthers.end()) return std::nullopt;
  Builder b("op");
  std::vector<Var> args;
  for (int i = 0; i < (elementwise ? info.arity : 1); ++i) {
    args.push_back(b.input("x" + std::to_string(i), Type{DType::f64, {4, 4, 1, 1}}));
  }
  b.output(b.call(p, args, elementwise ? Attrs{} : other->second)[0], "y");
  Tape t = b.finish();
  return with_decisions(t).outputs.size() - t.outputs.size();
}

}  // namespace

TEST_CASE("every KINK and JUMP primitive makes one decision, and smooth elementwise ones none") {
  for (Prim p : all_prims()) {
    const PrimInfo& info = prim_info(p);
    CAPTURE(info.name);
    std::optional<size_t> decisions = decisions_of(p);
    if (info.kink() || info.jump()) REQUIRE(decisions.has_value());
    if (decisions) CHECK(*decisions == (info.kink() || info.jump() ? 1u : 0u));
  }
}

TEST_CASE("with_decisions adds one decision output per choice, after the outputs") {
  Builder b("f");
  Var x = b.input("x", Type{DType::f64, {2, 3}});
  Var r = b.relu(x);
  Var m = b.maximum(r, {.dims = std::vector<int64_t>{1}});
  Var s = b.sin(m);
  b.output(b.sum(b.max(s, b.constant(DType::f64, 0.5)), {.dims = {1}}), "y");
  Tape t = with_decisions(b.finish());
  validate(t);
  REQUIRE(t.outputs.size() == 4);
  CHECK(t.outputs[0].name == "y");
  CHECK(t.outputs[1].name == "decision.1");  // relu: sign(x)
  CHECK(t.type(t.outputs[1].var) == Type{DType::f64, {2, 3}});
  CHECK(t.type(t.outputs[2].var) == Type{DType::boolean, {2, 3}});  // x == maximum
  CHECK(t.type(t.outputs[3].var) == Type{DType::boolean, {3}});     // s >= 0.5
}

TEST_CASE("a difference across relu's kink is retried with a smaller step, not judged") {
  // At 3e-7 a step of 1e-6 crosses zero: the central difference is 0.65, the slope 1.
  Tape t = sum_of(Prim::relu, 3);
  GradcheckResult r = gradcheck(t, values({3e-7, -0.5, 2.0}), {});
  INFO(gradcheck_table(r));
  CHECK(r.ok);
  CHECK(r.inputs.at(0).checks == 3);
  CHECK(r.inputs.at(0).kinks == 0);
  CHECK(r.inputs.at(0).max_abs < 1e-6);
}

TEST_CASE("a point on a kink is skipped and reported, apart from mismatches") {
  // abs at exactly 0: every step lands on both sides.
  Tape t = sum_of(Prim::abs, 2);
  GradcheckResult r = gradcheck(t, values({0.0, 1.5}), {});
  std::string table = gradcheck_table(r);
  INFO(table);
  CHECK(r.ok);
  CHECK(r.inputs.at(0).checks == 1);
  CHECK(r.inputs.at(0).kinks == 1);
  CHECK(table.find("ok (1 crossed a kink)") != std::string::npos);
  CHECK(table.find("1 of the checks were skipped") != std::string::npos);
}

TEST_CASE("two kinks crossed at once are seen, though their signs flip together") {
  // loss = relu(x) + 3 relu(x - 2e-7) at x = 5e-8: the slope is 1, but a step of 1e-6
  // flips both relus and gives 1.9. Each relu's decision flips one bit of a sign, so a
  // hash of the signs could let the two cancel; the check must retry at a smaller step.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {1}});
  Var shifted = b.sub(x, b.constant(DType::f64, 2e-7));
  Var y = b.add(b.relu(x), b.mul(b.constant(DType::f64, 3.0), b.relu(shifted)));
  b.output(b.sum(y, {.dims = {1}}), "loss");
  GradcheckResult r = gradcheck(b.finish(), values({5e-8}), {});
  INFO(gradcheck_table(r));
  CHECK(r.ok);
  CHECK(r.inputs.at(0).checks == 1);
  CHECK(r.inputs.at(0).max_abs < 1e-6);
}

TEST_CASE("a difference that disagrees with the gradient fails") {
  // A step far too large for sum(x sin x): the central difference is off by O(eps^2),
  // which zero tolerances must not accept, nor the retries at 10 and 100 eps.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {2}});
  b.output(b.sum(b.mul(x, b.sin(x)), {.dims = {1}}), "loss");
  GradcheckOptions o;
  o.eps = 1e-2;
  o.rtol = 0;
  o.atol = 0;
  GradcheckResult r = gradcheck(b.finish(), values({0.7, -1.2}), o);
  CHECK_FALSE(r.ok);
  CHECK(gradcheck_table(r).find("FAIL") != std::string::npos);
}

TEST_CASE("finite differences hold stop_gradient values, as the gradient does") {
  // loss = sum(x .* stop_gradient(x .^ 2)): the gradient is x² (not 3x²), which differences
  // of the function with x² held confirm.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {3}});
  Var held = b.stop_gradient(b.mul(x, x));
  b.output(b.sum(b.mul(x, held), {.dims = {1}}), "loss");
  Tape t = b.finish();
  GradcheckResult r = gradcheck(t, values({0.7, -1.2, 2.0}), {});
  CHECK_MESSAGE(r.ok, gradcheck_table(r));
  REQUIRE(r.inputs.size() == 1);  // the held values are not checked as inputs
  CHECK(r.inputs[0].checks == 3);
  Builder wrong("loss");
  Var y = wrong.input("x", Type{DType::f64, {3}});
  Var cube = wrong.mul(y, wrong.mul(y, y));
  wrong.output(wrong.sum(wrong.stop_gradient(cube), {.dims = {1}}), "loss");
  // A loss stopped whole: no gradient, and held, no change.
  CHECK(gradcheck(wrong.finish(), values({0.7, -1.2, 2.0}), {}).ok);
}

TEST_CASE("rounding noise from terms that cancel inside f is outgrown with a larger step") {
  // f = Σ (10⁶ x + sin x) - 10⁶ x: f's value is small, but its terms are 10⁶, so the
  // difference at eps 1e-6 carries noise of about 6e-5, above the tolerance; at 100 eps
  // the noise is 6e-7 and the truncation error 1e-9.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {2}});
  Var big = b.mul(x, b.constant(DType::f64, 1e6));
  b.output(b.sum(b.sub(b.add(big, b.sin(x)), big), {.dims = {1}}), "loss");
  Tape t = b.finish();
  GradcheckResult r = gradcheck(t, values({0.3, 1.2}), {});
  CHECK_MESSAGE(r.ok, gradcheck_table(r));
}

TEST_CASE("truncation error where f''' is large is outgrown with a smaller step") {
  // f = Σ cos(10⁴ x): f' is -10⁴ sin(10⁴ x) and f''' is 10¹² sin(10⁴ x), so the central
  // difference errs by eps² f''' / 6, 1.7e-5 of f' at eps 1e-6 (above the tolerance) and
  // 1.7e-7 of it at eps/10.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {2}});
  b.output(b.sum(b.cos(b.mul(x, b.constant(DType::f64, 1e4))), {.dims = {1}}), "loss");
  Tape t = b.finish();
  GradcheckResult r = gradcheck(t, values({0.3, 1.2}), {});
  CHECK_MESSAGE(r.ok, gradcheck_table(r));
}

TEST_CASE("NaN is reported as NaN, not as an error of 0") {
  Tape t = sum_of(Prim::sqrt, 2);
  GradcheckResult r = gradcheck(t, values({-1.0, 4.0}), {});
  CHECK_FALSE(r.ok);
  CHECK(std::isnan(r.inputs.at(0).max_abs));
  CHECK(gradcheck_table(r).find("nan") != std::string::npos);
}

TEST_CASE("the verdict and figures are the same every time") {
  Tape t = sum_of(Prim::relu, 40);
  Tensor x(Type{DType::f64, {40}});
  for (int i = 0; i < 40; ++i) x.data<double>()[i] = (i - 20) * 1e-7;
  GradcheckOptions o;
  o.max_elements = 0;  // random directions
  o.directions = 5;
  std::string first = gradcheck_table(gradcheck(t, {{"x", x}}, o));
  for (int run = 0; run < 3; ++run) CHECK(gradcheck_table(gradcheck(t, {{"x", x}}, o)) == first);
}
TEST_CASE("the run options reach every run, and the figures stay the same") {
  // sin(x) * x + tanh(x): a fused group with fusion on; reference kernels, plain layouts.
  Builder b("loss");
  Var x = b.input("x", Type{DType::f64, {700}});
  b.output(b.sum(b.add(b.mul(b.sin(x), x), b.tanh(x)), {.dims = {1}}), "loss");
  Tape t = b.finish();
  Tensor v(Type{DType::f64, {700}});
  for (int i = 0; i < 700; ++i) v.data<double>()[i] = std::sin(i);
  GradcheckOptions o;
  GradcheckResult fused = gradcheck(t, {{"x", v}}, o);
  CHECK(fused.ok);
  o.executor.fusion = false;
  o.executor.kernels = KernelSet::reference;
  o.executor.blocked_layouts = false;
  GradcheckResult plain = gradcheck(t, {{"x", v}}, o);
  CHECK(gradcheck_table(plain) == gradcheck_table(fused));
}

}  // namespace ytape::check
