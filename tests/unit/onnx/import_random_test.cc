// The random ops over rand and randn: ONNX's distributions (checked by the statistics of
// many draws, which are deterministic at a fixed key, so the bounds, several standard
// errors wide, cannot flake), their seeds, and Dropout's gradient.
#include <doctest/doctest.h>

#include <cmath>

#include "check/gradcheck.h"
#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

struct Moments {
  double mean = 0, variance = 0, low = INFINITY, high = -INFINITY;
};

Moments moments(const Tensor& t) {
  Moments m;
  for (int64_t i = 0; i < t.size(); ++i) {
    double v = element_value(t, i);
    m.mean += v, m.low = std::min(m.low, v), m.high = std::max(m.high, v);
  }
  m.mean /= static_cast<double>(t.size());
  for (int64_t i = 0; i < t.size(); ++i) m.variance += std::pow(element_value(t, i) - m.mean, 2);
  m.variance /= static_cast<double>(t.size() - 1);
  return m;
}

// A Constant node holding a scalar: a float, or a bool.
void constant(Model& m, const std::string& name, int32_t type, double v) {
  onnx::NodeProto& n = m.node("Constant", {}, {name});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(type);
  if (type == onnx::TensorProto_DataType_BOOL) a->mutable_t()->add_int32_data(v != 0);
  if (type == onnx::TensorProto_DataType_FLOAT)
    a->mutable_t()->add_float_data(static_cast<float>(v));
}

std::vector<Tensor> run_keyed(const OnnxImport& m, TensorMap inputs, uint64_t key) {
  Executor e(m.tape);
  e.set_random_key(key);
  return e.run(inputs);
}

int count_draws(const Tape& t) {
  int n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && prim_info(op.prim).random();
  return n;
}

constexpr int64_t kDraws = 100000;

}  // namespace

TEST_CASE("RandomUniform: low + (high - low) u, in its shape and dtype") {
  for (int32_t type : {onnx::TensorProto_DataType_FLOAT, onnx::TensorProto_DataType_DOUBLE}) {
    CAPTURE(type);
    Model m;
    onnx::NodeProto& n = m.node("RandomUniform", {}, {"u"});
    set_ints(n, "shape", {200, kDraws / 200});
    set_int(n, "dtype", type);
    set_float(n, "low", -2);
    set_float(n, "high", 3);
    m.output("u");
    Tensor u = run(m.import(), {})[0];
    CHECK(u.dtype() == (type == onnx::TensorProto_DataType_FLOAT ? DType::f32 : DType::f64));
    CHECK(u.shape() == Shape{kDraws / 200, 200});
    Moments s = moments(u);
    CHECK(s.low >= -2);
    CHECK(s.high < 3);
    CHECK(std::abs(s.mean - 0.5) < 0.03);            // standard error 0.005
    CHECK(std::abs(s.variance - 25.0 / 12) < 0.05);  // 0.006
  }
}

TEST_CASE("RandomNormal: mean + scale z") {
  Model m;
  onnx::NodeProto& n = m.node("RandomNormal", {}, {"z"});
  set_ints(n, "shape", {kDraws});
  set_int(n, "dtype", onnx::TensorProto_DataType_DOUBLE);
  set_float(n, "mean", 1);
  set_float(n, "scale", 2);
  m.output("z");
  Tensor z = run(m.import(), {})[0];
  CHECK(z.dtype() == DType::f64);
  Moments s = moments(z);
  CHECK(std::abs(s.mean - 1) < 0.04);      // standard error 0.006
  CHECK(std::abs(s.variance - 4) < 0.12);  // 0.018
}

TEST_CASE("the -Like forms take the input's shape, and its dtype unless told another") {
  Model m;
  m.input("x", {3, 5}, onnx::TensorProto_DataType_DOUBLE);
  m.input("i", {2}, onnx::TensorProto_DataType_INT64);
  m.node("RandomUniformLike", {"x"}, {"u"});
  set_int(m.node("RandomNormalLike", {"x"}, {"z"}), "dtype", onnx::TensorProto_DataType_FLOAT);
  set_int(m.node("RandomUniformLike", {"i"}, {"v"}), "dtype", onnx::TensorProto_DataType_FLOAT);
  m.output("u");
  m.output("z");
  m.output("v");
  OnnxImport imported = m.import();
  CHECK(type_str(imported.tape.type(imported.tape.outputs[0].var)) == "f64[5,3]");
  CHECK(type_str(imported.tape.type(imported.tape.outputs[1].var)) == "f32[5,3]");
  CHECK(type_str(imported.tape.type(imported.tape.outputs[2].var)) == "f32[2]");
  Model ints;
  ints.input("i", {2}, onnx::TensorProto_DataType_INT64);
  ints.node("RandomUniformLike", {"i"}, {"u"}, "r");
  ints.output("u");
  CHECK(import_error(ints) ==
        "m.onnx: node 1 'r' (RandomUniformLike, opset 13): the input is i64, so the dtype "
        "attribute must name a float type");
}

