// Export, then import: the tape that comes back computes what the original computes, for
// tapes covering every primitive that has an ONNX form.
#include "onnx/export.h"

#include <doctest/doctest.h>
#include <onnx/onnx_pb.h>

#include <cmath>

#include "inspect/diff.h"
#include "model.h"
#include "onnx/marks.h"
#include "runtime/inputs.h"
#include "tape/builder.h"
#include "tape/spatial3d.h"
#include "unit/tape/branch_tapes.h"

namespace ytape::onnx_test {

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

Tensor testing_scalar(double v) {
  Tensor out(Type{DType::f64, {}});
  out.data<double>()[0] = v;
  return out;
}

// Runs `t` and its round trip through ONNX's nodes on the same made-up inputs; read with
// ytape's marks, the model is `t` again.
void check_round_trip(const Tape& t) {
  std::string model = export_onnx(t);
  Tape same = import_onnx(model, "exported.onnx").tape;
  TapeDiff diff = diff_tapes(t, same);
  INFO(diff_str(t, same, diff, {}));
  CHECK(diff.same());
  OnnxImportOptions plain;  // the nodes, not ytape's marks of the primitives they compute
  plain.read_marks = false;
  OnnxImport back = import_onnx(model, "exported.onnx", plain);
  TensorMap inputs = complete_inputs(t, {}, 7);
  std::vector<Tensor> want = Executor(t).run(inputs);
  std::vector<Tensor> got = run(back, inputs);
  REQUIRE(got.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    INFO("output ", t.outputs[i].name);
    REQUIRE(got[i].type() == want[i].type());
    for (int64_t k = 0; k < want[i].size(); ++k) {
      double g = element_value(got[i], k), w = element_value(want[i], k);
      CHECK(std::abs(g - w) <= 1e-5 * (1 + std::abs(w)));
    }
  }
}

}  // namespace

TEST_CASE("a convolutional network exports and imports back to the same results") {
  Builder b("cnn");
  Var x = b.input("image", f32({9, 8, 4, 2}));
  Var w = b.input("w", f32({3, 2, 2, 6}));
  Var scale = b.input("scale", f32({6}));
  Var bias = b.input("bias", f32({6}));
  Var y = b.conv2d(x, w, {.stride = {2, 1}, .pad = {1, 0, 1, 2}, .dilation = {1, 2}, .groups = 2});
  y = b.relu(b.batchnorm(y, scale, bias, {.eps = 1e-3}));
  Var m = b.max_pool2d(y, {.window = {2, 2}, .stride = {1, 2}, .pad = {1, 0, 0, 1}});
  Var a = b.avg_pool2d(y, {.window = {3, 2}, .stride = {1, 1}, .pad = {1, 1, 0, 1}});
  b.output(m, "max");
  b.output(a, "avg");
  b.output(b.log_softmax(b.sum(a, {.dims = {1, 2}}), {.dims = {1}}), "scores");
  // The input's gradient: ConvTranspose, with an output padding (the stride leaves one over).
  b.output(b.conv2d_backward_input(y, w,
                                   {.shape = {9, 8, 4, 2},
                                    .stride = {2, 1},
                                    .pad = {1, 0, 1, 2},
                                    .dilation = {1, 2},
                                    .groups = 2}),
           "dx");
  check_round_trip(b.finish());
}

TEST_CASE("the gradient primitives of convolutions and batch norm export in plain ops") {
  Builder b("grads");
  Var x = b.input("image", f32({9, 8, 4, 2}));
  Var w = b.input("w", f32({3, 2, 2, 6}));
  Var w3 = b.input("w3", f32({3, 3, 4, 6}));
  Var scale = b.input("scale", f32({4}));
  Var bias = b.input("bias", f32({4}));
  // Strides that leave rows over, dilation, uneven pads and groups.
  AttrsOf<Prim::conv2d_backward_filter> grouped = {.shape = {3, 2, 2, 6},
                                                   .stride = {2, 1},
                                                   .pad = {1, 0, 1, 2},
                                                   .dilation = {1, 2},
                                                   .groups = 2};
  Var dy = b.conv2d(x, w, {.stride = {2, 1}, .pad = {1, 0, 1, 2}, .dilation = {1, 2}, .groups = 2});
  b.output(b.conv2d_backward_filter(x, dy, grouped), "dw");
  Var dy3 = b.conv2d(x, w3, {.stride = {3, 3}, .pad = {1, 1, 0, 0}});
  b.output(b.conv2d_backward_filter(x, dy3,
                                    {.shape = {3, 3, 4, 6}, .stride = {3, 3}, .pad = {1, 1, 0, 0}}),
           "dw_strided");
  std::vector<Var> s = b.batchnorm_with_stats(x, scale, bias, {.eps = 1e-3});
  b.output(s[0], "y"), b.output(s[1], "mean"), b.output(s[2], "invstd");
  std::vector<Var> d = b.batchnorm_backward(b.neg(x), x, scale, s[1], s[2]);
  b.output(d[0], "dx"), b.output(d[1], "dscale"), b.output(d[2], "dbias");
  check_round_trip(b.finish());
}

