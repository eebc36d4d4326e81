// `if` and `while` on traced values traced as cond and while_loop ops
// (tracer/interp/interp_branch.cc): one tape that runs every input correctly, with exact
// gradients, where unrolling or guarding would need a trace per input.
#include <doctest/doctest.h>

#include <cmath>

#include "check/gradcheck.h"
#include "grad/grad.h"
#include "unit/tracer/interp_helpers.h"

using namespace ytape;
using namespace ytape::tracer;
using namespace ytape::tracer::testing;

namespace {

Traced trace_with(const std::string& program, const std::string& entry,
                  const std::vector<std::string>& args, Limits limits = {}) {
  Program in(limits);
  in.run_text("t.jl", program);
  Traced t = trace(in, entry, args);
  validate(t.tape);
  return t;
}

int count(const Tape& t, Prim p) {
  int n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == p;
  return n;
}

Tensor scalar(double v) {
  Tensor t(Type{DType::f64, {}});
  t.data<double>()[0] = v;
  return t;
}

double run1(const Tape& t, const TensorMap& inputs, size_t output = 0) {
  return Executor(t).run(inputs).at(output).data<double>()[0];
}

const char* kNewton = R"(
a = 2.0
x0 = 1.5
function root(a, x0)
  x = x0
  while abs(x * x - a) > 1e-12
    x = (x + a / x) / 2
  end
  3 * x * x + x
end
)";

}  // namespace

TEST_CASE("Newton's square root traces once and runs for 3 trips and for 35") {
  Traced t = trace_with(kNewton, "root", {"a", "x0"});
  REQUIRE(count(t.tape, Prim::while_loop) == 1);
  CHECK(count(t.tape, Prim::guard) == 0);
  const Op* loop = nullptr;
  for (const Op& op : t.tape.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::while_loop) loop = &op;
  }
  CHECK(attrs_of<Prim::while_loop>(loop->attrs).max_trips == kDefaultMaxTrips);
  Tape g = grad::gradient(t.tape);
  for (double x0 : {1.5, 1e9}) {
    CAPTURE(x0);
    TensorMap inputs{{"a", scalar(2.0)}, {"x0", scalar(x0)}};
    double r = std::sqrt(2.0);
    CHECK(run1(t.tape, inputs) == doctest::Approx(3 * 2.0 + r).epsilon(1e-12));
    // d/da (3 r^2 + r), r = sqrt(a): 3 + 1 / (2 r).
    CHECK(run1(g, inputs, 1) == doctest::Approx(3 + 1 / (2 * r)).epsilon(1e-9));
    CHECK(check::gradcheck(t.tape, inputs, {}).ok);
  }
}

TEST_CASE("@max_trips and --max-trips bound a loop, and one past the bound fails at its line") {
  std::string bounded = std::string(kNewton);
  bounded.replace(bounded.find("  while"), 7, "  @max_trips 7 while");
  Traced t = trace_with(bounded, "root", {"a", "x0"});
  TensorMap far{{"a", scalar(2.0)}, {"x0", scalar(1e9)}};
  CHECK_THROWS_WITH_AS(Executor(t.tape).run(far),
                       doctest::Contains("at t.jl:6: the loop's condition still holds after "
                                         "max_trips=7 trips"),
                       UserError);
  Limits limits;
  limits.max_trips = 40;
  Traced wide = trace_with(kNewton, "root", {"a", "x0"}, limits);
  CHECK(run1(wide.tape, far) == doctest::Approx(6 + std::sqrt(2.0)));
}

TEST_CASE("an adaptive step count and an integer counter are carried by a while_loop") {
  std::string program = R"(
y0 = 1.0
dt = 0.1
function decay(y0, dt)
  t = 0.0
  y = y0
  n = 0
  while t < 1.0
    y = y - dt * y
    t = t + dt
    n += 1
  end
  y * n
end
)";
  Traced t = trace_with(program, "decay", {"y0", "dt"});
  CHECK(count(t.tape, Prim::while_loop) == 1);
  for (double dt : {0.1, 0.01, 0.25}) {
    CAPTURE(dt);
    // The loop's own arithmetic: trips while t < 1, t summed in f64 as the loop sums it.
    double tt = 0, y = 1;
    int n = 0;
    while (tt < 1.0) {
      y = y - dt * y;
      tt = tt + dt;
      ++n;
    }
    TensorMap inputs{{"y0", scalar(1.0)}, {"dt", scalar(dt)}};
    CHECK(run1(t.tape, inputs) == doctest::Approx(y * n).epsilon(1e-12));
    CHECK(check::gradcheck(t.tape, inputs, {.wrt = {"y0"}}).ok);
  }
}

