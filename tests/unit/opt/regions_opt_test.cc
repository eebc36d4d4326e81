// The passes inside regions (docs/regions.md): `optimize` treats a scan's body as a tape,
// and the scan computes the same before and after.
#include <doctest/doctest.h>

#include "opt/optimize.h"
#include "runtime/executor.h"
#include "tape/builder.h"
#include "tape/print.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

// A body (w; h; x) -> (next, y) with a repeated op, a multiplication by one and dead code.
Tape wasteful_body() {
  Builder b;
  Var w = b.input("w", {DType::f64, {3}});
  Var h = b.input("h", {DType::f64, {3}});
  Var x = b.input("x", {DType::f64, {3}});
  Var e1 = b.exp(b.mul(w, h));
  Var e2 = b.exp(b.mul(w, h));                       // the same as e1
  Var one = b.mul(e2, b.constant(DType::f64, 1.0));  // e2
  b.sin(x);                                          // read by nothing
  b.output(b.tanh(b.add(e1, x)), "");
  b.output(b.add(e1, one), "");
  return b.finish();
}

}  // namespace

TEST_CASE("optimize simplifies a scan's body and keeps what the scan computes") {
  Builder b("outer");
  Var w = b.input("w", {DType::f64, {3}});
  Var h0 = b.input("h0", {DType::f64, {3}});
  Var xs = b.input("xs", {DType::f64, {3, 5}});
  std::vector<Var> r = b.scan({w}, {h0}, {xs}, wasteful_body(), 5);
  b.output(r[0], "h");
  b.output(r[1], "ys");
  Tape t = b.finish();
  Tape o = optimize(t);
  validate(o);
  const Tape& body = o.ops.back().regions[0];
  CHECK(body.num_ops() < t.ops.back().regions[0].num_ops());
  CHECK(print_tape(body).find("sin") == std::string::npos);
  CHECK(body.num_inputs() == 3);  // a body's parameters stay: the op passes them
  TensorMap inputs;
  std::vector<double> wv{0.1, -0.2, 0.3}, hv{1, 2, 3}, xv(15);
  for (size_t i = 0; i < xv.size(); ++i) xv[i] = 0.1 * static_cast<double>(i) - 0.7;
  auto tensor = [](Type type, const std::vector<double>& v) {
    Tensor out(type);
    std::copy(v.begin(), v.end(), out.data<double>());
    return out;
  };
  inputs = {{"w", tensor({DType::f64, {3}}, wv)},
            {"h0", tensor({DType::f64, {3}}, hv)},
            {"xs", tensor({DType::f64, {3, 5}}, xv)}};
  std::vector<Tensor> before = Executor(t).run(inputs), after = Executor(o).run(inputs);
  for (size_t k = 0; k < before.size(); ++k) {
    REQUIRE(before[k].size() == after[k].size());
    for (int64_t i = 0; i < before[k].size(); ++i) {
      CHECK(before[k].data<double>()[i] == after[k].data<double>()[i]);
    }
  }
}
