// FLOAT16 tensors through import and export: inputs, initializers (raw and as int32_data
// bits), Cast both ways, and an exported f16 tape read back.
#include "tape/float16.h"

#include <doctest/doctest.h>

#include "onnx/export.h"
#include "unit/onnx/model.h"

namespace ytape::onnx_test {

namespace {

constexpr int32_t kF16 = onnx::TensorProto_DataType_FLOAT16;

// y = Cast<float>(x * w) + Cast<float>(c): an f16 input, an f16 initializer in raw bytes
// and an f16 Constant in int32_data.
Model f16_model() {
  Model m;
  m.input("x", {2}, kF16);
  onnx::TensorProto* w = m.g().add_initializer();
  w->set_name("w");
  w->set_data_type(kF16);
  w->add_dims(2);
  uint16_t bits[2] = {f16_from_double(0.5), f16_from_double(0.1)};
  w->set_raw_data(std::string(reinterpret_cast<const char*>(bits), 4));
  onnx::NodeProto& c = m.node("Constant", {}, {"c"});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(kF16);
  a->mutable_t()->add_int32_data(f16_from_double(-2));
  m.node("Mul", {"x", "w"}, {"xw"});
  set_int(m.node("Cast", {"xw"}, {"xw32"}), "to", onnx::TensorProto_DataType_FLOAT);
  set_int(m.node("Cast", {"c"}, {"c32"}), "to", onnx::TensorProto_DataType_FLOAT);
  m.node("Add", {"xw32", "c32"}, {"y"});
  set_int(m.node("Cast", {"y"}, {"z"}), "to", kF16);
  m.output("y");
  m.output("z");
  return m;
}

Tensor f16_tensor(std::vector<double> v) {
  Tensor t(Type{DType::f16, {static_cast<int64_t>(v.size())}});
  for (size_t i = 0; i < v.size(); ++i) t.data<uint16_t>()[i] = f16_from_double(v[i]);
  return t;
}

}  // namespace

TEST_CASE("onnx: FLOAT16 inputs, initializers, constants and casts import as f16") {
  OnnxImport m = f16_model().import();
  REQUIRE(m.weights.size() == 1);
  CHECK(m.weights[0].second.dtype() == DType::f16);
  std::vector<Tensor> out = run(m, {{"x", f16_tensor({3, 1})}});
  // x * w in f16: 1.5 and 0.1 (the f16 nearest, 0.099975586); then f32 arithmetic.
  CHECK(values(out[0]) == std::vector<float>{-0.5f, f16_to_f32(f16_from_double(0.1)) - 2});
  CHECK(out[1].dtype() == DType::f16);
  CHECK(out[1].data<uint16_t>()[1] == f16_from_double(0.1 - 2));
}

TEST_CASE("onnx: an f16 tape exports as FLOAT16 and imports back the same") {
  OnnxImport m = f16_model().import();
  std::string bytes = export_onnx(m.tape, m.weights);
  onnx::ModelProto proto;
  REQUIRE(proto.ParseFromString(bytes));
  CHECK(proto.graph().input(0).type().tensor_type().elem_type() == kF16);
  CHECK(proto.graph().initializer(0).data_type() == kF16);
  OnnxImport back = import_onnx(bytes, "back.onnx");
  std::vector<Tensor> a = run(m, {{"x", f16_tensor({3, 1})}});
  std::vector<Tensor> b = run(back, {{"x", f16_tensor({3, 1})}});
  CHECK(same_bits(a, b));
}

}  // namespace ytape::onnx_test
