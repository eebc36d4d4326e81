// The scatters' reductions mul, max and min over static indices: the updates meeting at a
// position grouped at import, each round gathered and combined (onnx/rules/index.cc);
// values worked out by hand from ONNX's definition (row-major), and the tape's gradient
// checked against finite differences, repeated positions included.
#include <doctest/doctest.h>

#include "check/gradcheck.h"
#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

Model scatter_nd(const std::string& reduction, int32_t type = onnx::TensorProto_DataType_FLOAT) {
  Model m(16);
  m.input("x", {8}, type);
  m.input("u", {5}, type);
  m.ints_initializer("at", {5, 1}, {4, 3, 1, 7, -5});  // -5 is 3 again
  set_string(m.node("ScatterND", {"x", "at", "u"}, {"y"}, "s"), "reduction", reduction);
  m.output("y");
  return m;
}

// Data (2, 3), indices and updates (2, 2) along axis 1: row 0 twice at 0, row 1 at 2 and -1.
Model scatter_elements(const std::string& reduction,
                       int32_t type = onnx::TensorProto_DataType_FLOAT) {
  Model m(16);
  m.input("x", {2, 3}, type);
  m.input("u", {2, 2}, type);
  m.ints_initializer("at", {2, 2}, {0, 0, 2, -1});
  onnx::NodeProto& n = m.node("ScatterElements", {"x", "at", "u"}, {"y"}, "s");
  set_string(n, "reduction", reduction);
  set_int(n, "axis", 1);
  m.output("y");
  return m;
}

Tensor doubles(std::vector<int64_t> onnx_shape, const std::vector<double>& v) {
  Tensor t(Type{DType::f64, Shape(onnx_shape.rbegin(), onnx_shape.rend())});
  std::copy(v.begin(), v.end(), t.data<double>());
  return t;
}

}  // namespace

TEST_CASE("ScatterND multiplies by, or takes the max or min with, every update of a position") {
  TensorMap in{{"x", onnx_tensor({8}, {1, 2, 3, 4, 5, 6, 7, 8})},
               {"u", onnx_tensor({5}, {9, 10, 11, 12, -2})}};
  auto y = [&](const char* reduction) {
    return values(run(scatter_nd(reduction).import(), in)[0]);
  };
  CHECK(y("mul") == std::vector<float>{1, 22, 3, -80, 45, 6, 7, 96});
  CHECK(y("max") == std::vector<float>{1, 11, 3, 10, 9, 6, 7, 12});
  CHECK(y("min") == std::vector<float>{1, 2, 3, -2, 5, 6, 7, 8});
}

TEST_CASE("ScatterElements multiplies by, or takes the max or min with, the updates per row") {
  TensorMap in{{"x", onnx_tensor({2, 3}, {1, 2, 3, 4, 5, 6})},
               {"u", onnx_tensor({2, 2}, {2, 3, 4, 5})}};
  auto y = [&](const char* reduction) {
    return values(run(scatter_elements(reduction).import(), in)[0]);
  };
  CHECK(y("mul") == std::vector<float>{6, 2, 3, 4, 5, 120});
  CHECK(y("max") == std::vector<float>{3, 2, 3, 4, 5, 6});
  CHECK(y("min") == std::vector<float>{1, 2, 3, 4, 5, 4});
}

TEST_CASE("the reductions' gradients flow to the data and to every update of a position") {
  for (const char* reduction : {"mul", "max", "min"}) {
    CAPTURE(reduction);
    // Distinct values, so that no max or min is a tie.
    check::GradcheckResult nd =
        check::gradcheck(scatter_nd(reduction, onnx::TensorProto_DataType_DOUBLE).import().tape,
                         {{"x", doubles({8}, {0.5, -1.5, 2.5, 3.25, -0.75, 1.25, 4.5, -2.25})},
                          {"u", doubles({5}, {1.75, 2.75, -3.5, 0.25, 3.75})}},
                         {});
    CHECK_MESSAGE(nd.ok, check::gradcheck_table(nd));
    check::GradcheckResult el = check::gradcheck(
        scatter_elements(reduction, onnx::TensorProto_DataType_DOUBLE).import().tape,
        {{"x", doubles({2, 3}, {1.5, -2.5, 0.75, 2.25, -1.25, 3.5})},
         {"u", doubles({2, 2}, {-0.5, 2.75, 1.75, -3.25})}},
        {});
    CHECK_MESSAGE(el.ok, check::gradcheck_table(el));
  }
}

TEST_CASE("the reductions need their indices static, and in range") {
  Model m(16);
  m.input("x", {8});
  m.input("at", {2, 1}, onnx::TensorProto_DataType_INT64);
  m.input("u", {2});
  set_string(m.node("ScatterND", {"x", "at", "u"}, {"y"}, "s"), "reduction", "mul");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 's' (ScatterND, opset 16): input 2 'at' must be static: a constant or "
        "initializer, or computed from them");
  OnnxImportOptions bound;
  bound.constant_inputs.emplace_back("at", onnx_ints({2, 1}, {0, 8}));
  CHECK_THROWS_WITH(m.import(bound),
                    "m.onnx: node 1 's' (ScatterND, opset 16): index 8 is out of range for a "
                    "dim of 8");
  Model e = scatter_elements("max");
  e.g().mutable_initializer(0)->set_int64_data(3, 3);
  CHECK(import_error(e) ==
        "m.onnx: node 1 's' (ScatterElements, opset 16): index 3 is out of range for a dim of 3");
  Model other = scatter_elements("mean");
  CHECK(import_error(other) ==
        "m.onnx: node 1 's' (ScatterElements, opset 16): ScatterElements with reduction 'mean' "
        "is not supported");
}

}  // namespace ytape::onnx_test
