// The gradients of cond and while_loop (grad/rules/control_while.cc): exact on each side of
// a cond, a bounded while's equal to finite differences and to the derivative of its result,
// to second order.
#include <doctest/doctest.h>

#include <cmath>

#include "check/gradcheck.h"
#include "grad/grad.h"
#include "grad/jvp.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "unit/runtime/kernel_harness.h"
#include "unit/tape/branch_tapes.h"

using namespace ytape;
using namespace ytape::testing;
using ytape::check::gradcheck;

namespace {

TensorMap branch_inputs(Tensor selector) {
  return {{"s", std::move(selector)},
          {"x", make_tensor({DType::f64, {3}}, {0.5, -1.0, 2.0})},
          {"w", make_tensor({DType::f64, {3}}, {1.5, 0.25, -3.0})}};
}

TensorMap newton_inputs(double a, double x0) {
  return {{"a", make_tensor({DType::f64, {}}, {a})}, {"x0", make_tensor({DType::f64, {}}, {x0})}};
}

}  // namespace

TEST_CASE("a cond's gradient is exact on both sides of its selector") {
  Tape t = branchy();
  Tape g = grad::gradient(t);
  const double x[] = {0.5, -1.0, 2.0}, w[] = {1.5, 0.25, -3.0};
  for (bool side : {true, false}) {
    CAPTURE(side);
    TensorMap inputs = branch_inputs(make_tensor({DType::boolean, {}}, {side ? 1.0 : 0.0}));
    std::vector<Tensor> got = Executor(g).run(inputs);
    REQUIRE(got.size() == 3);  // loss, grad.x, grad.w
    std::vector<double> dx, dw;
    for (int i = 0; i < 3; ++i) {
      // loss = sum(y^2 + y): dloss/dy = 2y + 1.
      double y = side ? x[i] * w[i] : std::exp(x[i]) + w[i], dy = 2 * y + 1;
      dx.push_back(dy * (side ? w[i] : std::exp(x[i])));
      dw.push_back(dy * (side ? x[i] : 1.0));
    }
    check_close(got[1], dx, 1e-14, 1e-14);
    check_close(got[2], dw, 1e-14, 1e-14);
    CHECK(gradcheck(t, inputs, {}).ok);
    CHECK(gradcheck(g, inputs, {}).ok);  // second order: the VJP branches' own gradient
  }
  Tape cases = branchy(true);
  for (double s : {1.0, 2.0, 3.0}) {
    CAPTURE(s);
    TensorMap inputs = branch_inputs(make_tensor({DType::i64, {}}, {s}));
    CHECK(gradcheck(cases, inputs, {}).ok);
  }
}

TEST_CASE("a bounded while_loop's gradient is that of its result, for 3 trips and for 35") {
  Tape t = newton(100);
  Tape g = grad::gradient(t);
  for (double x0 : {1.5, 1e9}) {
    CAPTURE(x0);
    TensorMap inputs = newton_inputs(2.0, x0);
    std::vector<Tensor> got = Executor(g).run(inputs);
    REQUIRE(got.size() == 3);  // y, grad.a, grad.x0
    // y = 3 r^2 + r with r = sqrt(a): dy/da = (6 r + 1) / (2 r); converged, x0 no longer counts.
    double r = std::sqrt(2.0);
    CHECK(got[1].data<double>()[0] == doctest::Approx((6 * r + 1) / (2 * r)).epsilon(1e-9));
    CHECK(std::abs(got[2].data<double>()[0]) < 1e-6);
    CHECK(gradcheck(t, inputs, {}).ok);
  }
  // Second order, through the bounded form's scan and its conds.
  CHECK(gradcheck(g, newton_inputs(2.0, 1.5), {}).ok);
}

TEST_CASE("a while_loop's gradient needs max_trips, and keeps to it at run time") {
  CHECK_THROWS_WITH_AS(grad::gradient(newton(0)), doctest::Contains("has max_trips=0"), UserError);
  Tape g = grad::gradient(newton(10));
  CHECK(Executor(g).run(newton_inputs(2.0, 1.5))[0].data<double>()[0] ==
        doctest::Approx(6 + std::sqrt(2.0)));
  CHECK_THROWS_WITH_AS(Executor(g).run(newton_inputs(2.0, 1e9)),
                       doctest::Contains("still holds after max_trips=10 trips"), UserError);
}

