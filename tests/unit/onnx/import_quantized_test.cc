// The products of quantized integers (onnx/rules/quantize.cc): ConvInteger and
// MatMulInteger, exact in f64, and QLinearConv and QLinearMatMul, which quantize them again.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

constexpr int32_t kUint8 = onnx::TensorProto_DataType_UINT8;
constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;
constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;

// An initializer of the integer type `type`, row-major.
void typed(Model& m, const std::string& name, int32_t type, std::vector<int64_t> shape,
           std::vector<int32_t> v) {
  onnx::TensorProto* t = m.g().add_initializer();
  t->set_name(name);
  t->set_data_type(type);
  for (int64_t d : shape) t->add_dims(d);
  for (int32_t x : v) t->add_int32_data(x);
}

}  // namespace

TEST_CASE("MatMulInteger: a less its zero point per row times b less its per column") {
  Model m;
  m.input("a", {2, 3}, kUint8);
  m.input("b", {3, 2}, kUint8);
  typed(m, "a_zp", kUint8, {2}, {1, 2});
  typed(m, "b_zp", kUint8, {2}, {0, 1});
  m.node("MatMulInteger", {"a", "b", "a_zp", "b_zp"}, {"y"}, "mm");
  m.output("y", kInt32);
  // (a - a_zp) = [0 1 2; 2 3 4], (b - b_zp) = [1 -1; 0 0; 1 0]
  std::vector<Tensor> y = run(m.import(), {{"a", onnx_ints({2, 3}, {1, 2, 3, 4, 5, 6})},
                                           {"b", onnx_ints({3, 2}, {1, 0, 0, 1, 1, 1})}});
  CHECK(int_values(y[0]) == std::vector<int64_t>{2, 0, 6, -2});
  Model floats;
  floats.input("a", {2, 2});
  floats.input("b", {2, 2});
  floats.node("MatMulInteger", {"a", "b"}, {"y"}, "mm");
  floats.output("y");
  CHECK(import_error(floats) ==
        "m.onnx: node 1 'mm' (MatMulInteger, opset 13): input 1 must be integers, not f32");
}

TEST_CASE("QLinearMatMul rescales the integer product and saturates to y's type") {
  Model m;
  m.input("a", {2, 2}, kUint8);
  m.input("b", {2, 1}, kUint8);
  m.initializer("a_scale", {}, {0.5f});
  typed(m, "a_zp", kUint8, {}, {10});
  m.initializer("b_scale", {}, {0.25f});
  typed(m, "b_zp", kUint8, {}, {1});
  m.initializer("y_scale", {}, {0.1f});
  typed(m, "y_zp", kInt8, {}, {-5});
  m.node("QLinearMatMul", {"a", "a_scale", "a_zp", "b", "b_scale", "b_zp", "y_scale", "y_zp"},
         {"y"});
  m.output("y", kInt8);
  // Integer products 40 and 1340, times 0.125, over 0.1: 50 and 1675, less 5.
  std::vector<Tensor> y = run(
      m.import(), {{"a", onnx_ints({2, 2}, {10, 20, 200, 250})}, {"b", onnx_ints({2, 1}, {3, 5})}});
  CHECK(int_values(y[0]) == std::vector<int64_t>{45, 127});
}

TEST_CASE("ConvInteger: the weights' zero point per output channel") {
  Model m;
  m.input("x", {1, 1, 3}, kUint8);
  m.input("w", {2, 1, 2}, kUint8);
  typed(m, "x_zp", kUint8, {}, {1});
  typed(m, "w_zp", kUint8, {2}, {1, 0});
  m.node("ConvInteger", {"x", "w", "x_zp", "w_zp"}, {"y"});
  m.output("y", kInt32);
  // x - 1 = 0 1 2 by the filters 1 2 and 2 0.
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_ints({1, 1, 3}, {1, 2, 3})},
                                           {"w", onnx_ints({2, 1, 2}, {2, 3, 2, 0})}});
  CHECK(int_values(y[0]) == std::vector<int64_t>{2, 5, 0, 2});
}

TEST_CASE("QLinearConv adds its int32 bias and rounds half to even") {
  Model m;
  m.input("x", {1, 1, 3}, kUint8);
  m.initializer("x_scale", {}, {0.5f});
  typed(m, "x_zp", kUint8, {}, {1});
  typed(m, "w", kUint8, {1, 1, 2}, {2, 3});
  m.initializer("w_scale", {1}, {1});
  typed(m, "w_zp", kUint8, {1}, {1});
  m.initializer("y_scale", {}, {2});
  typed(m, "y_zp", kUint8, {}, {0});
  typed(m, "bias", kInt32, {1}, {1});
  m.node("QLinearConv", {"x", "x_scale", "x_zp", "w", "w_scale", "w_zp", "y_scale", "y_zp", "bias"},
         {"y"});
  m.output("y", kUint8);
  // (0 1 2 by 1 2) + 1 = 3 6, times 0.5, over 2: 0.75 and 1.5.
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_ints({1, 1, 3}, {1, 2, 3})}});
  CHECK(int_values(y[0]) == std::vector<int64_t>{1, 2});
}

}  // namespace ytape::onnx_test
