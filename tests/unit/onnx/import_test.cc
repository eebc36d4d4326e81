// The importer on small models built here with ONNX's protobuf classes: each result is
// compared with a naive row-major reference, as ONNX defines the op.
#include "onnx/import.h"

#include <doctest/doctest.h>

#include "io/json.h"
#include "model.h"
#include "runtime/tensor_file.h"
#include "tape/print.h"

namespace ytape::onnx_test {

namespace {

std::vector<float> iota_floats(int n, float from = 0) {
  std::vector<float> v(n);
  for (int i = 0; i < n; ++i) v[i] = from + static_cast<float>(i);
  return v;
}

// Gemm with transB: y = x W^T + b, x (2, 3), W (4, 3), b (4).
Model gemm_model() {
  Model m;
  m.input("x", {2, 3});
  m.initializer("W", {4, 3}, iota_floats(12, -5));
  m.initializer("b", {4}, {0.5f, -1, 2, 0});
  set_int(m.node("Gemm", {"x", "W", "b"}, {"y"}, "fc"), "transB", 1);
  m.output("y");
  return m;
}

// Appends the row-major (m, n) product of row-major x (m, inner) and y (inner, n) to out.
void append_product(std::vector<float>& out, const float* x, const float* y, int m, int inner,
                    int n) {
  for (int i = 0; i < m; ++i) {
    for (int j = 0; j < n; ++j) {
      float s = 0;
      for (int l = 0; l < inner; ++l) s += x[i * inner + l] * y[l * n + j];
      out.push_back(s);
    }
  }
}

}  // namespace

TEST_CASE("Gemm: initializers are weight inputs, and y = x W^T + b") {
  OnnxImport m = gemm_model().import();
  REQUIRE(m.tape.ops.size() >= 3);
  CHECK(m.tape.ops[0].name == "x");
  CHECK(m.tape.ops[1].name == "W");
  CHECK(m.tape.ops[2].name == "b");
  REQUIRE(m.weights.size() == 2);
  CHECK(m.weights[0].second.shape() == Shape{3, 4});  // ONNX's (4, 3) reversed
  std::vector<float> x = iota_floats(6, 1), w = iota_floats(12, -5), b = {0.5f, -1, 2, 0};
  std::vector<float> want;
  for (int i = 0; i < 2; ++i) {
    for (int j = 0; j < 4; ++j) {
      float s = b[j];
      for (int k = 0; k < 3; ++k) s += x[i * 3 + k] * w[j * 3 + k];
      want.push_back(s);
    }
  }
  std::vector<Tensor> y = run(m, {{"x", onnx_tensor({2, 3}, x)}});
  CHECK(y[0].shape() == Shape{4, 2});
  CHECK(values(y[0]) == want);
}

TEST_CASE("Conv: NCHW strides and pads map to the tape's WHCN, with the bias per channel") {
  Model m;
  m.input("x", {1, 1, 4, 5});
  m.initializer("w", {2, 1, 3, 3}, iota_floats(18, -9));
  m.initializer("b", {2}, {1, -1});
  onnx::NodeProto& n = m.node("Conv", {"x", "w", "b"}, {"y"});
  set_ints(n, "strides", {2, 1});
  set_ints(n, "pads", {1, 0, 1, 2});  // H begin, W begin, H end, W end
  m.output("y");
  std::vector<float> x = iota_floats(20, 1), w = iota_floats(18, -9);
  int oh_n = (4 + 2 - 3) / 2 + 1, ow_n = (5 + 2 - 3) / 1 + 1;
  std::vector<float> want;
  for (int co = 0; co < 2; ++co) {
    for (int oh = 0; oh < oh_n; ++oh) {
      for (int ow = 0; ow < ow_n; ++ow) {
        float s = co == 0 ? 1 : -1;
        for (int i = 0; i < 3; ++i) {
          for (int j = 0; j < 3; ++j) {
            int h = oh * 2 + i - 1, c = ow + j;
            if (h >= 0 && h < 4 && c < 5) s += w[co * 9 + i * 3 + j] * x[h * 5 + c];
          }
        }
        want.push_back(s);
      }
    }
  }
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 1, 4, 5}, x)}});
  CHECK(y[0].shape() == Shape{ow_n, oh_n, 2, 1});
  CHECK(values(y[0]) == want);
}

