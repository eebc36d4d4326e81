// Det (onnx/rules/linalg.cc): Laplace's expansion over the minors, its values and its
// gradient, and what is refused.
#include <doctest/doctest.h>

#include "check/gradcheck.h"
#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

Model det_model(std::vector<int64_t> shape) {
  Model m;
  m.input("x", shape);
  m.node("Det", {"x"}, {"d"}, "det");
  m.output("d");
  return m;
}

}  // namespace

TEST_CASE("Det of a batch of matrices, row-major as ONNX's") {
  OnnxImport imported = det_model({2, 3, 3}).import();
  std::vector<float> x{2, 0, 1, 1, 3, 2, 1, 1, 1,   // 2(3 - 2) - 0 + 1(1 - 3) = 0
                       1, 2, 3, 0, 1, 4, 5, 6, 0};  // 1(0 - 24) - 2(0 - 20) + 3(0 - 5) = 1
  std::vector<Tensor> d = run(imported, {{"x", onnx_tensor({2, 3, 3}, x)}});
  CHECK(d[0].shape() == Shape{2});
  CHECK(values(d[0]) == std::vector<float>{0, 1});
  // Not triangular, so that each of the 2^4 minors counts.
  std::vector<float> y{1, 2, 0, 1, 3, 1, 2, 0, 0, 1, 1, 4, 2, 0, 3, 1};
  CHECK(values(run(det_model({4, 4}).import(), {{"x", onnx_tensor({4, 4}, y)}})[0]) ==
        std::vector<float>{14});
}

TEST_CASE("the gradient of an imported Det is its cofactors, as finite differences say") {
  OnnxImport imported = det_model({2, 4, 4}).import();
  std::vector<float> x(32);
  for (size_t i = 0; i < x.size(); ++i) x[i] = (static_cast<float>(i * 7 % 11) - 5) / 4;
  check::GradcheckResult r =
      check::gradcheck(imported.tape, {{"x", onnx_tensor({2, 4, 4}, x)}}, {});
  CHECK_MESSAGE(r.ok, check::gradcheck_table(r));
}

TEST_CASE("Det of matrices that are not square, or too large to expand, is refused") {
  CHECK(import_error(det_model({2, 3})) ==
        "m.onnx: node 1 'det' (Det, opset 13): Det of a [2,3] tensor, not of square matrices");
  CHECK(import_error(det_model({9, 9})) ==
        "m.onnx: node 1 'det' (Det, opset 13): Det of 9 x 9 matrices (ytape's are at most 8 x "
        "8) is not supported");
}

}  // namespace ytape::onnx_test
