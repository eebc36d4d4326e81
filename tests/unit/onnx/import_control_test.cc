// Control flow at import (onnx/rules/control.cc, control_regions.cc): If with a known
// condition and Loop with a known trip count and condition unrolled; If, Loop and Scan (and
// Scan-8's batches) of run-time structure as region ops; and what is refused.
#include <doctest/doctest.h>

#include <tuple>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

onnx::NodeProto& add(onnx::GraphProto& g, const std::string& op, std::vector<std::string> ins,
                     std::vector<std::string> outs) {
  onnx::NodeProto* n = g.add_node();
  n->set_op_type(op);
  for (auto& i : ins) n->add_input(i);
  for (auto& o : outs) n->add_output(o);
  return *n;
}

// The graph attribute `name` of `n`, to fill.
onnx::GraphProto& graph(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  a->mutable_g()->set_name(name);
  return *a->mutable_g();
}

int count_ops(const Tape& t, Prim p) {
  int n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == p;
  return n;
}

void names(google::protobuf::RepeatedPtrField<onnx::ValueInfoProto>* values,
           std::vector<std::string> of) {
  for (auto& name : of) values->Add()->set_name(name);
}

void bool_initializer(Model& m, const std::string& name, bool v) {
  onnx::TensorProto* t = m.g().add_initializer();
  t->set_name(name);
  t->set_data_type(onnx::TensorProto_DataType_BOOL);
  t->add_int32_data(v);
}

// If(cond) then x + x else x * 3.
Model if_model(bool constant_condition, bool cond) {
  Model m;
  m.input("x", {2});
  if (constant_condition) {
    bool_initializer(m, "c", cond);
  } else {
    m.input("c", {}, onnx::TensorProto_DataType_BOOL);
  }
  onnx::NodeProto& n = m.node("If", {"c"}, {"y"}, "choose");
  onnx::GraphProto& then_branch = graph(n, "then_branch");
  add(then_branch, "Add", {"x", "x"}, {"t"});
  names(then_branch.mutable_output(), {"t"});
  onnx::GraphProto& else_branch = graph(n, "else_branch");
  m.initializer("three", {}, {3});
  add(else_branch, "Mul", {"x", "three"}, {"e"});
  names(else_branch.mutable_output(), {"e"});
  m.output("y");
  return m;
}

// Loop(M, cond, acc): acc += float(i) for i = 0 .. M - 1, each step's acc scanned.
Model loop_model(int64_t trips) {
  Model m;
  m.input("acc", {2});
  m.ints_initializer("M", {}, {trips});
  onnx::NodeProto& n = m.node("Loop", {"M", "", "acc"}, {"final", "steps"}, "sum");
  onnx::GraphProto& body = graph(n, "body");
  names(body.mutable_input(), {"i", "go", "acc_in"});
  set_int(add(body, "Cast", {"i"}, {"fi"}), "to", onnx::TensorProto_DataType_FLOAT);
  add(body, "Add", {"acc_in", "fi"}, {"acc_out"});
  add(body, "Identity", {"go"}, {"go_out"});
  add(body, "Identity", {"acc_out"}, {"scan"});
  names(body.mutable_output(), {"go_out", "acc_out", "scan"});
  m.output("final");
  m.output("steps");
  return m;
}

}  // namespace