TEST_CASE("a static shape subgraph folds at import: Shape, Gather, Concat into Reshape") {
  Model m;
  m.input("x", {2, 3, 4});
  m.ints_initializer("zero", {0});
  m.ints_initializer("rest", {-1});
  m.node("Shape", {"x"}, {"s"});
  m.node("Gather", {"s", "zero"}, {"n"});
  set_int(m.node("Concat", {"n", "rest"}, {"shape"}), "axis", 0);
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y");
  OnnxImport imported = m.import();
  CHECK(print_tape(imported.tape) ==
        "tape g\n"
        "  meta onnx.opset = \"13\"\n"
        "  in  %1::f32[4,3,2] x\n"
        "  %2 = reshape(%1; shape=[12,2])::f32[12,2]  # m.onnx:4\n"
        "  out %2 y\n");
}

TEST_CASE("Transpose: ONNX's perm, mapped to the reversed dims") {
  Model m;
  m.input("x", {2, 3, 4});
  set_ints(m.node("Transpose", {"x"}, {"y"}), "perm", {2, 0, 1});
  m.output("y");
  std::vector<float> x = iota_floats(24);
  std::vector<float> want;  // y[a][b][c] = x[b][c][a], y of shape (4, 2, 3)
  for (int a = 0; a < 4; ++a) {
    for (int b = 0; b < 2; ++b) {
      for (int c = 0; c < 3; ++c) want.push_back(x[b * 12 + c * 4 + a]);
    }
  }
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({2, 3, 4}, x)}});
  CHECK(y[0].shape() == Shape{3, 2, 4});
  CHECK(values(y[0]) == want);
}

TEST_CASE("Slice with a negative step, and Pad in reflect mode, pick the right elements") {
  Model m;
  m.input("x", {3, 4});
  m.ints_initializer("starts", {-1});
  m.ints_initializer("ends", {-1000});
  m.ints_initializer("axes", {1});
  m.ints_initializer("steps", {-2});
  m.ints_initializer("pads", {0, 1, 0, 2});
  m.node("Slice", {"x", "starts", "ends", "axes", "steps"}, {"s"});
  set_string(m.node("Pad", {"x", "pads"}, {"p"}), "mode", "reflect");
  m.output("s");
  m.output("p");
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({3, 4}, iota_floats(12))}});
  CHECK(values(y[0]) == std::vector<float>{3, 1, 7, 5, 11, 9});
  CHECK(values(y[1]) ==
        std::vector<float>{1, 0, 1, 2, 3, 2, 1, 5, 4, 5, 6, 7, 6, 5, 9, 8, 9, 10, 11, 10, 9});
}

TEST_CASE("AveragePool divides by the elements of x only, unless count_include_pad") {
  for (int include : {0, 1}) {
    Model m;
    m.input("x", {1, 1, 3, 3});
    onnx::NodeProto& n = m.node("AveragePool", {"x"}, {"y"});
    set_ints(n, "kernel_shape", {2, 2});
    set_ints(n, "strides", {2, 2});
    set_ints(n, "pads", {1, 1, 1, 1});
    set_int(n, "count_include_pad", include);
    m.output("y");
    std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 1, 3, 3}, iota_floats(9, 1))}});
    std::vector<float> want =
        include ? std::vector<float>{0.25f, 1.25f, 2.75f, 7} : std::vector<float>{1, 2.5f, 5.5f, 7};
    CHECK(values(y[0]) == want);
  }
}

