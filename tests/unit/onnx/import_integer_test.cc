// ONNX's narrower integer types, held as i64 (docs/onnx.md, Dtypes), and the integer
// arithmetic that goes through f64 (onnx/rules/integer.h): Mod, Div, Pow, BitShift, Cast,
// MaxPool.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

constexpr int32_t kInt32 = onnx::TensorProto_DataType_INT32;
constexpr int32_t kUint8 = onnx::TensorProto_DataType_UINT8;
constexpr int32_t kInt8 = onnx::TensorProto_DataType_INT8;

// A model of one binary node over two 1-D inputs of `type`, its output declared `type`.
Model binary(const std::string& op, int64_t n, int32_t type) {
  Model m;
  m.input("x", {n}, type);
  m.input("y", {n}, type);
  m.node(op, {"x", "y"}, {"z"}, "b");
  m.output("z", type);
  return m;
}

std::vector<int64_t> run_binary(const Model& m, const std::vector<int64_t>& x,
                                const std::vector<int64_t>& y) {
  auto n = static_cast<int64_t>(x.size());
  return int_values(run(m.import(), {{"x", onnx_ints({n}, x)}, {"y", onnx_ints({n}, y)}})[0]);
}

}  // namespace

TEST_CASE("inputs of narrower integer types are i64 inputs of the tape") {
  Model m = binary("Add", 2, kInt32);
  OnnxImport imported = m.import();
  CHECK(imported.tape.type(imported.tape.ops[0].outs[0]) == Type{DType::i64, {2}});
  CHECK(run_binary(m, {1, -2}, {3, 4}) == std::vector<int64_t>{4, 2});
}

TEST_CASE("an output of a narrower integer type wraps into its range, as ONNX's would") {
  CHECK(run_binary(binary("Add", 3, kUint8), {200, 255, 3}, {100, 1, 4}) ==
        std::vector<int64_t>{44, 0, 7});
  CHECK(run_binary(binary("Mul", 3, kInt8), {100, -100, 5}, {2, 2, -3}) ==
        std::vector<int64_t>{-56, 56, -15});
}

TEST_CASE("Mod of integers: fmod = 0 takes the divisor's sign, fmod = 1 the dividend's") {
  std::vector<int64_t> x{-4, 7, 5, 4, -7, 8, 0}, y{3, -3, 8, -2, 3, 5, 4};
  Model python = binary("Mod", 7, onnx::TensorProto_DataType_INT64);
  CHECK(run_binary(python, x, y) == std::vector<int64_t>{2, -2, 5, 0, 2, 3, 0});
  Model c = binary("Mod", 7, kInt32);
  set_int(*c.g().mutable_node(0), "fmod", 1);
  CHECK(run_binary(c, x, y) == std::vector<int64_t>{-1, 1, 5, 0, -1, 3, 0});
  Model bad = binary("Mod", 1, kInt32);
  set_int(*bad.g().mutable_node(0), "fmod", 2);
  CHECK(import_error(bad) == "m.onnx: node 1 'b' (Mod, opset 13): fmod is 0 or 1, not 2");
}

TEST_CASE("Div of integers truncates toward zero; Pow of integers is exact") {
  CHECK(run_binary(binary("Div", 4, kInt32), {7, -7, 7, -9}, {2, 2, -3, -3}) ==
        std::vector<int64_t>{3, -3, -2, 3});
  CHECK(run_binary(binary("Pow", 3, kInt32), {3, -2, 7}, {4, 3, 0}) ==
        std::vector<int64_t>{81, -8, 1});
}

TEST_CASE("BitShift multiplies or divides by 2^y; the output's type wraps what << carried") {
  Model left = binary("BitShift", 3, kUint8);
  set_string(*left.g().mutable_node(0), "direction", "LEFT");
  CHECK(run_binary(left, {16, 4, 255}, {1, 2, 1}) == std::vector<int64_t>{32, 16, 254});
  Model right = binary("BitShift", 3, onnx::TensorProto_DataType_UINT32);
  set_string(*right.g().mutable_node(0), "direction", "RIGHT");
  CHECK(run_binary(right, {16, 5, 4000000000}, {1, 1, 4}) == std::vector<int64_t>{8, 2, 250000000});
  Model bad = binary("BitShift", 1, kUint8);
  set_string(*bad.g().mutable_node(0), "direction", "UP");
  CHECK(import_error(bad) ==
        "m.onnx: node 1 'b' (BitShift, opset 13): direction is LEFT or RIGHT, not 'UP'");
}