TEST_CASE("pooling gradients export through MaxPool, ScatterElements and ConvTranspose") {
  Builder b("pool_grads");
  Var x = b.input("image", f32({9, 8, 3, 2}));
  // Overlapping windows, so that some elements receive several gradients.
  std::vector<Var> m =
      b.max_pool2d_with_indices(x, {.window = {3, 2}, .stride = {2, 1}, .pad = {1, 1, 0, 1}});
  b.output(m[0], "y"), b.output(m[1], "indices");
  b.output(b.max_pool2d_backward(b.neg(m[0]), m[1], {.shape = {9, 8, 3, 2}}), "dx");
  // The stride leaves a row over, which the output padding makes up.
  AttrsOf<Prim::avg_pool2d> avg = {.window = {3, 2}, .stride = {2, 3}, .pad = {1, 0, 0, 1}};
  Var a = b.avg_pool2d(x, avg);
  b.output(b.avg_pool2d_backward(
               b.neg(a),
               {.shape = {9, 8, 3, 2}, .window = {3, 2}, .stride = {2, 3}, .pad = {1, 0, 0, 1}}),
           "avg_dx");
  Var idx = b.constant(DType::i64, 2, {1, 4, 1, 1});
  Var part = b.slice(x, {.start = {1, 1, 1, 1}, .stop = {9, 4, 3, 2}, .step = {1, 1, 1, 1}});
  b.output(b.scatter_add(part, idx, {.dim = 2, .size = 5}), "scattered");
  check_round_trip(b.finish());
}

TEST_CASE("shape, index and reduction primitives export with their dims mapped") {
  Builder b("shapes");
  Var x = b.input("x", f32({3, 4, 2}));
  Var p = b.permutedims(x, {.perm = {2, 3, 1}});
  b.output(b.reshape(p, {.shape = {8, 3}}), "reshaped");
  b.output(b.slice(x, {.start = {2, 1, 1}, .stop = {3, 4, 2}, .step = {1, 2, 1}}), "sliced");
  b.output(b.concat({x, b.neg(x)}, {.dim = 2}), "joined");
  b.output(b.pad(x, {.lo = {1, 0, 2}, .hi = {0, 2, 0}, .interior = {0, 0, 0}, .value = 0.5}),
           "padded");
  b.output(b.maximum(x, {.dims = {2}}), "max");
  b.output(b.minimum(x, {.dims = {1, 3}}), "min");
  b.output(b.argmax(x, {.dim = 2}), "argmax");
  b.output(b.softmax(x, {.dims = {1}}), "softmax");
  b.output(b.broadcast_to(b.sum(x, {.dims = {2}}), {.shape = {3, 2, 5}}), "broadcast");
  Var idx = b.constant(Type{DType::i64, {3, 1, 2}}, std::vector<uint8_t>(48, 0));
  b.output(b.gather(x, b.add(b.constant(DType::i64, 2, {3, 1, 2}), idx), {.dim = 2}), "gathered");
  Var mask = b.lt(x, b.constant(DType::f32, 0));
  b.output(b.convert(b.select(mask, b.log1p(b.abs(x)), b.expm1(x)), {.dtype = DType::f64}),
           "selected");
  b.output(b.ne(mask, b.constant(DType::boolean, 1)), "not");
  b.output(b.add(x, b.fill({.value = 2, .dtype = DType::f32, .shape = {3, 4, 2}})), "filled");
  check_round_trip(b.finish());
}