TEST_CASE("BatchNormalization's inference form uses the given statistics per channel") {
  Model m;
  m.input("x", {2, 2});
  m.initializer("scale", {2}, {2, 1});
  m.initializer("bias", {2}, {0, 1});
  m.initializer("mean", {2}, {1, -1});
  m.initializer("var", {2}, {3, 0});
  onnx::NodeProto& n = m.node("BatchNormalization", {"x", "scale", "bias", "mean", "var"}, {"y"});
  auto* eps = n.add_attribute();
  eps->set_name("epsilon");
  eps->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  eps->set_f(1);
  m.output("y");
  // y[n][c] = (x - mean_c) / sqrt(var_c + 1) * scale_c + bias_c
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({2, 2}, {3, 1, 5, -3})}});
  CHECK(values(y[0]) == std::vector<float>{2, 3, 4, -1});
}

TEST_CASE("MatMul broadcasts batch dims and takes vectors as ONNX does") {
  Model m;
  m.input("a", {2, 1, 2, 3});
  m.input("b", {3, 2});
  m.input("v", {3});
  m.node("MatMul", {"a", "b"}, {"y"});
  m.node("MatMul", {"a", "v"}, {"z"});
  m.output("y");
  m.output("z");
  std::vector<float> a = iota_floats(12), b = iota_floats(6, 1), v = {1, 0, -1};
  std::vector<float> want_y, want_z;
  for (int k = 0; k < 2; ++k) {
    append_product(want_y, &a[k * 6], b.data(), 2, 3, 2);
    for (int i = 0; i < 2; ++i) want_z.push_back(a[k * 6 + i * 3] - a[k * 6 + i * 3 + 2]);
  }
  std::vector<Tensor> y = run(m.import(), {{"a", onnx_tensor({2, 1, 2, 3}, a)},
                                           {"b", onnx_tensor({3, 2}, b)},
                                           {"v", onnx_tensor({3}, v)}});
  CHECK(y[0].shape() == Shape{2, 2, 1, 2});
  CHECK(values(y[0]) == want_y);
  CHECK(y[1].shape() == Shape{2, 1, 2});
  CHECK(values(y[1]) == want_z);
}

TEST_CASE("MatMul of a batch by one matrix is one product, the matrix not copied per batch") {
  Model m;
  m.input("a", {2, 2, 3});
  m.input("b", {3, 2});
  m.node("MatMul", {"a", "b"}, {"y"});  // a Linear layer on a sequence
  m.node("MatMul", {"b", "a"}, {"z"});  // no fold: one b for each matrix of a, on the left
  m.output("y");
  m.output("z");
  OnnxImport imported = m.import();
  int products = 0, copies = 0;
  for (const Op& op : imported.tape.ops) {
    products += op.prim == Prim::matmul && imported.tape.types[op.args[0].id].shape.size() == 2;
    copies += op.prim == Prim::broadcast_to;
  }
  CHECK(products == 1);
  CHECK(copies == 1);  // b broadcast for z
  std::vector<float> a = iota_floats(12), b = iota_floats(6, 1);
  std::vector<float> want_y, want_z;
  for (int k = 0; k < 2; ++k) {
    append_product(want_y, &a[k * 6], b.data(), 2, 3, 2);
    append_product(want_z, b.data(), &a[k * 6], 3, 2, 3);
  }
  std::vector<Tensor> y =
      run(imported, {{"a", onnx_tensor({2, 2, 3}, a)}, {"b", onnx_tensor({3, 2}, b)}});
  CHECK(y[0].shape() == Shape{2, 2, 2});
  CHECK(values(y[0]) == want_y);
  CHECK(y[1].shape() == Shape{3, 3, 2});
  CHECK(values(y[1]) == want_z);
}

TEST_CASE("the same model gives byte-identical tapes and weights") {
  OnnxImport a = gemm_model().import(), b = gemm_model().import();
  CHECK(write_tape_json(a.tape) == write_tape_json(b.tape));
  CHECK(write_safetensors(a.weights) == write_safetensors(b.weights));
}