TEST_CASE("Cast to a narrower integer type wraps as the cast does") {
  Model m;
  m.input("x", {4});
  set_int(m.node("Cast", {"x"}, {"y"}), "to", kUint8);
  set_int(m.node("Cast", {"x"}, {"z"}), "to", kInt8);
  m.output("y");
  m.output("z");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({4}, {300, -1, 2.7f, 128})}});
  CHECK(int_values(out[0]) == std::vector<int64_t>{44, 255, 2, 128});
  CHECK(int_values(out[1]) == std::vector<int64_t>{44, -1, 2, -128});
}

TEST_CASE("MaxPool of uint8 pools through f64 and back") {
  Model m(12);
  m.input("x", {1, 1, 2, 2}, kUint8);
  set_ints(m.node("MaxPool", {"x"}, {"y"}), "kernel_shape", {2, 2});
  m.output("y", kUint8);
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_ints({1, 1, 2, 2}, {3, 250, 7, 1})}});
  CHECK(int_values(y[0]) == std::vector<int64_t>{250});
}

TEST_CASE("QuantizeLinear saturates to the zero point's type, rounding half to even") {
  Model m;
  m.input("x", {2, 3});
  m.initializer("scale", {2}, {1, 0.5f});  // per row: axis 0
  onnx::TensorProto* zp = m.g().add_initializer();
  zp->set_name("zp");
  zp->set_data_type(kInt8);
  zp->add_dims(2);
  zp->add_int32_data(0);
  zp->add_int32_data(-100);
  set_int(m.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}), "axis", 0);
  set_int(m.node("DequantizeLinear", {"q", "scale", "zp"}, {"back"}), "axis", 0);
  m.output("q", kInt8);
  m.output("back");
  std::vector<Tensor> out =
      run(m.import(), {{"x", onnx_tensor({2, 3}, {2.5f, 3.5f, -300, 10, -20, 1000})}});
  CHECK(int_values(out[0]) == std::vector<int64_t>{2, 4, -128, -80, -128, 127});
  CHECK(values(out[1]) == std::vector<float>{2, 4, -128, 10, -14, 113.5f});
  // Without a zero point the type is uint8; one computed at run time has no known type.
  Model unknown;
  unknown.input("x", {2});
  unknown.input("z", {2}, kUint8);
  unknown.initializer("scale", {}, {1});
  unknown.node("Abs", {"z"}, {"zp"});
  unknown.node("QuantizeLinear", {"x", "scale", "zp"}, {"q"}, "quantize");
  unknown.output("q");
  CHECK(import_error(unknown) ==
        "m.onnx: node 2 'quantize' (QuantizeLinear, opset 13): a zero point whose type (uint8 or "
        "int8) is not known at import is not supported");
}

TEST_CASE("DynamicQuantizeLinear: uint8 over the range of x and 0") {
  Model m(11);
  m.input("x", {4});
  m.node("DynamicQuantizeLinear", {"x"}, {"y", "scale", "zp"});
  m.output("y");
  m.output("scale");
  m.output("zp");
  std::vector<Tensor> out = run(m.import(), {{"x", onnx_tensor({4}, {-1, 0, 2, 4})}});
  // scale = (4 - -1) / 255, zero point round(1 / scale) = round(51) = 51
  CHECK(values(out[1])[0] == doctest::Approx(5.0 / 255));
  CHECK(int_values(out[2]) == std::vector<int64_t>{51});
  CHECK(int_values(out[0]) == std::vector<int64_t>{0, 51, 153, 255});
}

}  // namespace ytape::onnx_test