TEST_CASE("Bernoulli: 1 with probability p, in the dtype asked") {
  Model m(15);
  m.input("p", {kDraws});
  set_int(m.node("Bernoulli", {"p"}, {"y"}), "dtype", onnx::TensorProto_DataType_INT64);
  m.node("Bernoulli", {"p"}, {"b"});
  m.output("y");
  m.output("b");
  OnnxImport imported = m.import();
  for (float p : {0.0f, 0.3f, 1.0f}) {
    CAPTURE(p);
    std::vector<Tensor> out =
        run(imported, {{"p", onnx_tensor({kDraws}, std::vector<float>(kDraws, p))}});
    CHECK(out[0].dtype() == DType::i64);
    CHECK(out[1].dtype() == DType::f32);
    for (const Tensor& y : out) {
      Moments s = moments(y);
      CHECK(s.low >= 0);
      CHECK(s.high <= 1);
      CHECK(std::abs(s.mean - p) < 0.01);  // standard error 0.0015
    }
    // Each node draws its own numbers.
    if (p == 0.3f) CHECK(values(out[1]) != std::vector<float>(out[0].size(), 0));
  }
}

TEST_CASE("the draws: a stream per op, from the run's key, the ONNX seed choosing it") {
  auto model = [](std::optional<float> seed) {
    Model m;
    for (const char* name : {"a", "b"}) {
      onnx::NodeProto& n = m.node("RandomUniform", {}, {name});
      set_ints(n, "shape", {4});
      if (seed) set_float(n, "seed", *seed);
      m.output(name);
    }
    return m.import();
  };
  OnnxImport plain = model(std::nullopt), seeded = model(1.0f), other = model(2.0f);
  std::vector<Tensor> p = run(plain, {});
  CHECK(values(p[0]) != values(p[1]));
  CHECK(values(run(model(std::nullopt), {})[0]) == values(p[0]));  // the same tape
  CHECK(values(run(seeded, {})[0]) != values(p[0]));
  CHECK(values(run(seeded, {})[0]) != values(run(other, {})[0]));
  CHECK(values(run_keyed(plain, {}, 5)[0]) != values(p[0]));
  CHECK(values(run_keyed(plain, {}, 5)[0]) == values(run_keyed(plain, {}, 5)[0]));
}

TEST_CASE("Dropout in training: 0 or x / (1 - ratio), as its mask says; ratio 0 keeps all") {
  for (double ratio : {0.25, 0.0}) {
    CAPTURE(ratio);
    Model m;
    m.input("x", {kDraws});
    constant(m, "ratio", onnx::TensorProto_DataType_FLOAT, ratio);
    constant(m, "training", onnx::TensorProto_DataType_BOOL, 1);
    m.node("Dropout", {"x", "ratio", "training"}, {"y", "mask"});
    m.output("y");
    m.output("mask");
    OnnxImport imported = m.import();
    CHECK(count_draws(imported.tape) == (ratio == 0 ? 0 : 1));
    std::vector<float> x(kDraws);
    for (int64_t i = 0; i < kDraws; ++i) x[i] = static_cast<float>(i % 7) + 1;
    std::vector<Tensor> out = run(imported, {{"x", onnx_tensor({kDraws}, x)}});
    REQUIRE(out[1].dtype() == DType::boolean);
    int64_t dropped = 0;
    for (int64_t i = 0; i < kDraws; ++i) {
      bool kept = element_value(out[1], i) != 0;
      dropped += !kept;
      float want = kept ? x[i] / static_cast<float>(1 - ratio) : 0.0f;
      if (element_value(out[0], i) != want) FAIL_CHECK("element " << i << " is not " << want);
    }
    CHECK(std::abs(static_cast<double>(dropped) / kDraws - ratio) < 0.01);  // 0.0014
  }
}

TEST_CASE("Dropout's gradient is the mask over 1 - ratio, at the run's draws") {
  Model m;
  m.input("x", {6, 5}, onnx::TensorProto_DataType_DOUBLE);
  constant(m, "ratio", onnx::TensorProto_DataType_FLOAT, 0.5);
  constant(m, "training", onnx::TensorProto_DataType_BOOL, 1);
  m.node("Dropout", {"x", "ratio", "training"}, {"y"});
  m.output("y");
  Tensor x(Type{DType::f64, {5, 6}});
  for (int64_t i = 0; i < x.size(); ++i) x.data<double>()[i] = std::sin(static_cast<double>(i));
  check::GradcheckResult r = check::gradcheck(m.import().tape, {{"x", x}}, {});
  CHECK_MESSAGE(r.ok, check::gradcheck_table(r));
}

TEST_CASE("Dropout's training_mode and ratio are static, the ratio below 1") {
  Model m;
  m.input("x", {3});
  m.input("training", {}, onnx::TensorProto_DataType_BOOL);
  m.node("Dropout", {"x", "", "training"}, {"y"}, "d");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'd' (Dropout, opset 13): input 3 'training' must be static: a "
        "constant or initializer, or computed from them");
  Model one;
  one.input("x", {3});
  constant(one, "ratio", onnx::TensorProto_DataType_FLOAT, 1);
  constant(one, "training", onnx::TensorProto_DataType_BOOL, 1);
  one.node("Dropout", {"x", "ratio", "training"}, {"y"}, "d");
  one.output("y");
  CHECK(import_error(one) == "m.onnx: node 3 'd' (Dropout, opset 13): ratio 1 is not in [0, 1)");
}

}  // namespace ytape::onnx_test
