// The cond and while_loop kernels (docs/regions.md): the branch the selector names runs; a
// loop runs as many trips as its condition asks, and one past max_trips is an error.
#include <doctest/doctest.h>

#include <cmath>

#include "kernel_harness.h"
#include "runtime/executor.h"
#include "tape/error.h"
#include "tape/validate.h"
#include "unit/tape/branch_tapes.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

TensorMap branch_inputs(Tensor selector) {
  return {{"s", std::move(selector)},
          {"x", make_tensor({DType::f64, {3}}, {0.5, -1.0, 2.0})},
          {"w", make_tensor({DType::f64, {3}}, {1.5, 0.25, -3.0})}};
}

// loss of branchy for y = f(x, w): sum(y .* y) + sum(y).
double loss_of(double (*f)(double, double)) {
  const double x[] = {0.5, -1.0, 2.0}, w[] = {1.5, 0.25, -3.0};
  double total = 0;
  for (int i = 0; i < 3; ++i) total += f(x[i], w[i]) * f(x[i], w[i]) + f(x[i], w[i]);
  return total;
}

double run1(const Tape& t, const TensorMap& inputs) {
  return Executor(t).run(inputs)[0].data<double>()[0];
}

TensorMap newton_inputs(double a, double x0) {
  return {{"a", make_tensor({DType::f64, {}}, {a})}, {"x0", make_tensor({DType::f64, {}}, {x0})}};
}

}  // namespace

TEST_CASE("a cond runs the branch its selector names, from one tape") {
  Tape t = branchy();
  auto then_ = [](double x, double w) { return x * w; };
  auto else_ = [](double x, double w) { return std::exp(x) + w; };
  Executor e(t);
  // One executor, both sides, in turn: each branch's buffers stay right.
  for (int round = 0; round < 2; ++round) {
    CHECK(e.run(branch_inputs(make_tensor({DType::boolean, {}}, {1})))[0].data<double>()[0] ==
          doctest::Approx(loss_of(then_)).epsilon(1e-14));
    CHECK(e.run(branch_inputs(make_tensor({DType::boolean, {}}, {0})))[0].data<double>()[0] ==
          doctest::Approx(loss_of(else_)).epsilon(1e-14));
  }
}

TEST_CASE("a cond on an i64 selector runs case k, and refuses a selector outside 1..N") {
  Tape t = branchy(true);
  auto third = [](double x, double w) { return x - w; };
  CHECK(run1(t, branch_inputs(make_tensor({DType::i64, {}}, {3}))) ==
        doctest::Approx(loss_of(third)).epsilon(1e-14));
  for (double s : {0.0, 4.0}) {
    std::string want = fmt::format("its selector is {}; it chooses one of the cases 1..3", s);
    CHECK_THROWS_WITH_AS(run1(t, branch_inputs(make_tensor({DType::i64, {}}, {s}))),
                         doctest::Contains(want.c_str()), UserError);
  }
}

TEST_CASE("a while_loop runs as many trips as its condition asks") {
  Tape t = newton(100);
  // From x0 = 1.5 Newton needs 3 trips to reach sqrt(2) within 1e-12; from 1e9, about 35.
  for (double x0 : {1.5, 1e9}) {
    CAPTURE(x0);
    double root = std::sqrt(2.0);
    CHECK(run1(t, newton_inputs(2.0, x0)) == doctest::Approx(3 * 2.0 + root).epsilon(1e-12));
  }
  // A condition false at once: no trip, the initial carries.
  CHECK(run1(t, newton_inputs(4.0, 2.0)) == 3 * 4.0 + 2.0);
}

TEST_CASE("a while_loop whose condition holds after max_trips stops with an error") {
  Tape t = newton(10);
  CHECK(run1(t, newton_inputs(2.0, 1.5)) == doctest::Approx(6 + std::sqrt(2.0)));
  CHECK_THROWS_WITH_AS(run1(t, newton_inputs(2.0, 1e9)),
                       doctest::Contains("the loop's condition still holds after max_trips=10 "
                                         "trips; it is never cut short"),
                       UserError);
  // Unbounded, it runs to the end.
  CHECK(run1(newton(0), newton_inputs(2.0, 1e9)) == doctest::Approx(6 + std::sqrt(2.0)));
}

TEST_CASE("a scan with running stops once its flag is false; one with a mask skips steps") {
  const TensorMap given{{"x0", make_tensor({DType::f64, {}}, {0})},
                        {"run0", make_tensor({DType::boolean, {}}, {1})},
                        {"v", make_tensor({DType::f64, {5}}, {1, 2, 3, 4, 5})},
                        {"m", make_tensor({DType::boolean, {5}}, {1, 0, 1, 0, 1})}};
  auto run = [&](const Tape& t) { return Executor(t).run(inputs_of(t, given)); };
  // x = x v + v: 1, then 4, which stops it; the steps not run yield zeros.
  std::vector<Tensor> got = run(skipping_scan(false));
  check_close(got[0], {4}, 0, 0);
  check_close(got[1], {1, 4, 0, 0, 0}, 0, 0);
  got = run(skipping_scan(true));  // steps 1, 3 and 5
  check_close(got[0], {35}, 0, 0);
  check_close(got[1], {1, 0, 6, 0, 35}, 0, 0);
  got = run(skipping_scan(true, true));  // steps 5, 3 and 1
  check_close(got[0], {19}, 0, 0);
  check_close(got[1], {19, 0, 18, 0, 5}, 0, 0);
}

TEST_CASE("a scan's running names a bool[] carry and its mask a bool[length] xs") {
  auto with = [](bool mask, int64_t index) {
    Tape t = skipping_scan(mask);
    for (Op& op : t.ops) {
      if (op.prim != Prim::scan || op.kind != OpKind::call) continue;
      auto a = attrs_of<Prim::scan>(op.attrs);
      (mask ? a.mask : a.running) = index;
      op.attrs = a.to_attrs();
    }
    return t;
  };
  CHECK_THROWS_WITH_AS(validate(with(false, 3)),
                       doctest::Contains("running=3 names none of its 2 carries"), UserError);
  CHECK_THROWS_WITH_AS(validate(with(false, 1)),
                       doctest::Contains("running=1 names carry 1, a f64[]; it says whether the "
                                         "scan runs, a bool[]"),
                       UserError);
  CHECK_THROWS_WITH_AS(validate(with(true, 1)),
                       doctest::Contains("mask=1 names xs 1, a f64[5]; it says which steps run, "
                                         "a bool[5]"),
                       UserError);
}
