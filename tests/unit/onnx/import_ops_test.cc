// The importer's rules for Mod, GatherND, ScatterND, Einsum and Resize on small models,
// each compared with values worked out by hand from ONNX's definition (row-major).
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

TEST_CASE("Mod with fmod = 1 is C's fmod, the rem primitive; other Mods are refused") {
  Model m;
  m.input("x", {5});
  m.input("y", {5});
  set_int(m.node("Mod", {"x", "y"}, {"z"}, "r"), "fmod", 1);
  m.output("z");
  OnnxImport imported = m.import();
  std::vector<Tensor> z = run(imported, {{"x", onnx_tensor({5}, {5.5f, -5.5f, 5.5f, -5.5f, 7})},
                                         {"y", onnx_tensor({5}, {2, 2, -2, -2, 3.5f})}});
  CHECK(values(z[0]) == std::vector<float>{1.5f, -1.5f, 1.5f, -1.5f, 0});
  // ONNX defines fmod = 0, the remainder with the divisor's sign, for integers only.
  Model floored;
  floored.input("x", {2});
  floored.input("y", {2});
  floored.node("Mod", {"x", "y"}, {"z"}, "r");
  floored.output("z");
  CHECK(import_error(floored) ==
        "m.onnx: node 1 'r' (Mod, opset 13): Mod of floats needs fmod = 1 (ONNX's rule), not 0");
  Model integers;
  integers.input("x", {2}, onnx::TensorProto_DataType_INT64);
  integers.input("y", {2}, onnx::TensorProto_DataType_INT64);
  set_int(integers.node("Mod", {"x", "y"}, {"z"}, "r"), "fmod", 1);
  integers.output("z");
  CHECK(import_error(integers) ==
        "m.onnx: node 1 'r' (Mod, opset 13): Mod of i64 is not supported");
  CHECK_THROWS_AS(integers.import(), UnsupportedError);
}

}  // namespace ytape::onnx_test
