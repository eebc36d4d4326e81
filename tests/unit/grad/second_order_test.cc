// Second derivatives: differentiating a gradient tape gives Hessians and Hessian-vector
// products.
#include <doctest/doctest.h>

#include <cmath>

#include "grad/grad.h"
#include "grad/jvp.h"
#include "io/json.h"
#include "opt/promote.h"
#include "runtime/executor.h"
#include "runtime/inputs.h"
#include "runtime/random.h"
#include "tape/validate.h"
#include "tracer/program.h"
#include "tracer/trace.h"

namespace ytape::grad {

namespace {

Tensor vec(std::vector<double> v) {
  Tensor t(Type{DType::f64, {static_cast<int64_t>(v.size())}});
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

// The outputs named `grad.grad.*`..., i.e. those after the first `skip`.
std::vector<Tensor> tail(std::vector<Tensor> outs, size_t skip) {
  return {outs.begin() + static_cast<long>(skip), outs.end()};
}

}  // namespace

TEST_CASE("the Hessian of Rosenbrock's function") {
  tracer::Program in;
  in.run_text(
      "r.jl",
      "rosenbrock(x) = sum(100 .* (x[2:end] .- x[1:end-1] .^ 2) .^ 2 .+ (1 .- x[1:end-1]) .^ 2)\n"
      "x = [-1.2, 1.0, 0.5]\n");
  Tape f = tracer::trace(in, "rosenbrock", {"x"}).tape;
  Tape g = gradient(f);                 // outputs: out, grad.x
  Tape h = gradient(g, {{"x"}, true});  // seeds: seed.out, seed.grad.x; outputs + grad.grad.x
  validate(h);
  Executor run(h);
  std::vector<double> x = {-1.2, 1.0, 0.5};
  // Row i of the Hessian is the VJP of the gradient with the unit vector e_i.
  double expected[3][3] = {{1200 * x[0] * x[0] - 400 * x[1] + 2, -400 * x[0], 0},
                           {-400 * x[0], 200 + 1200 * x[1] * x[1] - 400 * x[2] + 2, -400 * x[1]},
                           {0, -400 * x[1], 200}};
  for (int i = 0; i < 3; ++i) {
    std::vector<double> e(3, 0);
    e[i] = 1;
    std::vector<Tensor> outs = run.run(
        {{"x", vec(x)}, {"seed.out", Tensor(Type{DType::f64, {}})}, {"seed.grad.x", vec(e)}});
    REQUIRE(h.outputs[2].name == "grad.grad.x");
    for (int j = 0; j < 3; ++j) {
      CAPTURE(i);
      CAPTURE(j);
      CHECK(outs[2].data<double>()[j] == doctest::Approx(expected[i][j]).epsilon(1e-12));
    }
  }
}

TEST_CASE(
    "a Hessian-vector product of the MLP, reverse over reverse and forward over reverse, matches a "
    "difference of its gradient") {
  Tape mlp = promote_to_f64(read_tape_json(
      [] {
        FILE* f = std::fopen(YTAPE_SOURCE_DIR "/samples/tapes/mlp.json", "rb");
        REQUIRE(f != nullptr);
        std::string s;
        char buf[1 << 16];
        for (size_t n; (n = std::fread(buf, 1, sizeof buf, f)) > 0;) s.append(buf, n);
        std::fclose(f);
        return s;
      }(),
      "mlp.json"));
  Tape g = gradient(mlp);
  Tape hvp = gradient(g, {{}, true});
  validate(hvp);
  TensorMap x = complete_inputs(mlp, {}, 5);

  // v: a random direction over every float input; seeds: 0 for the loss, v for the gradient.
  TensorMap v, seeds = x;
  seeds.emplace_back("seed.loss", Tensor(Type{DType::f64, {}}));
  for (size_t i = 0; i < x.size(); ++i) {
    Tensor d(x[i].second.type());
    if (d.dtype() == DType::f64) {
      for (int64_t k = 0; k < d.size(); ++k) d.data<double>()[k] = normal_f64(40 + i, k);
    }
    v.emplace_back(x[i].first, d);
    if (d.dtype() == DType::f64) seeds.emplace_back("seed.grad." + x[i].first, d);
  }
  std::vector<Tensor> hv = tail(Executor(hvp).run(seeds), g.outputs.size());

  // Forward over reverse: the jvp of the gradient, its tangents v, gives the same H v.
  Tape forward = jvp(g);
  validate(forward);
  TensorMap tangents = x;
  for (size_t i = 0; i < x.size(); ++i) {
    if (v[i].second.dtype() == DType::f64)
      tangents.emplace_back("tangent." + x[i].first, v[i].second);
  }
  std::vector<Tensor> fv = tail(Executor(forward).run(tangents), g.outputs.size() + 1);
  REQUIRE(fv.size() == hv.size());
  for (size_t j = 0; j < hv.size(); ++j) {
    double worst = 0, scale = 0;
    for (int64_t k = 0; k < hv[j].size(); ++k) {
      worst = std::max(worst, std::abs(fv[j].data<double>()[k] - hv[j].data<double>()[k]));
      scale = std::max(scale, std::abs(hv[j].data<double>()[k]));
    }
    CHECK(worst <= 1e-10 * scale + 1e-12);
  }

  // Small enough that no relu of the 8192 changes side (1e-5 flips a few).
  const double eps = 1e-7;
  auto shifted = [&](double step) {
    TensorMap y;
    for (size_t i = 0; i < x.size(); ++i) {
      Tensor t = x[i].second.clone();
      if (t.dtype() == DType::f64) {
        for (int64_t k = 0; k < t.size(); ++k)
          t.data<double>()[k] += step * v[i].second.data<double>()[k];
      }
      y.emplace_back(x[i].first, t);
    }
    return tail(Executor(g).run(y), 1);
  };
  std::vector<Tensor> up = shifted(eps), down = shifted(-eps);
  REQUIRE(hv.size() == up.size());
  for (size_t j = 0; j < hv.size(); ++j) {
    double worst = 0, scale = 0;
    for (int64_t k = 0; k < hv[j].size(); ++k) {
      double fd = (up[j].data<double>()[k] - down[j].data<double>()[k]) / (2 * eps);
      worst = std::max(worst, std::abs(fd - hv[j].data<double>()[k]));
      scale = std::max(scale, std::abs(fd));
    }
    CAPTURE(g.outputs[j + 1].name);
    CHECK(worst <= 1e-6 * scale + 1e-9);
  }
}

}  // namespace ytape::grad
