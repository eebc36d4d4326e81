// Writes the small ONNX models that the command-line and error tests import, built with
// ONNX's protobuf classes, into a directory: usage: onnx_make_models DIR
//   mlp.onnx             x (1, 4) -> Gemm -> Relu -> Gemm -> Softmax, weights as initializers
//   mlp_batch.onnx       the same with x (batch, 4): a symbolic batch dim, as exported
//                        with dynamic axes
//   unsupported_op.onnx  an op type without a rule (Unique)
//   old_opset.onnx       opset 11, whose Hardmax (Hardmax-11) means other than at 13
//   misspelt_op.onnx     an op type ONNX does not have (Sofmax)
//   not_static.onnx      a Reshape whose shape is a graph input
//   bad_broadcast.onnx   an Add of shapes that do not broadcast
//   sequence_input.onnx  a sequence input, whose length the model leaves open
//   huge_range.onnx, huge_depth_to_space.onnx, huge_roi_align.onnx, negative_split.onnx,
//   huge_opset.onnx      hostile numbers that crashed or were accepted (issue 42): a Range
//                        of 2^62 elements, a DepthToSpace blocksize of 2^32, a RoiAlign
//                        output_height of 2^62, a Split length of -1, opset 2^62
#include <fstream>

#include "unit/onnx/model.h"

using namespace ytape::onnx_test;

namespace {

std::vector<float> ramp(int n, float scale) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = scale * static_cast<float>(i % 7 - 3);
  return v;
}

Model mlp() {
  Model m;
  m.model.set_producer_name("ytape-tests");
  m.input("x", {1, 4});
  m.initializer("fc1.weight", {8, 4}, ramp(32, 0.25f));
  m.initializer("fc1.bias", {8}, ramp(8, 0.1f));
  m.initializer("fc2.weight", {3, 8}, ramp(24, -0.5f));
  m.initializer("fc2.bias", {3}, ramp(3, 1));
  set_int(m.node("Gemm", {"x", "fc1.weight", "fc1.bias"}, {"h"}, "fc1"), "transB", 1);
  m.node("Relu", {"h"}, {"r"}, "relu");
  set_int(m.node("Gemm", {"r", "fc2.weight", "fc2.bias"}, {"logits"}, "fc2"), "transB", 1);
  m.node("Softmax", {"logits"}, {"probs"}, "softmax");
  m.output("probs");
  return m;
}

Model mlp_batch() {
  Model m = mlp();
  auto* x = m.g().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  x->mutable_dim(0)->set_dim_param("batch");
  return m;
}

Model unary(const std::string& op, int opset) {
  Model m(opset);
  m.input("x", {2, 3});
  m.node("Relu", {"x"}, {"r"}, "relu");
  m.node(op, {"r"}, {"y"}, "angle");
  m.output("y");
  return m;
}

Model not_static() {
  Model m;
  m.input("x", {2, 3});
  m.input("shape", {2}, onnx::TensorProto_DataType_INT64);
  m.node("Reshape", {"x", "shape"}, {"y"}, "flatten");
  m.output("y");
  return m;
}

Model bad_broadcast() {
  Model m;
  m.input("x", {2, 3});
  m.input("b", {2});
  m.node("Add", {"x", "b"}, {"y"}, "add_bias");
  m.output("y");
  return m;
}

Model sequence_input() {
  Model m;
  onnx::ValueInfoProto* v = m.g().add_input();
  v->set_name("parts");
  auto* t = v->mutable_type()->mutable_sequence_type()->mutable_elem_type()->mutable_tensor_type();
  t->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  t->mutable_shape()->add_dim()->set_dim_value(2);
  set_int(m.node("ConcatFromSequence", {"parts"}, {"y"}, "join"), "axis", 0);
  m.output("y");
  return m;
}

Model huge_range() {
  Model m(17);
  m.ints_initializer("start", {}, {0});
  m.ints_initializer("limit", {}, {int64_t{1} << 62});
  m.ints_initializer("delta", {}, {1});
  m.node("Range", {"start", "limit", "delta"}, {"y"}, "positions");
  m.output("y");
  return m;
}

Model huge_depth_to_space() {
  Model m;
  m.input("x", {1, 4, 2, 2});
  set_int(m.node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", int64_t{1} << 32);
  m.output("y");
  return m;
}

Model huge_roi_align() {
  Model m(16);
  m.input("x", {1, 1, 4, 4});
  m.input("rois", {1, 4});
  m.input("batch", {1}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
  set_int(n, "output_height", int64_t{1} << 62);
  set_int(n, "sampling_ratio", 2);
  m.output("y");
  return m;
}

Model negative_split() {
  Model m;
  m.input("x", {4});
  m.ints_initializer("split", {5, -1});
  m.node("Split", {"x", "split"}, {"a", "b"}, "halves");
  m.output("a");
  m.output("b");
  return m;
}

Model huge_opset() {
  Model m;
  m.model.mutable_opset_import(0)->set_version(int64_t{1} << 62);
  m.input("x", {2});
  m.output("x");
  return m;
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 2) return 2;
  std::string dir = argv[1];
  auto save = [&](const std::string& name, const Model& m) {
    std::ofstream(dir + "/" + name, std::ios::binary) << m.bytes();
  };
  save("mlp.onnx", mlp());
  save("mlp_batch.onnx", mlp_batch());
  save("unsupported_op.onnx", unary("Unique", 13));
  save("old_opset.onnx", unary("Hardmax", 11));
  save("misspelt_op.onnx", unary("Sofmax", 13));
  save("not_static.onnx", not_static());
  save("bad_broadcast.onnx", bad_broadcast());
  save("sequence_input.onnx", sequence_input());
  save("huge_range.onnx", huge_range());
  save("huge_depth_to_space.onnx", huge_depth_to_space());
  save("huge_roi_align.onnx", huge_roi_align());
  save("negative_split.onnx", negative_split());
  save("huge_opset.onnx", huge_opset());
  return 0;
}
