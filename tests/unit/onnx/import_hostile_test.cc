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

// A scalar float Constant node named `name`.
void float_constant(Model& m, const std::string& name, float v) {
  onnx::NodeProto& c = m.node("Constant", {}, {name});
  auto* a = c.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_float_data(v);
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
        "4611686018427387904 elements, more than the 2^22 that ytape computes at import");
}

TEST_CASE("a Range across all of int64 is counted and computed exactly") {
  auto values = [](int64_t start, int64_t limit, int64_t delta) {
    Model m(17);
    scalar(m, "start", start);
    scalar(m, "limit", limit);
    scalar(m, "delta", delta);
    m.node("Range", {"start", "limit", "delta"}, {"y"}, "r");
    m.output("y");
    return int_values(run(m.import(), {})[0]);
  };
  CHECK(values(INT64_MIN, INT64_MAX, k2to62) ==
        std::vector<int64_t>{INT64_MIN, -k2to62, 0, k2to62});
  CHECK(values(INT64_MAX, INT64_MIN, INT64_MIN) == std::vector<int64_t>{INT64_MAX, -1});
  CHECK(values(10, 0, -3) == std::vector<int64_t>{10, 7, 4, 1});
  CHECK(values(0, 10, -1).empty());
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

TEST_CASE("DepthToSpace of an empty image with a blocksize of 2^32 is refused") {
  // The fuzz target's finding: the image's zero hid the blocks' 2^64 elements until a
  // transpose moved it behind them, and counting the elements overflowed.
  Model m;
  m.input("x", {1, 0, 2, 2});
  set_int(m.node("DepthToSpace", {"x"}, {"y"}, "d2s"), "blocksize", k2to32);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'd2s' (DepthToSpace, opset 13): reshape: shape: shape "
        "[2,2,0,4294967296,4294967296,1]: its nonzero dims multiply to more than 2^48 (in the "
        "tape's shapes, ONNX's reversed)");
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
        "to 2^22");
}

// Found by the structure-aware fuzz target: with no channel X holds no element, and its
// shape passed the element limit while W * H * N overflowed. Shapes are now sane only when
// their nonzero dims multiply to at most 2^48 (tape/dtype.h), so the input is refused.
TEST_CASE("RoiAlign over an image of no channel and huge planes is refused, not overflowed") {
  Model m(16);
  m.input("x", {k2to32, 0, 1, k2to32});  // (N, C, H, W)
  m.input("rois", {1, 4});
  m.input("batch", {1}, onnx::TensorProto_DataType_INT64);
  set_int(m.node("RoiAlign", {"x", "rois", "batch"}, {"y"}, "roi"), "sampling_ratio", 2);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: input 'x': shape [4294967296,0,1,4294967296]: its nonzero dims multiply to "
        "more than 2^48");
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

// ---- the audit: sizes, counts and divisors of every rule --------------------------------

TEST_CASE("Tile's repeats are checked: a negative one, and a product past 2^48") {
  for (auto [reps, message] : {
           std::pair{std::vector<int64_t>{-1, 4}, "repeats has -1 for axis 0, not 0 or more"},
           {std::vector<int64_t>{k2to62, 4},
            "the tiled shape: 4611686018427387904 is more than 2^48 elements"},
       }) {
    Model m;
    m.input("x", {2, 3});
    m.ints_initializer("reps", reps);
    m.node("Tile", {"x", "reps"}, {"y"}, "t");
    m.output("y");
    CHECK(import_error(m) == std::string("m.onnx: node 1 't' (Tile, opset 13): ") + message);
  }
}

TEST_CASE("an Unsqueeze that names an axis twice is an error, not an out-of-range read") {
  Model m;
  m.input("x", {2, 3});
  m.ints_initializer("axes", {0, -4});
  m.node("Unsqueeze", {"x", "axes"}, {"y"}, "u");
  m.output("y");
  CHECK(import_error(m) == "m.onnx: node 1 'u' (Unsqueeze, opset 13): axes names axis -4 twice");
}

TEST_CASE("SpaceToDepth of an empty image, which any blocksize divides, checks the channels") {
  Model m;
  m.input("x", {1, 2, 0, 0});
  set_int(m.node("SpaceToDepth", {"x"}, {"y"}, "s2d"), "blocksize", k2to32);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 's2d' (SpaceToDepth, opset 13): the output's channels: 8589934592 * "
        "4294967296 is more than 2^48 elements");
}

TEST_CASE("Pad's pads beyond any tensor's size are refused before they are added") {
  for (int64_t p : {k2to62, INT64_MIN}) {
    Model m;
    m.input("x", {2, 3});
    m.ints_initializer("pads", {0, p, 0, 0});
    set_string(m.node("Pad", {"x", "pads"}, {"y"}, "p"), "mode", "edge");
    m.output("y");
    CHECK(import_error(m) == fmt::format("m.onnx: node 1 'p' (Pad, opset 13): pads has {}, more "
                                         "than any tensor's size (2^48)",
                                         p));
  }
}

