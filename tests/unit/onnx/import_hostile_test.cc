// Hostile and huge numbers in a model's attributes, initializers and input dims (issue 42):
// each must end in one UserError that names the node and what is wrong, before anything is
// allocated; never a crash, an overflow or an import that fills memory.
#include <doctest/doctest.h>

#include "model.h"

namespace ytape::onnx_test {

namespace {

constexpr int64_t k2to32 = int64_t{1} << 32, k2to62 = int64_t{1} << 62;

// A scalar int64 initializer.
void scalar(Model& m, const std::string& name, int64_t v) {
  m.ints_initializer(name, {}, {v});
}

}  // namespace

// ---- the three crashes of issue 42, found by mutating ONNX's node tests -----------------

TEST_CASE("a Range of 2^62 elements is refused before its values are computed") {
  Model m(17);
  scalar(m, "start", 0);
  scalar(m, "limit", k2to62);
  scalar(m, "delta", 1);
  m.node("Range", {"start", "limit", "delta"}, {"y"}, "r");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'r' (Range, opset 17): from 0 to 4611686018427387904 by 1: "
        "4611686018427387904 elements, more than the 2^24 that ytape computes at import");
}

TEST_CASE("DepthToSpace with a blocksize of 2^32, whose square overflows, is refused") {
  Model m;
  m.input("x", {1, 4, 2, 2});
  set_int(m.node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", k2to32);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'd2s' (DepthToSpace, opset 13): blocksize 4294967296: its square does "
        "not divide the 4 channels");
}

TEST_CASE("RoiAlign with an output_height of 2^62 is refused") {
  Model m(16);
  m.input("x", {1, 1, 4, 4});
  m.input("rois", {1, 4});
  m.input("batch", {1}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& n = m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi");
  set_int(n, "output_height", k2to62);
  set_int(n, "sampling_ratio", 2);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'roi' (RoiAlign, opset 16): output_height is 4611686018427387904, not 1 "
        "to 2^24");
}

// ---- issue 42, item 10 ---------------------------------------------------------------------

TEST_CASE("a Split with a negative length is refused, though the lengths add up") {
  Model m;
  m.input("x", {4});
  m.ints_initializer("split", {5, -1});
  m.node("Split", {"x", "split"}, {"a", "b"}, "halves");
  m.output("a");
  m.output("b");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'halves' (Split, opset 13): split has a length of -1; each is 0 or more");
}

TEST_CASE("an opset of 2^62 is reported as itself, not truncated") {
  Model m;
  m.model.mutable_opset_import(0)->set_version(k2to62);
  m.input("x", {2});
  m.output("x");
  CHECK(import_error(m) ==
        "m.onnx: opset 4611686018427387904 is not supported (ytape imports opset 13 to 17)");
}

}  // namespace ytape::onnx_test