TEST_CASE("interior padding exports as a concatenation with its filler, merged and cut") {
  Builder b("interior");
  Var x = b.input("x", f32({3, 4, 2}));
  Var dy = b.input("dy", f32({2, 3, 3, 2, 1}));
  Var w = b.input("w", f32({2, 2, 3, 4, 2}));
  b.output(b.pad(x, {.lo = {1, 0, 0}, .hi = {0, 2, 1}, .interior = {2, 0, 1}, .value = -0.5}),
           "padded");
  // A 3-d convolution's transpose at a depth stride above 1 (tape/spatial3d.h) pads with
  // interior, as the gradient of a strided slice does.
  BuilderSink s(b);
  b.output(conv3d_backward_input(s, dy, w, {3, 4, 7, 4, 1},
                                 {.stride = {1, 1, 2}, .pad = {0, 0, 0, 0, 1, 0}}),
           "transposed");
  check_round_trip(b.finish());
}

onnx::ModelProto exported(const Tape& t) {
  onnx::ModelProto m;
  REQUIRE(m.ParseFromString(export_onnx(t)));
  return m;
}

// The op types of a model's nodes, in graph order.
std::vector<std::string> op_types(const onnx::ModelProto& m) {
  std::vector<std::string> types;
  for (const onnx::NodeProto& n : m.graph().node()) types.push_back(n.op_type());
  return types;
}

TEST_CASE("erf, floor, ceil and round export as their ONNX namesakes") {
  Builder b("rounding");
  Var x = b.input("x", Type{DType::f64, {3, 4}});
  Var scaled = b.mul(x, b.constant(DType::f64, 7.5));
  b.output(b.erf(x), "erf");
  b.output(b.floor(scaled), "floor");
  b.output(b.ceil(scaled), "ceil");
  b.output(b.round(scaled), "round");
  Tape t = b.finish();
  onnx::ModelProto model = exported(t);
  CHECK(op_types(model) == std::vector<std::string>{"Constant", "Mul", "Erf", "Floor", "Ceil",
                                                    "Round", "Identity", "Identity", "Identity",
                                                    "Identity"});
  CHECK(model.opset_import(0).version() == 17);
  check_round_trip(t);
}

TEST_CASE("gelu exports as the ops it rounds like and imports back to the same values") {
  for (DType d : {DType::f32, DType::f64}) {
    Builder b("gelu");
    Var x = b.input("x", Type{d, {3, 4}});
    b.output(b.gelu(x), "y");
    Tape t = b.finish();
    std::vector<std::string> types = op_types(exported(t));
    CHECK(std::count(types.begin(), types.end(), "Tanh") == 1);
    CHECK(std::count(types.begin(), types.end(), "Mul") == 6);
    check_round_trip(t);
  }
}

TEST_CASE("stop_gradient exports as an Identity marked with it and imports back as itself") {
  Builder b("stop");
  Var x = b.input("x", Type{DType::f32, {2, 3}});
  b.output(b.mul(x, b.stop_gradient(b.tanh(x))), "y");
  Tape t = b.finish();
  CHECK(op_types(exported(t)) == std::vector<std::string>{"Tanh", "Identity", "Mul", "Identity"});
  check_round_trip(t);
}

TEST_CASE("asin, acos and atan export as their ONNX namesakes") {
  Builder b("inverse_trig");
  Var x = b.input("x", Type{DType::f32, {2, 3}});
  Var inside = b.tanh(x);
  b.output(b.asin(inside), "asin");
  b.output(b.acos(inside), "acos");
  b.output(b.atan(x), "atan");
  Tape t = b.finish();
  CHECK(op_types(exported(t)) == std::vector<std::string>{"Tanh", "Asin", "Acos", "Atan",
                                                          "Identity", "Identity", "Identity"});
  check_round_trip(t);
}

