// The optimizers of ONNX's training domain (onnx/rules/training.cc), against their formulas
// worked out by hand, in a model that imports that domain alone.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

// A model importing only the training domain, whose node `op` updates one tensor x of
// two elements from R, T, x, g and `state` (one name per state tensor).
Model optimizer(const std::string& op, const std::vector<std::string>& state) {
  Model m;
  m.model.mutable_opset_import(0)->set_domain("ai.onnx.preview.training");
  m.model.mutable_opset_import(0)->set_version(1);
  m.input("R", {});
  m.input("T", {}, onnx::TensorProto_DataType_INT64);
  std::vector<std::string> ins{"R", "T", "x", "g"}, outs{"x_new"};
  for (const std::string& name : {std::string("x"), std::string("g")}) m.input(name, {2});
  for (const std::string& s : state) {
    m.input(s, {2});
    ins.push_back(s);
    outs.push_back(s + "_new");
  }
  m.node(op, ins, outs, "step").set_domain("ai.onnx.preview.training");
  for (const std::string& o : outs) m.output(o);
  return m;
}

TensorMap step_inputs(int64_t t, const std::vector<std::string>& state) {
  Tensor steps(Type{DType::i64, {}});
  steps.data<int64_t>()[0] = t;
  TensorMap in{{"R", onnx_tensor({}, {0.5f})},
               {"T", steps},
               {"x", onnx_tensor({2}, {1, 2})},
               {"g", onnx_tensor({2}, {2, -4})}};
  for (const std::string& s : state) in.emplace_back(s, onnx_tensor({2}, {1, 1}));
  return in;
}

}  // namespace

TEST_CASE("Momentum: v' = alpha v + beta g once T > 0 (g before), x' = x - R v'") {
  Model m = optimizer("Momentum", {"v"});
  onnx::NodeProto& n = *m.g().mutable_node(0);
  set_float(n, "alpha", 0.5f);
  set_float(n, "beta", 2);
  set_string(n, "mode", "standard");
  set_float(n, "norm_coefficient", 0);
  OnnxImport imported = m.import();
  std::vector<Tensor> out = run(imported, step_inputs(1, {"v"}));
  CHECK(values(out[1]) == std::vector<float>{4.5f, -7.5f});  // 0.5 + 2 g
  CHECK(values(out[0]) == std::vector<float>{-1.25f, 5.75f});
  out = run(imported, step_inputs(0, {"v"}));
  CHECK(values(out[1]) == std::vector<float>{2.5f, -3.5f});  // 0.5 + g
}

TEST_CASE("Adagrad: h' = h + g^2, x' = x - r g / (sqrt(h') + epsilon)") {
  Model m = optimizer("Adagrad", {"h"});
  set_float(*m.g().mutable_node(0), "epsilon", 0);
  set_float(*m.g().mutable_node(0), "decay_factor", 1);  // r = R / (1 + T)
  std::vector<Tensor> out = run(m.import(), step_inputs(1, {"h"}));
  CHECK(values(out[1]) == std::vector<float>{5, 17});
  std::vector<float> x = values(out[0]);
  CHECK(x[0] == doctest::Approx(1 - 0.25 * 2 / std::sqrt(5.0)));
  CHECK(x[1] == doctest::Approx(2 + 0.25 * 4 / std::sqrt(17.0)));
  // Another domain is refused by name.
  m.g().mutable_node(0)->set_domain("com.example");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'step' (Adagrad, opset 13): the domain 'com.example' is not supported "
        "(only ai.onnx and ai.onnx.preview.training)");
}

}  // namespace ytape::onnx_test