TEST_CASE("an if on a traced Bool is a cond: both sides from one tape, exact gradients") {
  std::string program = R"(
x = [1.0, -3.0, 0.5]
w = [0.5, 2.0, -1.0]
function f(x, w)
  y = x .* w
  if sum(x) > 0
    y = y .* 2
    z = exp.(x)
  else
    z = x .* x
  end
  s = sum(y .+ z)
  sum(w) > 1 ? s * s : -s
end
)";
  Traced t = trace_with(program, "f", {"x", "w"});
  CHECK(count(t.tape, Prim::cond) == 2);
  CHECK(count(t.tape, Prim::guard) == 0);
  Traced flat = trace_with(program, "f", {"x", "w"}, Limits{.loops = LoopMode::unroll});
  CHECK(count(flat.tape, Prim::cond) == 0);
  auto f = [](const double* x, const double* w) {
    double sx = x[0] + x[1] + x[2], sw = w[0] + w[1] + w[2], s = 0;
    for (int i = 0; i < 3; ++i)
      s += x[i] * w[i] * (sx > 0 ? 2 : 1) + (sx > 0 ? std::exp(x[i]) : x[i] * x[i]);
    return sw > 1 ? s * s : -s;
  };
  const double xs[][3] = {{1.0, -3.0, 0.5}, {1.0, 3.0, 0.5}};
  const double ws[][3] = {{0.5, 2.0, -1.0}, {0.5, 0.25, -1.0}};
  for (const auto& x : xs) {
    for (const auto& w : ws) {
      TensorMap inputs = t.inputs;
      for (int i = 0; i < 3; ++i) {
        inputs[0].second.data<double>()[i] = x[i];
        inputs[1].second.data<double>()[i] = w[i];
      }
      CHECK(run1(t.tape, inputs) == doctest::Approx(f(x, w)).epsilon(1e-12));
      CHECK(check::gradcheck(t.tape, inputs, {}).ok);
    }
  }
}

TEST_CASE("an if whose sides give different types is guarded as before") {
  std::string program = R"(
x = [1.0, 2.0]
f(x) = sum(x) > 0 ? sum(x) : x
)";
  Traced t = trace_with(program, "f", {"x"});
  CHECK(count(t.tape, Prim::cond) == 0);
  CHECK(count(t.tape, Prim::guard) == 1);
}

TEST_CASE("an if inside a scan's body is a cond inside it") {
  std::string program = R"(
xs = randn(3, 12)
function f(xs)
  h = zeros(3)
  for t in 1:12
    x = xs[:, t]
    if sum(x) > 0
      h = tanh.(h .+ x)
    else
      h = h .* 0.5
    end
  end
  sum(h)
end
)";
  Traced t = trace_with(program, "f", {"xs"});
  REQUIRE(count(t.tape, Prim::scan) == 1);
  const Op* scan = nullptr;
  for (const Op& op : t.tape.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::scan) scan = &op;
  }
  CHECK(count(scan->regions[0], Prim::cond) == 1);
  Traced flat = trace_with(program, "f", {"xs"}, Limits{.loops = LoopMode::unroll});
  CHECK(run1(t.tape, t.inputs) == doctest::Approx(run1(flat.tape, flat.inputs)).epsilon(1e-12));
  CHECK(check::gradcheck(t.tape, t.inputs, {}).ok);
}

TEST_CASE("&& and || of traced conditions are computed whole: one region op, no guard") {
  std::string program = R"(
a = 2.0
x0 = 1.5
function root(a, x0)
  x = x0
  n = 0
  while abs(x * x - a) > 1e-12 && n < 100
    x = (x + a / x) / 2
    n += 1
  end
  x > 1 || a < 0 ? x : -x
end
)";
  Traced t = trace_with(program, "root", {"a", "x0"});
  CHECK(count(t.tape, Prim::while_loop) == 1);
  CHECK(count(t.tape, Prim::cond) == 1);
  CHECK(count(t.tape, Prim::guard) == 0);
  for (double x0 : {1.5, 1e9}) {
    TensorMap inputs{{"a", scalar(2.0)}, {"x0", scalar(x0)}};
    CHECK(run1(t.tape, inputs) == doctest::Approx(std::sqrt(2.0)).epsilon(1e-12));
  }
  // A side that is not a plain condition (a return) still runs only where the other lets it.
  std::string early = R"(
x = [1.0, 2.0]
function f(x)
  sum(x) > 0 && return sum(x)
  -sum(x)
end
)";
  Traced g = trace_with(early, "f", {"x"});
  CHECK(count(g.tape, Prim::guard) == 1);
}