TEST_CASE("rem exports as Mod with fmod = 1") {
  Builder b("remainder");
  Var x = b.input("x", f32({2, 3}));
  Var y = b.input("y", f32({2}));
  b.output(b.sum(b.rem(x, y), {.dims = {1, 2}}), "z");
  Tape t = b.finish();
  onnx::ModelProto model;
  REQUIRE(model.ParseFromString(export_onnx(t)));
  const onnx::NodeProto& mod = model.graph().node(0);
  CHECK(mod.op_type() == "Mod");
  REQUIRE(mod.attribute_size() == 1);
  CHECK(mod.attribute(0).name() == "fmod");
  CHECK(mod.attribute(0).i() == 1);
  check_round_trip(t);
}

TEST_CASE("matmul exports as Gemm or MatMul, transposes included") {
  Builder b("linalg");
  Var a = b.input("a", f32({3, 4}));
  Var c = b.input("c", f32({3, 5}));
  Var e = b.input("e", f32({5, 4}));
  Var u = b.input("u", f32({3, 4, 2}));
  Var v = b.input("v", f32({3, 5, 2}));
  b.output(b.matmul(a, c, {.transpose_a = true}), "gemm");
  b.output(b.matmul(e, a, {.transpose_b = true}), "gemm_t");
  b.output(b.matmul(u, v, {.transpose_a = true}), "batched");
  check_round_trip(b.finish());
}

// A tape whose gather exports as five nodes (Constant, Expand, Constant, Sub,
// GatherElements), the first of them marked.
Tape gather_tape() {
  Builder b("g");
  Var x = b.input("x", f32({4, 3}));
  Var idx = b.constant(Type{DType::i64, {2, 3}}, std::vector<uint8_t>(48, 0));
  b.output(b.gather(x, b.add(idx, b.constant(DType::i64, 1)), {.dim = 1}), "y");
  return b.finish();
}

int first_marked_index(const onnx::ModelProto& m) {
  for (int i = 0; i < m.graph().node_size(); ++i) {
    if (m.graph().node(i).doc_string().rfind("ytape {", 0) == 0) return i;
  }
  FAIL("no marked node");
  throw;
}

onnx::NodeProto& first_marked(onnx::ModelProto& m) {
  return *m.mutable_graph()->mutable_node(first_marked_index(m));
}

TEST_CASE("ytape's marks are read only in ytape's models, and only when asked") {
  Tape t = gather_tape();
  onnx::ModelProto m = exported(t);
  std::string doc = first_marked(m).doc_string();
  CHECK(doc.rfind(R"(ytape {"op":"gather","attrs":{"dim":1},"args":["x","%t3"],"outs":["%t8"],)"
                  R"("nodes":5,"digest":")",
                  0) == 0);
  CHECK(doc.find(onnx_marks::group_digest(m.graph(), first_marked_index(m), 5)) !=
        std::string::npos);
  CHECK(diff_tapes(t, import_onnx(m.SerializeAsString(), "m.onnx").tape).same());
  OnnxImportOptions plain;
  plain.read_marks = false;
  CHECK(!diff_tapes(t, import_onnx(m.SerializeAsString(), "m.onnx", plain).tape).same());
  m.set_producer_name("another");
  CHECK(!diff_tapes(t, import_onnx(m.SerializeAsString(), "m.onnx").tape).same());
}

TEST_CASE("a bad mark is one error naming its node") {
  const std::pair<std::string, std::string> cases[] = {
      {"ytape {", "not a JSON object"},
      {R"(ytape {"attrs":{},"args":[],"outs":[],"nodes":1})", "no \"op\""},
      {R"(ytape {"op":"gathr","args":[],"outs":[],"nodes":1})", "no primitive is named 'gathr'"},
      {R"(ytape {"op":"gather","attrs":{"dim":"1"},"args":["x","%t3"],"outs":["y"],"nodes":1})",
       "attribute 'dim' is not of kind int"},
      {R"(ytape {"op":"gather","attrs":{"dims":1},"args":["x","%t3"],"outs":["y"],"nodes":1})",
       "gather has no attribute 'dims'"},
      {R"(ytape {"op":"gather","attrs":{"dim":1},"args":["x"],"outs":["y"],"nodes":1})",
       "gather takes 2 arguments, the mark names 1"},
      {R"(ytape {"op":"gather","attrs":{"dim":1},"args":["x","%t3"],"outs":[],"nodes":1})",
       "gather has 1 outputs, the mark names 0"},
      {R"(ytape {"op":"gather","attrs":{"dim":1},"args":["x","%t3"],"outs":["y"],"nodes":0})",
       "\"nodes\" is not a positive count"},
      {R"(ytape {"op":"gather","attrs":{"dim":1},"args":["x","%t3"],"outs":["y"],"nodes":5})",
       "no \"digest\""},
  };
  for (const auto& bound : cases) {
    const auto& doc = std::get<0>(bound);
    const auto& why = std::get<1>(bound);
    CAPTURE(doc);
    onnx::ModelProto m = exported(gather_tape());
    first_marked(m).set_doc_string(doc);
    CHECK_THROWS_WITH_AS(import_onnx(m.SerializeAsString(), "m.onnx"),
                         ("m.onnx: node 4 (Constant, opset 17): a bad ytape mark in the node's "
                          "doc_string: " +
                          why)
                             .c_str(),
                         UserError);
  }
}