TEST_CASE("If with a known condition imports the branch it takes") {
  for (bool cond : {true, false}) {
    std::vector<Tensor> y = run(if_model(true, cond).import(), {{"x", onnx_tensor({2}, {1, 2})}});
    CHECK(values(y[0]) == (cond ? std::vector<float>{2, 4} : std::vector<float>{3, 6}));
  }
  // A condition given as an input: a cond of both branches, which runs either side.
  Model dynamic = if_model(false, true);
  OnnxImport both = dynamic.import();
  int conds = 0;
  for (const Op& op : both.tape.ops) conds += op.kind == OpKind::call && op.prim == Prim::cond;
  CHECK(conds == 1);
  for (bool cond : {true, false}) {
    Tensor c(Type{DType::boolean, {}});
    c.data<bool>()[0] = cond;
    std::vector<Tensor> y = run(both, {{"x", onnx_tensor({2}, {1, 2})}, {"c", c}});
    CHECK(values(y[0]) == (cond ? std::vector<float>{2, 4} : std::vector<float>{3, 6}));
  }
  // Bound to a value, it imports the branch it takes, as a constant condition does.
  OnnxImportOptions bound;
  Tensor no(Type{DType::boolean, {}});
  no.data<bool>()[0] = false;
  bound.constant_inputs.emplace_back("c", no);
  std::vector<Tensor> y = run(dynamic.import(bound), {{"x", onnx_tensor({2}, {1, 2})}});
  CHECK(values(y[0]) == std::vector<float>{3, 6});
}

// The number of `p` ops at the top of `t`.
int count(const Tape& t, Prim p) {
  int n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == p;
  return n;
}

// loop_model's body with its condition computed from the iteration number (i < 10^6, true
// for every iteration here, but known only per iteration): unrolled, as the iteration
// number is a constant in each copy.
Model counted_loop(int64_t trips) {
  Model m = loop_model(trips);
  onnx::GraphProto& body = *m.g().mutable_node(0)->mutable_attribute(0)->mutable_g();
  m.ints_initializer("bound", {}, {1000000});
  body.mutable_node(2)->set_op_type("Less");  // go_out = i < bound
  body.mutable_node(2)->set_input(0, "i");
  body.mutable_node(2)->add_input("bound");
  return m;
}

TEST_CASE("Loop with a known trip count and a condition that stays true is a scan") {
  for (int64_t trips : {3, 5000}) {
    OnnxImport imported = loop_model(trips).import();
    CHECK(count(imported.tape, Prim::scan) == 1);
    if (trips != 3) continue;
    std::vector<Tensor> out = run(imported, {{"acc", onnx_tensor({2}, {10, 20})}});
    CHECK(values(out[0]) == std::vector<float>{13, 23});  // + 0 + 1 + 2
    CHECK(out[1].shape() == Shape{2, 3});                 // ONNX's (3, 2)
    CHECK(values(out[1]) == std::vector<float>{10, 20, 11, 21, 13, 23});
  }
}

TEST_CASE(
    "Loop whose condition is known per iteration unrolls, carrying values and stacking scans") {
  OnnxImport imported = counted_loop(3).import();
  CHECK(count(imported.tape, Prim::scan) == 0);
  std::vector<Tensor> out = run(imported, {{"acc", onnx_tensor({2}, {10, 20})}});
  CHECK(values(out[0]) == std::vector<float>{13, 23});  // + 0 + 1 + 2
  CHECK(values(out[1]) == std::vector<float>{10, 20, 11, 21, 13, 23});
  CHECK(import_error(counted_loop(5000)) ==
        "m.onnx: node 1 'sum' (Loop, opset 13): a Loop unrolled beyond 4096 iterations in all is "
        "not supported");
}

TEST_CASE("a Constant of a Loop's body is one constant of the tape, not one per iteration") {
  Model m = counted_loop(20);
  onnx::GraphProto& body = *m.g().mutable_node(0)->mutable_attribute(0)->mutable_g();
  onnx::NodeProto& k = add(body, "Constant", {}, {"k"});
  auto* a = k.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  a->mutable_t()->set_data_type(onnx::TensorProto_DataType_FLOAT);
  a->mutable_t()->add_dims(2);
  for (float v : {0.5f, 0.25f}) a->mutable_t()->add_float_data(v);
  add(body, "Add", {"acc_out", "k"}, {"acc_k"});
  body.mutable_output(1)->set_name("acc_k");
  OnnxImport imported = m.import();
  int64_t ks = 0;
  for (const Op& op : imported.tape.ops)
    ks += op.kind == OpKind::constant && imported.tape.type(op.outs[0]) == Type{DType::f32, {2}};
  CHECK(ks == 1);
  std::vector<Tensor> out = run(imported, {{"acc", onnx_tensor({2}, {0, 0})}});
  CHECK(values(out[0]) == std::vector<float>{190 + 10, 190 + 5});  // + sum of i, + 20 k
}

