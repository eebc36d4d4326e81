// ONNX's written-out tanh GELU imports as the gelu primitive (onnx/gelu.h): recognized in
// the forms exporters write, refused where it would compute something else, and the same
// bits as the ops it replaces.
#include <doctest/doctest.h>

#include <cmath>

#include "model.h"
#include "onnx/import.h"
#include "tape/builder.h"

namespace ytape::onnx_test {

namespace {

constexpr float kBeta = 0.7978845608028654f, kKappa = 0.044715f;

void constant(Model& m, const std::string& name, float v) {
  set_float(m.node("Constant", {}, {name}), "value_float", v);
}

// gelu of input "x" (2, 64) into output "y", as PyTorch 1.13 exports
// F.gelu(x, approximate="tanh"): 0.5 * (x * (1 + tanh(beta * (x + kappa * (x * (x * x))))));
// with `ytape_form`, ytape's own export's order, (0.5 * x) * (tanh(...) + 1), with the
// operands of the cube and of the sums the other way round.
Model written_out_gelu(bool ytape_form = false, float kappa = kKappa) {
  Model m;
  m.input("x", {2, 64});
  constant(m, "beta", kBeta);
  constant(m, "kappa", kappa);
  constant(m, "one", 1);
  constant(m, "half", 0.5f);
  constant(m, "three", 3);  // for a cube written as Pow
  m.node("Mul", {"x", "x"}, {"xx"});
  m.node("Mul",
         ytape_form ? std::vector<std::string>{"xx", "x"} : std::vector<std::string>{"x", "xx"},
         {"cube"});
  m.node("Mul", {"kappa", "cube"}, {"kc"});
  m.node("Add",
         ytape_form ? std::vector<std::string>{"kc", "x"} : std::vector<std::string>{"x", "kc"},
         {"sum"});
  m.node("Mul", {"beta", "sum"}, {"inner"});
  m.node("Tanh", {"inner"}, {"t"});
  if (ytape_form) {
    m.node("Add", {"t", "one"}, {"onet"});
    m.node("Mul", {"half", "x"}, {"hx"});
    m.node("Mul", {"hx", "onet"}, {"y"});
  } else {
    m.node("Add", {"one", "t"}, {"onet"});
    m.node("Mul", {"x", "onet"}, {"xo"});
    m.node("Mul", {"half", "xo"}, {"y"});
  }
  m.output("y");
  return m;
}

std::vector<float> sample_x() {
  std::vector<float> x;
  for (int i = 0; i < 128; ++i) x.push_back(-8.0f + 0.13f * static_cast<float>(i) + 1e-3f * i * i);
  return x;
}

// The written-out formula as tape ops, run by ytape's kernels one op at a time: the bits
// the primitive must give.
std::vector<float> ops_one_by_one(const std::vector<float>& x) {
  Builder b("ref");
  Var v = b.input("x", {DType::f32, {64, 2}});
  auto k = [&](float c) { return b.constant(DType::f32, c); };
  Var cube = b.mul(b.mul(v, v), v);
  Var t = b.tanh(b.mul(k(kBeta), b.add(v, b.mul(k(kKappa), cube))));
  b.output(b.mul(k(0.5f), b.mul(v, b.add(k(1), t))), "y");
  Tape tape = b.finish();
  Executor e(tape);
  return values(e.run({{"x", onnx_tensor({2, 64}, x)}})[0]);
}

}  // namespace

TEST_CASE("ONNX's written-out tanh GELU imports as the gelu primitive, with the ops' bits") {
  std::vector<float> x = sample_x(), want = ops_one_by_one(x);
  for (bool ytape_form : {false, true}) {
    CAPTURE(ytape_form);
    OnnxImport g = written_out_gelu(ytape_form).import();
    CHECK(count_prim(g.tape, Prim::gelu) == 1);
    CHECK(count_prim(g.tape, Prim::tanh) == 0);
    CHECK(count_prim(g.tape, Prim::mul) == 0);
    CHECK(count_prim(g.tape, Prim::add) == 0);
    std::vector<float> y = values(run(g, {{"x", onnx_tensor({2, 64}, x)}})[0]);
    CHECK(y == want);
    for (size_t i = 0; i < x.size(); ++i) {
      double exact = 0.5 * x[i] * (1 + std::tanh(kBeta * (x[i] + kKappa * std::pow(x[i], 3.0))));
      CHECK(std::abs(y[i] - exact) <= 1e-6 * (1 + std::abs(exact)));
    }
  }
}

TEST_CASE("a GELU-like formula that computes something else stays as its ops") {
  std::vector<float> x = sample_x();
  // Another coefficient of the cube.
  OnnxImport other = written_out_gelu(false, 0.0447f).import();
  CHECK(count_prim(other.tape, Prim::gelu) == 0);
  CHECK(count_prim(other.tape, Prim::tanh) == 1);
  // A value inside the formula read elsewhere too: the GELU is recognized, the value kept.
  Model m = written_out_gelu();
  m.output("t");
  OnnxImport both = m.import();
  CHECK(count_prim(both.tape, Prim::gelu) == 1);
  CHECK(count_prim(both.tape, Prim::tanh) == 1);
  std::vector<Tensor> y = run(both, {{"x", onnx_tensor({2, 64}, x)}});
  CHECK(values(y[0]) == ops_one_by_one(x));
  // The cube as Pow(x, 3), which imports as (x * x) * x.
  Model pow = written_out_gelu();
  onnx::NodeProto* cube = pow.g().mutable_node(6);
  REQUIRE(cube->output(0) == "cube");
  cube->set_op_type("Pow");
  cube->set_input(0, "x");
  cube->set_input(1, "three");
  OnnxImport powered = pow.import();
  CHECK(count_prim(powered.tape, Prim::gelu) == 1);
  CHECK(values(run(powered, {{"x", onnx_tensor({2, 64}, x)}})[0]) == ops_one_by_one(x));
  // A product of something else than x in the last step.
  Model shifted = written_out_gelu();
  shifted.g().mutable_node(shifted.g().node_size() - 2)->set_input(0, "xx");
  CHECK(count_prim(shifted.import().tape, Prim::gelu) == 0);
}

}  // namespace ytape::onnx_test