// The nodes, not the mark, say what a model computes: a group another tool changed (here
// its Sub made an Add, which moves gather's indices by 2) imports as its nodes say, as if
// it had no mark; so does a mark that claims more nodes than the graph has left.
TEST_CASE("a marked group whose nodes were changed imports from its nodes") {
  Tape t = gather_tape();
  OnnxImportOptions plain;
  plain.read_marks = false;
  TensorMap inputs = complete_inputs(t, {}, 3);
  auto values = [](const Tensor& out) {
    std::span<const float> v = out.span<float>();
    return std::vector<float>(v.begin(), v.end());
  };
  auto y = [&](const onnx::ModelProto& m, const OnnxImportOptions& options) {
    return values(
        Executor(import_onnx(m.SerializeAsString(), "m.onnx", options).tape).run(inputs)[0]);
  };
  onnx::ModelProto edited = exported(t);
  onnx::NodeProto& sub = *edited.mutable_graph()->mutable_node(first_marked_index(edited) + 3);
  REQUIRE(sub.op_type() == "Sub");
  sub.set_op_type("Add");
  CHECK(y(edited, {}) == y(edited, plain));
  CHECK(y(edited, {}) != values(Executor(t).run(inputs)[0]));

  onnx::ModelProto longer = exported(t);
  std::string doc = first_marked(longer).doc_string();
  doc.replace(doc.find("\"nodes\":5"), 9, "\"nodes\":9");
  first_marked(longer).set_doc_string(doc);
  CHECK(y(longer, {}) == y(longer, plain));
}

// ONNX Runtime draws other numbers of the same distributions; the marks keep the seeds.
TEST_CASE("rand and randn export as RandomUniform and RandomNormal") {
  Builder b("draws");
  Var x = b.input("x", Type{DType::f64, {2}});
  b.output(b.rand({.dtype = DType::f32, .shape = {3, 4}, .seed = 5}), "u");
  b.output(b.add(x, b.randn({.dtype = DType::f64, .shape = {2}, .seed = 9})), "z");
  Tape t = b.finish();
  onnx::ModelProto model = exported(t);
  CHECK(op_types(model) ==
        std::vector<std::string>{"RandomUniform", "RandomNormal", "Add", "Identity", "Identity"});
  const onnx::NodeProto& u = model.graph().node(0);
  CHECK(u.attribute(0).name() == "dtype");
  CHECK(u.attribute(0).i() == onnx::TensorProto_DataType_FLOAT);
  CHECK(u.attribute(1).name() == "shape");
  CHECK(std::vector<int64_t>(u.attribute(1).ints().begin(), u.attribute(1).ints().end()) ==
        std::vector<int64_t>{4, 3});
  CHECK(u.attribute(2).name() == "seed");
  CHECK(u.attribute(2).f() == 5.0f);
  CHECK(diff_tapes(t, import_onnx(model.SerializeAsString(), "m.onnx").tape).same());
  OnnxImportOptions plain;
  plain.read_marks = false;
  Tape back = import_onnx(model.SerializeAsString(), "m.onnx", plain).tape;
  std::vector<std::string> draws;
  for (const Op& op : back.ops) {
    if (op.kind == OpKind::call && prim_info(op.prim).random())
      draws.push_back(fmt::format("{} {}", prim_name(op.prim), type_str(back.type(op.outs[0]))));
  }
  CHECK(draws == std::vector<std::string>{"rand f32[3,4]", "randn f64[2]"});
}