TEST_CASE("a Loop's unrolled body is bounded in ops, however few its iterations") {
  Model m = counted_loop(4000);  // under the 4096 iterations; 300 ops a body pass 2^20 in all
  onnx::GraphProto& body = *m.g().mutable_node(0)->mutable_attribute(0)->mutable_g();
  std::string last = "acc_out";
  for (int i = 0; i < 300; ++i) {
    std::string next = "n" + std::to_string(i);
    add(body, "Neg", {last}, {next});
    last = next;
  }
  body.mutable_output(1)->set_name(last);
  CHECK(import_error(m) ==
        "m.onnx: node 1 'sum' (Loop, opset 13): body node 288 (Neg): a tape of more than 1048576 "
        "ops (the bodies of Loop and Scan, unrolled, count once per iteration) is not supported");
}

TEST_CASE("a Loop whose condition depends on the values is refused, naming the node") {
  Model m = loop_model(3);
  onnx::GraphProto& body = *m.g().mutable_node(0)->mutable_attribute(0)->mutable_g();
  body.mutable_node(2)->set_op_type("Greater");  // go_out = acc_out > i: data-dependent
  body.mutable_node(2)->set_input(0, "acc_out");
  body.mutable_node(2)->add_input("fi");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'sum' (Loop, opset 13): a Loop whose condition is not known at import "
        "(it depends on the values) is not supported");
}

TEST_CASE("a Loop whose trip count or condition is known only at run time is a while_loop") {
  // acc doubles while its sum is below the input `limit`, at most M times (an input too).
  Model m;
  m.input("acc", {2});
  m.input("limit", {});
  m.input("M", {}, onnx::TensorProto_DataType_INT64);
  onnx::NodeProto& n = m.node("Loop", {"M", "", "acc"}, {"final"}, "double");
  onnx::GraphProto& body = graph(n, "body");
  names(body.mutable_input(), {"i", "go", "acc_in"});
  m.initializer("two", {}, {2});
  add(body, "Mul", {"acc_in", "two"}, {"acc_out"});
  set_int(add(body, "ReduceSum", {"acc_out"}, {"total"}), "keepdims", 0);
  add(body, "Less", {"total", "limit"}, {"go_out"});
  names(body.mutable_output(), {"go_out", "acc_out"});
  m.output("final");
  OnnxImport imported = m.import();
  CHECK(count_ops(imported.tape, Prim::while_loop) == 1);
  Tensor trips(Type{DType::i64, {}});
  for (const auto& bound :
       {std::tuple{100.0f, 50, 128.0f}, {100.0f, 3, 16.0f}, {1000.0f, 50, 1024.0f}}) {
    const auto& limit = std::get<0>(bound);
    const auto& most = std::get<1>(bound);
    const auto& want = std::get<2>(bound);
    CAPTURE(limit);
    trips.data<int64_t>()[0] = most;
    std::vector<Tensor> out =
        run(imported,
            {{"acc", onnx_tensor({2}, {1, 1})}, {"limit", onnx_tensor({}, {limit})}, {"M", trips}});
    CHECK(values(out[0]) == std::vector<float>{want / 2, want / 2});
  }
}

