// RoiAlign (onnx/rules/roi_align.cc) on an image whose values are linear in the position,
// so that every bilinear sample is exactly the position's value: 3 y + x.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

// RoiAlign of a 3 x 3 image over one region, at opset `opset`, into one bin of 2 x 2 samples.
Model roi_model(int opset, const std::string& mode) {
  Model m(opset);
  m.input("x", {1, 1, 3, 3});
  m.input("rois", {1, 4});
  m.input("batch", {1}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
  set_int(n, "output_height", 1);
  set_int(n, "output_width", 1);
  set_int(n, "sampling_ratio", 2);
  set_string(n, "mode", mode);
  m.output("y");
  return m;
}

float pooled(const Model& m) {
  std::vector<Tensor> y =
      run(m.import(), {{"x", onnx_tensor({1, 1, 3, 3}, {0, 1, 2, 3, 4, 5, 6, 7, 8})},
                       {"rois", onnx_tensor({1, 4}, {0, 0, 2, 2})},
                       {"batch", onnx_ints({1}, {0})}});
  CHECK(y[0].shape() == Shape{1, 1, 1, 1});
  return values(y[0])[0];
}

}  // namespace

TEST_CASE("RoiAlign: the average or maximum of the bins' bilinear samples") {
  // half_pixel (opset 16's default): the region starts at -0.5, its samples at 0 and 1.
  CHECK(pooled(roi_model(16, "avg")) == 2);  // (0 + 1 + 3 + 4) / 4
  CHECK(pooled(roi_model(16, "max")) == 4);
  // output_half_pixel (opset 10's only mode): at 0.5 and 1.5.
  CHECK(pooled(roi_model(13, "avg")) == 4);
}

TEST_CASE("RoiAlign's adaptive sampling and unknown modes are refused") {
  Model adaptive = roi_model(16, "avg");
  adaptive.g().mutable_node(0)->mutable_attribute(2)->set_i(0);
  CHECK(import_error(adaptive) ==
        "m.onnx: node 1 'roi' (RoiAlign, opset 16): RoiAlign with sampling_ratio 0 (its samples "
        "per bin depend on the rois) is not supported");
  CHECK(import_error(roi_model(16, "min")) ==
        "m.onnx: node 1 'roi' (RoiAlign, opset 16): mode 'min' is not avg or max");
}

}  // namespace ytape::onnx_test