// The fuzzer's find: a rank-0 draw wrote `shape` as an empty list of ints, which reads back
// as no list, and ONNX's checker refused the model (an internal error of the export).
TEST_CASE("a number drawn at random exports as one element reshaped") {
  Builder b("draw");
  Var x = b.input("x", Type{DType::f32, {}});
  b.output(b.lt(b.rand({.dtype = DType::f32, .shape = {}, .seed = 7}), x), "y");
  b.output(b.randn({.dtype = DType::f64, .shape = {}, .seed = 8}), "z");
  Tape t = b.finish();
  onnx::ModelProto model = exported(t);  // passes onnx::checker
  CHECK(op_types(model)[0] == "RandomUniform");
  CHECK(op_types(model)[2] == "Reshape");
  CHECK(diff_tapes(t, import_onnx(model.SerializeAsString(), "m.onnx").tape).same());
  OnnxImportOptions plain;
  plain.read_marks = false;
  Tape back = import_onnx(model.SerializeAsString(), "m.onnx", plain).tape;
  CHECK(back.type(back.outputs[1].var) == Type{DType::f64, {}});
}

TEST_CASE("iota exports as Range reshaped and expanded, in every dtype and along any dim") {
  Builder b("t");
  Var x = b.input("x", f32({3, 4, 2}));
  b.output(b.add(x, b.iota({.dtype = DType::f32, .shape = {3, 4, 2}, .dim = 2})), "f32");
  b.output(b.iota({.dtype = DType::f64, .shape = {5}, .dim = 1}), "f64");
  b.output(b.iota({.dtype = DType::i64, .shape = {2, 3}, .dim = 1}), "i64");
  b.output(b.iota({.dtype = DType::f16, .shape = {2, 1, 3}, .dim = 3}), "f16");
  check_round_trip(b.finish());
}

TEST_CASE("export refuses what ONNX has no form for here, naming the op") {
  Builder b("t");
  Var x = b.input("x", f32({3}));
  b.print({x}, {.format = "{}"});
  b.output(x, "y");
  CHECK_THROWS_WITH_AS(export_onnx(b.finish()), "op 2 (print): print has no ONNX form here",
                       UnsupportedError);
}

TEST_CASE("corner cases found by fuzzing: outputs named as inputs, a scalar's perm") {
  // An output named as its own input is that input; as another input, an error (both made
  // graphs that named a value twice, which the checker refused).
  Builder b("t");
  Var x = b.input("x", f32({2})), y = b.input("y", f32({2})), s = b.input("s", f32({}));
  b.output(x, "x");
  b.output(b.add(x, y), "sum");
  // A scalar's permutedims (Transpose wants a perm).
  b.output(b.call1(Prim::permutedims, {s}, AttrsOf<Prim::permutedims>{.perm = {}}.to_attrs()),
           "s2");
  check_round_trip(b.finish());
  Builder c("t");
  Var u = c.input("u", f32({2}));
  c.input("v", f32({2}));
  c.output(u, "v");
  CHECK_THROWS_WITH_AS(export_onnx(c.finish()),
                       "output 'v' has the name of input %2: ONNX names each value once, so "
                       "rename the output or the input",
                       UserError);
}

TEST_CASE("a while_loop exports as Loop, marked with it, and imports back as itself") {
  Tape t = testing::newton(100);
  std::string model = export_onnx(t);
  TapeDiff diff = diff_tapes(t, import_onnx(model, "newton.onnx").tape);
  CHECK(diff.same());
  OnnxImportOptions plain;  // the Loop node: its counter and condition are two more carries
  plain.read_marks = false;
  OnnxImport back = import_onnx(model, "newton.onnx", plain);
  CHECK(!diff_tapes(t, back.tape).same());
  TensorMap inputs{{"a", testing_scalar(2.0)}, {"x0", testing_scalar(1e9)}};
  CHECK(run(back, inputs)[0].data<double>()[0] == Executor(t).run(inputs)[0].data<double>()[0]);
  check_round_trip(testing::branchy());  // a cond as If, imported back by If's own rule
}

}  // namespace ytape::onnx_test
