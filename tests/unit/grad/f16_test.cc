// Gradients of f16 tapes: the rules are dtype-generic, so an f16 tape's gradient is an f16
// tape; its values are checked against central differences of the same function in f64.
#include <doctest/doctest.h>

#include <cmath>

#include "grad/grad.h"
#include "runtime/eval.h"
#include "runtime/executor.h"
#include "tape/builder.h"
#include "tape/float16.h"
#include "tape/validate.h"

namespace ytape::grad {

namespace {

// loss = sum(softplus(W * x .+ b) .* x[1,1]) / 4: matmul, broadcasting, fan-out, a
// reduction and a division by a constant.
Tape loss(DType d) {
  Builder b("loss");
  Var w = b.input("w", Type{d, {2, 3}});
  Var x = b.input("x", Type{d, {3, 2}});
  Var bias = b.input("b", Type{d, {2, 1}});
  Var h = b.softplus(b.add(b.matmul(w, x), bias));
  Var x11 = b.reshape(b.slice(x, {.start = {1, 1}, .stop = {1, 1}, .step = {1, 1}}), {.shape = {}});
  Var s = b.sum(b.mul(h, x11), {.dims = {1, 2}});
  b.output(b.div(s, b.constant(d, 4.0)), "loss");
  return b.finish();
}

// Inputs whose values f16 holds exactly, as f16 or f64 tensors.
TensorMap inputs(DType d) {
  TensorMap out;
  int k = 0;
  for (auto [name, shape] :
       {std::pair<const char*, Shape>{"w", {2, 3}}, {"x", {3, 2}}, {"b", {2, 1}}}) {
    Tensor t(Type{DType::f64, shape});
    for (int64_t i = 0; i < t.size(); ++i) {
      t.data<double>()[i] = f16_to_f32(f16_from_double(std::sin(++k) * 1.5));
    }
    out.emplace_back(
        name, d == DType::f64 ? t : evaluate(Prim::convert, std::span(&t, 1), {{"dtype", d}})[0]);
  }
  return out;
}

double run_loss(const Tape& t, const TensorMap& in) {
  return Executor(t).run(in)[0].data<double>()[0];
}

}  // namespace

TEST_CASE("the gradient of an f16 tape is f16 and matches f64 finite differences") {
  Tape g = gradient(loss(DType::f16));
  validate(g);
  std::vector<Tensor> got = Executor(g).run(inputs(DType::f16));
  REQUIRE(got.size() == 4);
  Tape f64 = loss(DType::f64);
  TensorMap at = inputs(DType::f64);
  for (size_t k = 0; k < 3; ++k) {
    const Tensor& dx = got[k + 1];
    CAPTURE(g.outputs[k + 1].name);
    CHECK(dx.dtype() == DType::f16);
    for (int64_t i = 0; i < dx.size(); ++i) {
      double& v = at[k].second.data<double>()[i];
      const double x = v, eps = 1e-6;
      v = x + eps;
      double up = run_loss(f64, at);
      v = x - eps;
      double down = run_loss(f64, at);
      v = x;
      double want = (up - down) / (2 * eps);
      CHECK(std::abs(element_value(dx, i) - want) <= 1e-2 + 1e-2 * std::abs(want));
    }
  }
}

}  // namespace ytape::grad