TEST_CASE("Scan slices its inputs along their axes, in either direction, as one scan op") {
  Model m;
  m.input("init", {2});
  m.input("x", {2, 3});  // scanned along ONNX axis 1, from the end
  onnx::NodeProto& n = m.node("Scan", {"init", "x"}, {"sum", "partial"});
  set_int(n, "num_scan_inputs", 1);
  set_ints(n, "scan_input_axes", {1});
  set_ints(n, "scan_input_directions", {1});
  set_ints(n, "scan_output_axes", {1});
  onnx::GraphProto& body = graph(n, "body");
  names(body.mutable_input(), {"s_in", "column"});
  add(body, "Add", {"s_in", "column"}, {"s_out"});
  add(body, "Identity", {"s_out"}, {"p"});
  names(body.mutable_output(), {"s_out", "p"});
  m.output("sum");
  m.output("partial");
  // The input read from the end, the output written from the start: a scan of one
  // direction, the input reversed.
  OnnxImport imported = m.import();
  CHECK(count_ops(imported.tape, Prim::scan) == 1);
  const TensorMap inputs{{"init", onnx_tensor({2}, {0, 0})},
                         {"x", onnx_tensor({2, 3}, {1, 2, 3, 4, 5, 6})}};
  std::vector<Tensor> out = run(imported, inputs);
  CHECK(values(out[0]) == std::vector<float>{6, 15});
  CHECK(out[1].shape() == Shape{3, 2});  // ONNX's (2, 3): the steps along axis 1
  CHECK(values(out[1]) == std::vector<float>{3, 5, 6, 6, 11, 15});
  // Both read from the end: the last iteration's output first.
  set_ints(n, "scan_output_directions", {1});
  out = run(m.import(), inputs);
  CHECK(values(out[1]) == std::vector<float>{6, 5, 3, 15, 11, 6});
  n.clear_attribute();
  set_int(n, "num_scan_inputs", 1);
  CHECK(import_error(m) == "m.onnx: node 1 (Scan, opset 13): the graph attribute body is missing");
}

TEST_CASE("Scan-8 is a scan over the batch whose body scans each element's sequence") {
  Model m(8);
  m.input("init", {2, 1});  // a state per batch element
  m.input("x", {2, 3, 1});  // (batch, sequence, 1)
  onnx::NodeProto& n = m.node("Scan", {"", "init", "x"}, {"sum", "partial"}, "scan");
  set_int(n, "num_scan_inputs", 1);
  set_ints(n, "directions", {1});
  onnx::GraphProto& body = graph(n, "body");
  names(body.mutable_input(), {"s_in", "step"});
  add(body, "Add", {"s_in", "step"}, {"s_out"});
  add(body, "Identity", {"s_out"}, {"p"});
  names(body.mutable_output(), {"s_out", "p"});
  m.output("sum");
  m.output("partial");
  OnnxImport imported = m.import();
  REQUIRE(count_ops(imported.tape, Prim::scan) == 1);
  for (const Op& op : imported.tape.ops) {
    if (op.kind == OpKind::call && op.prim == Prim::scan)
      CHECK(count_ops(op.regions[0], Prim::scan) == 1);
  }
  std::vector<Tensor> out = run(imported, {{"init", onnx_tensor({2, 1}, {0, 100})},
                                           {"x", onnx_tensor({2, 3, 1}, {1, 2, 3, 4, 5, 6})}});
  CHECK(values(out[0]) == std::vector<float>{6, 115});
  CHECK(out[1].shape() == Shape{1, 3, 2});  // ONNX's (2, 3, 1)
  CHECK(values(out[1]) == std::vector<float>{3, 5, 6, 106, 111, 115});
  m.ints_initializer("lens", {2, 3});
  n.set_input(0, "lens");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'scan' (Scan, opset 8): a Scan-8 over sequences shorter than the scan "
        "inputs is not supported");
}

TEST_CASE("an error inside a branch names the node, the branch and the node in it") {
  Model m = if_model(true, true);
  m.g().mutable_node(0)->mutable_attribute(0)->mutable_g()->mutable_node(0)->set_op_type("Ad");
  CHECK(import_error(m) ==
        "m.onnx: node 1 'choose' (If, opset 13): then_branch node 1 (Ad): ONNX has no op type Ad "
        "at opset 13; did you mean 'Add'?");
}

}  // namespace ytape::onnx_test