TEST_CASE("a graph input given as a constant folds into the tape") {
  Model m;
  m.input("x", {2, 3});
  m.input("shape", {1}, onnx::TensorProto_DataType_INT64);
  m.node("Reshape", {"x", "shape"}, {"y"});
  m.output("y");
  Tensor shape(Type{DType::i64, {1}});
  shape.data<int64_t>()[0] = 6;
  OnnxImportOptions options;
  options.constant_inputs.emplace_back("shape", shape);
  OnnxImport imported = m.import(options);
  CHECK(imported.tape.num_inputs() == 1);
  CHECK(imported.tape.types[imported.tape.outputs[0].var.id].shape == Shape{6});
  CHECK(count_prim(imported.tape, Prim::gather) == 0);
}

// ---- errors: each names the file and the node ------------------------------------------

TEST_CASE("an op type without a rule is refused, naming the node, op type and opset") {
  Model m;
  m.input("x", {2});
  m.node("Relu", {"x"}, {"r"}, "first");
  m.node("Unique", {"r"}, {"y"}, "unique");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 2 'unique' (Unique, opset 13): op type Unique is not supported (docs/onnx.md "
        "lists those that are)");
  CHECK_THROWS_AS(m.import(), UnsupportedError);
}

TEST_CASE("an opset beyond 17 is refused, and an older op definition than opset 13's") {
  Model m(18);
  m.input("x", {2});
  m.output("x");
  CHECK(import_error(m) == "m.onnx: opset 18 is not supported (ytape imports opset 13 to 17)");
  Model old(12);
  old.input("x", {1, 1, 3, 3});
  old.input("w", {1, 1, 2, 2});
  old.node("Conv", {"x", "w"}, {"c"});                       // Conv-11, as at opset 13: accepted
  set_ints(old.node("Squeeze", {"c"}, {"s"}), "axes", {0});  // axes as an attribute: read
  old.node("Hardmax", {"s"}, {"y"});  // Hardmax-11 flattened its input: refused
  old.output("y");
  CHECK(import_error(old) ==
        "m.onnx: node 3 (Hardmax, opset 12): Hardmax-11 is not supported: ytape imports Hardmax "
        "as defined from opset 13");
}

TEST_CASE("a shape that is not static is refused, naming the input") {
  Model m;
  m.input("x", {2, 3});
  m.input("s", {2}, onnx::TensorProto_DataType_INT64);
  m.node("Reshape", {"x", "s"}, {"y"});
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 (Reshape, opset 13): input 2 's' must be static: a constant or "
        "initializer, or computed from them");
}

TEST_CASE("a symbolic input dim takes the size given for its name, or is refused by name") {
  Model m = gemm_model();
  auto* batch = m.g().mutable_input(0)->mutable_type()->mutable_tensor_type()->mutable_shape();
  batch->mutable_dim(0)->set_dim_param("batch");  // x: (batch, 3)
  CHECK(import_error(m) ==
        "m.onnx: input 'x': dimension 'batch' has no fixed size; a tape's shapes are static: "
        "give it one (ytape import --dim batch=N)");
  OnnxImportOptions options;
  options.dims["batch"] = 5;
  OnnxImport imported = m.import(options);
  const Tape& t = imported.tape;
  CHECK(t.type(t.ops.front().outs.front()) == Type{DType::f32, {3, 5}});
  CHECK(t.type(t.outputs.front().var) == Type{DType::f32, {4, 5}});
  batch->mutable_dim(0)->clear_dim_param();
  CHECK(import_error(m) ==
        "m.onnx: input 'x': dimension 1 has no size, fixed or named; a tape's shapes are "
        "static, so export the model with fixed sizes");
}

TEST_CASE("a model listing an output twice is refused, not made an invalid tape") {
  Model m = gemm_model();
  m.output("y");  // found by fuzzing: the tape had two outputs of one name
  CHECK(import_error(m) ==
        "m.onnx: the model does not make a valid tape: tape g: two outputs are named 'y'; "
        "give each output its own name");
}

TEST_CASE("a Conv of an input or weights of rank under 3 is refused by its node") {
  for (const char* op : {"Conv", "ConvTranspose"}) {
    Model m;
    m.input("x", {1, 1, 4});
    m.input("w", {2});  // found by fuzzing: read out of bounds
    m.node(op, {"x", "w"}, {"y"});
    m.output("y");
    CHECK(import_error(m) ==
          fmt::format("m.onnx: node 1 ({}, opset 13): {} takes images (N, C, spatial...) and "
                      "weights (M, C, kernel...); one has rank 1",
                      op, op));
  }
}