TEST_CASE("the gradient of a scan that skips steps runs its backward over the steps run") {
  const TensorMap given{{"x0", make_tensor({DType::f64, {}}, {0.5})},
                        {"run0", make_tensor({DType::boolean, {}}, {1})},
                        {"v", make_tensor({DType::f64, {5}}, {1.5, 2, 0.5, 4, 1.25})},
                        {"m", make_tensor({DType::boolean, {5}}, {1, 0, 1, 0, 1})}};
  for (int form = 0; form < 3; ++form) {
    CAPTURE(form);
    Tape t = skipping_scan(form > 0, form == 2, true);
    TensorMap inputs = inputs_of(t, given);
    CHECK(gradcheck(t, inputs, {}).ok);
    CHECK(gradcheck(grad::gradient(t), inputs, {}).ok);  // second order: a masked backward
  }
}

TEST_CASE("a while_loop's backward runs the trips its forward took, not max_trips") {
  // Body runs of each region op, run from 1.5.
  auto trips = [](const Tape& t) {
    Executor e(t);
    e.set_profiling(true);
    e.run(newton_inputs(2.0, 1.5));
    std::vector<int64_t> out;
    for (const Op& op : t.ops) {
      if (op.kind != OpKind::call || op.regions.empty()) continue;
      const Executor* body = e.region_executor(op.regions.back());
      out.push_back(body == nullptr ? 0 : body->profiled_runs());
    }
    return out;
  };
  std::vector<int64_t> taken = trips(newton(1000));
  REQUIRE(taken.size() == 1);
  CHECK(taken[0] > 2);
  // The forward keeping its steps, and the backward.
  CHECK(trips(grad::gradient(newton(1000))) == std::vector<int64_t>{taken[0], taken[0]});
}

TEST_CASE("forward mode carries tangents through a cond and a while_loop, unbounded") {
  // The cond's tangent along (ẋ, ẇ): dloss = sum((2y + 1) ẏ), ẏ = ẋ w + x ẇ or e^x ẋ + ẇ.
  Tape c = grad::jvp(branchy());
  validate(c);
  const double x[] = {0.5, -1.0, 2.0}, w[] = {1.5, 0.25, -3.0}, dx[] = {1, 2, -1}, dw[] = {0, 1, 3};
  for (bool side : {true, false}) {
    CAPTURE(side);
    TensorMap in = branch_inputs(make_tensor({DType::boolean, {}}, {side ? 1.0 : 0.0}));
    in.emplace_back("tangent.x", make_tensor({DType::f64, {3}}, {dx[0], dx[1], dx[2]}));
    in.emplace_back("tangent.w", make_tensor({DType::f64, {3}}, {dw[0], dw[1], dw[2]}));
    double want = 0;
    for (int i = 0; i < 3; ++i) {
      double y = side ? x[i] * w[i] : std::exp(x[i]) + w[i];
      double dy = side ? dx[i] * w[i] + x[i] * dw[i] : std::exp(x[i]) * dx[i] + dw[i];
      want += (2 * y + 1) * dy;
    }
    CHECK(Executor(c).run(in)[1].data<double>()[0] == doctest::Approx(want).epsilon(1e-13));
  }
  // Newton's root r = sqrt(a): dr/da = 1 / (2r); y = 3r² + r. max_trips=0 (unbounded) is
  // fine: forward mode stores nothing, and the loop carries x and its tangent.
  Tape n = grad::jvp(newton(0), {.wrt = {"a"}});
  validate(n);
  int loops = 0;
  for (const Op& op : n.ops) loops += op.kind == OpKind::call && op.prim == Prim::while_loop;
  CHECK(loops == 1);
  TensorMap in = newton_inputs(2.0, 1.5);
  in.emplace_back("tangent.a", make_tensor({DType::f64, {}}, {1.0}));
  double r = std::sqrt(2.0);
  CHECK(Executor(n).run(in)[1].data<double>()[0] ==
        doctest::Approx((6 * r + 1) / (2 * r)).epsilon(1e-9));
}