TEST_CASE("a Slice of a dim of 2^40 lists no positions; reversed, it would, and is refused") {
  Model m;
  m.input("x", {1, int64_t{1} << 40});
  m.ints_initializer("starts", {1});
  m.ints_initializer("ends", {INT64_MAX});
  m.ints_initializer("axes", {1});
  m.node("Slice", {"x", "starts", "ends", "axes"}, {"y"}, "tail");
  m.output("y");
  OnnxImport tail = m.import();
  CHECK(type_str(tail.tape.type(tail.tape.outputs[0].var)) == "f32[1099511627775,1]");
  Model rev;
  rev.input("x", {1, int64_t{1} << 40});
  rev.ints_initializer("starts", {-1});
  rev.ints_initializer("ends", {INT64_MIN});
  rev.ints_initializer("axes", {1});
  rev.ints_initializer("steps", {INT64_MIN});  // -step overflows; one position
  rev.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"y"}, "last");
  rev.output("y");
  OnnxImport last = rev.import();
  CHECK(type_str(last.tape.type(last.tape.outputs[0].var)) == "f32[1,1]");
  rev.g().mutable_initializer(3)->set_int64_data(0, -1);
  CHECK(import_error(rev) ==
        "m.onnx: node 1 'last' (Slice, opset 13): a slice's positions: 1099511627776 elements, "
        "more than the 2^22 that ytape computes at import");
}

TEST_CASE("ReverseSequence with one axis for time and batch is refused, not written past") {
  Model m;
  m.input("x", {3, 3, 2});
  m.ints_initializer("lens", {3, 3, 3});
  onnx::NodeProto& n = m.node("ReverseSequence", {"x", "lens"}, {"y"}, "rs");
  set_int(n, "time_axis", 0);
  set_int(n, "batch_axis", 0);
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'rs' (ReverseSequence, opset 13): time_axis and batch_axis are one axis");
}

TEST_CASE("windows: a dilation of 2^32 and a stride of 2^47 end in the builder's checks") {
  Model conv;
  conv.input("x", {1, 1, 4, 4});
  conv.input("w", {1, 1, 2, 2});
  set_ints(conv.node("Conv", {"x", "w"}, {"y"}, "c"), "dilations", {k2to32, 1});
  conv.output("y");
  CHECK(import_error(conv) ==
        "m.onnx: node 1 'c' (Conv, opset 13): conv2d: the kernel of w f32[2,2,1,1] with "
        "dilation=[1,4294967296] does not fit in x f32[4,4,1,1] with pad=[0,0,0,0] (along H) "
        "(in the tape's shapes, ONNX's reversed)");
  Model wide;
  wide.input("x", {1, 1, 4, 4});
  wide.input("w", {1, 1, 2, 2});
  set_ints(wide.node("Conv", {"x", "w"}, {"y"}, "c"), "dilations", {k2to62, 1});
  wide.output("y");
  CHECK(import_error(wide) ==
        "m.onnx: node 1 'c' (Conv, opset 13): kernel_shape [2,2], strides [1,1], dilations "
        "[4611686018427387904,1], pads [0,0,0,0]: sizes, strides and dilations are 1 to 2^48, "
        "pads 0 to 2^48, and a dilated kernel at most 2^48");
  Model transposed;
  transposed.input("x", {1, 1, 4, 4});
  transposed.input("w", {1, 1, 2, 2});
  set_ints(transposed.node("ConvTranspose", {"x", "w"}, {"y"}, "ct"), "strides",
           {int64_t{1} << 47, 1});
  transposed.output("y");
  CHECK(import_error(transposed) ==
        "m.onnx: node 1 'ct' (ConvTranspose, opset 13): conv2d_backward_input: shape: "
        "dimension 422212465065986 is too large (in the tape's shapes, ONNX's reversed)");
}

TEST_CASE("a dilated MaxPool and an LRN unroll a bounded number of taps") {
  Model pool;
  pool.input("x", {1, 1, 300, 300});
  onnx::NodeProto& n = pool.node("MaxPool", {"x"}, {"y"}, "mp");
  set_ints(n, "kernel_shape", {100, 100});
  set_ints(n, "dilations", {2, 1});
  pool.output("y");
  CHECK(import_error(pool) ==
        "m.onnx: node 1 'mp' (MaxPool, opset 13): a dilated MaxPool of more than 4096 taps is "
        "not supported");
  Model lrn;
  lrn.input("x", {1, 10000, 1, 1});
  set_int(lrn.node("LRN", {"x"}, {"y"}, "lrn"), "size", k2to62);
  lrn.output("y");
  CHECK(import_error(lrn) ==
        "m.onnx: node 1 'lrn' (LRN, opset 13): an LRN window of more than 4096 channels is not "
        "supported");
}

TEST_CASE("TfIdfVectorizer's max_skip_count of INT64_MAX does not overflow the bound") {
  Model m;
  m.input("x", {2, 3}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& n = m.node("TfIdfVectorizer", {"x"}, {"y"}, "tf");
  set_int(n, "max_gram_length", 2);
  set_int(n, "max_skip_count", INT64_MAX);
  set_ints(n, "ngram_counts", {0, 2});
  set_ints(n, "ngram_indexes", {0, 1, 2});
  set_ints(n, "pool_int64s", {1, 2, 1, 2});
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'tf' (TfIdfVectorizer, opset 13): a TfIdfVectorizer of more than 2^16 "
        "comparisons is not supported");
}