TEST_CASE("a Reshape to more elements than a tensor may have is an error, not an overflow") {
  Model m;
  m.input("x", {2, 3});
  m.ints_initializer("s", {15, INT64_MAX, -1});  // found by fuzzing: 15 * 2^63 overflowed
  m.node("Reshape", {"x", "s"}, {"y"});
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 (Reshape, opset 13): the shape has more elements than a tensor may "
        "have (281474976710656)");
}

TEST_CASE("instance and batch norm of an input without a channel dim are errors") {
  for (const char* op : {"InstanceNormalization", "BatchNormalization"}) {
    Model m;
    m.input("x", {4});  // found by fuzzing: a rank-1 input indexed dim -1
    m.input("s", {4});
    m.input("b", {4});
    std::vector<std::string> ins{"x", "s", "b"};
    if (std::string(op) == "BatchNormalization") ins.insert(ins.end(), {"s", "b"});
    m.node(op, ins, {"y"});
    m.output("y");
    CHECK(import_error(m) == fmt::format("m.onnx: node 1 ({}, opset 13): the input has rank 1; "
                                         "it needs a channel dim",
                                         op));
  }
}

TEST_CASE("an initializer's claimed size is checked against its data before allocation") {
  // Found by fuzzing: dims whose product overflowed, and sizes far beyond the data given.
  for (auto [dims, message] : {std::pair<std::vector<int64_t>, std::string>{
                                   {1 << 30, 1 << 30, 1 << 30},
                                   "shape [1073741824,1073741824,1073741824] has more than "
                                   "2^48 elements"},
                               {{int64_t{1} << 40}, "0 values for 1099511627776 elements"}}) {
    Model m;
    m.input("x", {1});
    onnx::TensorProto* t = m.g().add_initializer();
    t->set_name("w");
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : dims) t->add_dims(d);
    m.node("Add", {"x", "w"}, {"y"});
    m.output("y");
    CHECK(import_error(m) == "m.onnx: initializer 'w': " + message);
  }
}

TEST_CASE("only small static results fold, and large ones are not computed to find out") {
  // Found by fuzzing: Trilu's masks over a 2^30-element input were computed at import.
  Model m(14);
  m.input("x", {int64_t{1} << 20, int64_t{1} << 10}, onnx::TensorProto_DataType_INT64);
  m.node("Trilu", {"x"}, {"y"});
  m.output("y");
  OnnxImport imported = m.import();
  CHECK(count_prim(imported.tape, Prim::iota) > 0);
}

TEST_CASE("an op of a later opset than the model's says from which") {
  Model m;
  m.input("x", {2, 2});
  m.node("Trilu", {"x"}, {"y"});
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 (Trilu, opset 13): ONNX defines Trilu from opset 14, and the model "
        "imports opset 13");
}

TEST_CASE("a window's stride 0 is an error, not a division by zero") {
  Model m;  // found by fuzzing: auto_pad SAME divided by the stride
  m.input("x", {1, 1, 4, 4});
  onnx::NodeProto& pool = m.node("AveragePool", {"x"}, {"y"});
  set_ints(pool, "kernel_shape", {2, 2});
  set_ints(pool, "strides", {0, 1});
  set_string(pool, "auto_pad", "SAME_UPPER");
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 (AveragePool, opset 13): kernel_shape [2,2], strides [0,1], dilations "
        "[1,1], pads [0,0,0,0]: sizes, strides and dilations are 1 to 2^48, pads 0 to 2^48, "
        "and a dilated kernel at most 2^48");
}

TEST_CASE("LRN with a window wider than the channels sums them all") {
  // Found by fuzzing: a read of the builder's moved types; a huge size unrolled its window.
  Model m;
  m.input("x", {1, 2, 1, 1});
  onnx::NodeProto& lrn = m.node("LRN", {"x"}, {"y"});
  set_int(lrn, "size", 1000);
  auto* alpha = lrn.add_attribute();  // alpha / size = 1; bias 1, beta 1
  alpha->set_name("alpha");
  alpha->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  alpha->set_f(1000);
  auto* beta = lrn.add_attribute();
  beta->set_name("beta");
  beta->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  beta->set_f(1);
  m.output("y");
  OnnxImport imported = m.import();
  CHECK(imported.tape.ops.size() < 20);
  std::vector<Tensor> y = run(imported, {{"x", onnx_tensor({1, 2, 1, 1}, {1, 2})}});
  std::vector<float> got = values(y[0]);
  CHECK(got[0] == doctest::Approx(1.0 / 6));
  CHECK(got[1] == doctest::Approx(2.0 / 6));
}

TEST_CASE("MaxUnpool's window attributes are checked, not read past their end") {
  Model m(11);  // found by fuzzing: pads of one entry for two spatial dims
  m.input("x", {1, 1, 2, 2});
  m.input("i", {1, 1, 2, 2}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& unpool = m.node("MaxUnpool", {"x", "i"}, {"y"});
  set_ints(unpool, "kernel_shape", {2, 2});
  set_ints(unpool, "pads", {1});
  m.output("y");
  CHECK(import_error(m) ==
        "m.onnx: node 1 (MaxUnpool, opset 11): kernel_shape, strides or pads "
        "do not have one entry per spatial dim");
}

TEST_CASE("a Concat of no inputs is an error") {
  Model m;  // found by fuzzing: it read its first input's rank
  m.input("x", {2});
  m.node("Concat", {}, {"y"});
  m.output("y");
  CHECK(import_error(m) == "m.onnx: node 1 (Concat, opset 13): input 1 is missing");
}

TEST_CASE("shapes that do not broadcast are an error of the node") {
  Model m;
  m.input("x", {2, 3});
  m.input("y", {2});
  m.node("Add", {"x", "y"}, {"z"}, "sum");
  m.output("z");
  CHECK(import_error(m).rfind("m.onnx: node 1 'sum' (Add, opset 13): ", 0) == 0);
}

TEST_CASE("Softmax before opset 13 normalizes over all axes from its axis on") {
  Model m(11);
  m.input("x", {2, 2, 2});
  m.node("Softmax", {"x"}, {"y"});  // axis 1: each of the two 2x2 blocks sums to 1
  m.output("y");
  std::vector<Tensor> y =
      run(m.import(), {{"x", onnx_tensor({2, 2, 2}, {0, 0, 0, 0, 1, 1, 1, 1})}});
  CHECK(values(y[0]) == std::vector<float>(8, 0.25f));
}

TEST_CASE("an older opset whose ops mean what they mean at opset 13 imports") {
  Model m(11);  // Relu-6, Add-7, Gemm-11: only element types were added since
  m.input("x", {1, 2});
  m.initializer("w", {2, 2}, {1, 2, 3, 4});
  m.node("Gemm", {"x", "w"}, {"g"});
  m.node("Add", {"g", "x"}, {"a"});
  m.node("Relu", {"a"}, {"y"});
  m.output("y");
  std::vector<Tensor> y = run(m.import(), {{"x", onnx_tensor({1, 2}, {1, -1})}});
  CHECK(values(y[0]) == std::vector<float>{0, 0});  // (1 - 3, 2 - 4) + (1, -1), then relu
}

TEST_CASE("bytes that are not a model, and an input of a type ytape lacks") {
  CHECK_THROWS_WITH(import_onnx("not a model", "m.onnx"),
                    "m.onnx: not an ONNX model (its bytes do not parse as a ModelProto)");
  Model m;
  m.input("x", {2}, onnx::TensorProto_DataType_UINT64);
  m.output("x");
  CHECK(import_error(m) ==
        "m.onnx: input 'x': element type uint64 is not one of ytape's (f32, f64, f16, i64, bool)");
}

}  // namespace ytape::onnx_test