TEST_CASE("an input's dims are checked as the model's, in ONNX's order") {
  Model m;
  m.input("x", {k2to32, k2to32});
  m.output("x");
  CHECK(import_error(m) ==
        "m.onnx: input 'x': shape [4294967296,4294967296] has more than 2^48 elements");
}

TEST_CASE("EyeLike of a large input is ops of the tape, not lists of its dims") {
  Model m;
  m.input("x", {int64_t{1} << 30, int64_t{1} << 17});
  m.node("EyeLike", {"x"}, {"y"}, "eye");
  m.output("y");
  OnnxImport eye = m.import();
  CHECK(type_str(eye.tape.type(eye.tape.outputs[0].var)) == "f32[131072,1073741824]");
}

TEST_CASE("a static number that must be an integer: NaN and 1e30 are refused, not cast") {
  Model m(17);
  float_constant(m, "length", std::nanf(""));
  m.input("x", {1, 8, 1});
  m.node("DFT", {"x", "length"}, {"y"}, "dft");
  m.output("y");
  CHECK(import_error(m) == "m.onnx: node 2 'dft' (DFT, opset 17): input 2 is nan, not an integer");
  Model depth;
  float_constant(depth, "depth", 1e30f);
  depth.input("i", {2}, onnx::TensorProto_DataType_INT64);
  depth.initializer("values", {2}, {0, 1});
  depth.node("OneHot", {"i", "depth", "values"}, {"y"}, "oh");
  depth.output("y");
  CHECK(import_error(depth) ==
        "m.onnx: node 2 'oh' (OneHot, opset 13): depth is 1.0000000150474662e+30, not 0 to 2^48");
}

TEST_CASE("the constants computed at import are bounded for the whole model") {
  Model m(17);
  scalar(m, "start", 0);
  scalar(m, "limit", int64_t{1} << 22);
  scalar(m, "delta", 1);
  for (int i = 0; i < 5; ++i) {  // each the most a list may hold; four fill the budget
    std::string y = "y" + std::to_string(i);
    m.node("Range", {"start", "limit", "delta"}, {y}, y);
    m.output(y);
  }
  CHECK(import_error(m) ==
        "m.onnx: node 5 'y4' (Range, opset 17): a constant: 4194304 elements, which with the "
        "constants computed before them pass the 2^24 that ytape computes at import for a whole "
        "model");
  Model resize;
  resize.input("x", {1, 1, 2, 2});
  resize.initializer("roi", {0}, {});
  resize.ints_initializer("sizes", {1, 1, 2, 1 << 22});  // the last axis first: 2^22 x 8
  set_string(resize.node("Resize", {"x", "roi", "", "sizes"}, {"y"}, "up"), "mode", "cubic");
  resize.output("y");
  CHECK(import_error(resize) ==
        "m.onnx: node 1 'up' (Resize, opset 13): Resize's positions and weights of an axis: "
        "33554432 elements, which with the constants computed before them pass the 2^24 that "
        "ytape computes at import for a whole model");
}

TEST_CASE("a 3-d convolution or pool of 2^32 depth taps is refused, not unrolled") {
  Model conv;  // found by the fuzz target: ConvTranspose's weights 2^32 deep
  conv.input("x", {1, 1, 3, 4, 5});
  conv.input("w", {1, 2, k2to32, 3, 3});
  conv.node("ConvTranspose", {"x", "w"}, {"y"}, "up");
  conv.output("y");
  CHECK(import_error(conv) ==
        "m.onnx: node 1 'up' (ConvTranspose, opset 13): a 3-d ConvTranspose of a kernel or "
        "window 4294967296 deep (ytape's are at most 4096) is not supported");
  Model pool;
  pool.input("x", {1, 1, 5000, 4, 4});
  onnx::NodeProto& n = pool.node("AveragePool", {"x"}, {"y"}, "avg");
  set_ints(n, "kernel_shape", {5000, 2, 2});
  pool.output("y");
  CHECK(import_error(pool) ==
        "m.onnx: node 1 'avg' (AveragePool, opset 13): a 3-d AveragePool of a kernel or window "
        "5000 deep (ytape's are at most 4096) is not supported");
}

TEST_CASE("a window whose area passes 2^48 is refused before a kernel multiplies it out") {
  Model m;  // found by the fuzz target: the average of ones, folded, overflowed its divisor
  m.input("x", {1, 3, 32, 32});
  onnx::NodeProto& n = m.node("AveragePool", {"x"}, {"y"}, "avg");
  set_ints(n, "kernel_shape", {k2to32 + 1, int64_t{1} << 31});
  set_string(n, "auto_pad", "SAME_LOWER");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'avg' (AveragePool, opset 13): kernel_shape's window: 4294967297 * "
        "2147483648 is more than 2^48 elements");
}

}  // namespace ytape::onnx_test
