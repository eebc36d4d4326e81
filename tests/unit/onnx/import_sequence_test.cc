// Sequences and optionals, expanded at import (onnx/rules/sequence.cc, onnx/graph_io.cc):
// a sequence input of length N is N tape inputs, a sequence output N tape outputs, and the
// sequence ops are list work at import or tape ops on the tensors; and what is refused.
#include <doctest/doctest.h>

#include "model.h"
#include "onnx/import.h"

namespace ytape::onnx_test {

namespace {

// A graph input `name` of ONNX type sequence(tensor(float, shape)), or optional(tensor)
// where `optional`.
void structured_input(Model& m, const std::string& name, std::vector<int64_t> shape,
                      bool optional = false) {
  onnx::ValueInfoProto* v = m.g().add_input();
  v->set_name(name);
  onnx::TypeProto* t = v->mutable_type();
  t = optional ? t->mutable_optional_type()->mutable_elem_type()
               : t->mutable_sequence_type()->mutable_elem_type();
  t->mutable_tensor_type()->set_elem_type(onnx::TensorProto_DataType_FLOAT);
  for (int64_t d : shape) t->mutable_tensor_type()->mutable_shape()->add_dim()->set_dim_value(d);
}

// s: a sequence of (2)-tensors. last = s[-1]; len = its length; cat = its concatenation;
// parts = cat split into pieces of 3 (the last shorter); both = cat stacked on a new axis 0.
Model sequence_model() {
  Model m;
  structured_input(m, "s", {2});
  m.ints_initializer("minus_one", {}, {-1});
  m.ints_initializer("three", {}, {3});
  m.node("SequenceAt", {"s", "minus_one"}, {"last"}, "at");
  m.node("SequenceLength", {"s"}, {"len"}, "length");
  set_int(m.node("ConcatFromSequence", {"s"}, {"cat"}, "cat"), "axis", 0);
  m.node("SplitToSequence", {"cat", "three"}, {"parts"}, "split");
  onnx::NodeProto& stack = m.node("ConcatFromSequence", {"s"}, {"both"}, "stack");
  set_int(stack, "axis", 0);
  set_int(stack, "new_axis", 1);
  for (const char* out : {"last", "len", "cat", "parts", "both"}) m.output(out);
  return m;
}

OnnxImportOptions length(const std::string& name, int64_t n, bool present = true) {
  OnnxImportOptions options;
  options.sequences[name] = {.present = present, .length = n, .shapes = {}};
  return options;
}

std::string import_error(const Model& m, const OnnxImportOptions& options) {
  try {
    m.import(options);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("a sequence input of length N is N tape inputs, a sequence output N outputs") {
  OnnxImport imported = sequence_model().import(length("s", 3));
  std::vector<std::string> inputs, outputs;
  for (const Op& op : imported.tape.ops)
    if (op.kind == OpKind::input) inputs.push_back(op.name);
  for (const Output& o : imported.tape.outputs) outputs.push_back(o.name);
  CHECK(inputs == std::vector<std::string>{"s[1]", "s[2]", "s[3]"});
  CHECK(outputs == std::vector<std::string>{"last", "len", "cat", "parts[1]", "parts[2]", "both"});
  std::vector<Tensor> out = run(imported, {{"s[1]", onnx_tensor({2}, {1, 2})},
                                           {"s[2]", onnx_tensor({2}, {3, 4})},
                                           {"s[3]", onnx_tensor({2}, {5, 6})}});
  CHECK(values(out[0]) == std::vector<float>{5, 6});
  CHECK(int_values(out[1]) == std::vector<int64_t>{3});
  CHECK(values(out[2]) == std::vector<float>{1, 2, 3, 4, 5, 6});
  CHECK(values(out[3]) == std::vector<float>{1, 2, 3});
  CHECK(values(out[4]) == std::vector<float>{4, 5, 6});
  CHECK(out[5].shape() == Shape{2, 3});  // ONNX's (3, 2)
  CHECK(values(out[5]) == std::vector<float>{1, 2, 3, 4, 5, 6});
}

TEST_CASE("SplitToSequence, SequenceInsert, SequenceErase and SequenceMap on the tensors") {
  Model m(17);  // SequenceMap's first
  m.input("x", {3, 2});
  m.input("b", {2});
  m.ints_initializer("zero", {}, {0});
  // x's rows, squeezed; b inserted first, the last row erased; each plus b.
  set_int(m.node("SplitToSequence", {"x"}, {"rows"}, "rows"), "keepdims", 0);
  m.node("SequenceInsert", {"rows", "b", "zero"}, {"more"}, "insert");
  m.node("SequenceErase", {"more"}, {"fewer"}, "erase");
  onnx::NodeProto& map = m.node("SequenceMap", {"fewer", "b"}, {"sums"}, "map");
  auto* body = map.add_attribute();
  body->set_name("body");
  body->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  onnx::GraphProto& g = *body->mutable_g();
  g.add_input()->set_name("row");
  g.add_input()->set_name("bias");
  onnx::NodeProto* add = g.add_node();
  add->set_op_type("Add");
  add->add_input("row");
  add->add_input("bias");
  add->add_output("sum");
  g.add_output()->set_name("sum");
  m.output("sums");
  OnnxImport imported = m.import();
  std::vector<Tensor> out = run(imported, {{"x", onnx_tensor({3, 2}, {1, 2, 3, 4, 5, 6})},
                                           {"b", onnx_tensor({2}, {10, 20})}});
  REQUIRE(out.size() == 3);  // b + b, row 1 + b, row 2 + b
  CHECK(imported.tape.outputs[2].name == "sums[3]");
  CHECK(values(out[0]) == std::vector<float>{20, 40});
  CHECK(values(out[1]) == std::vector<float>{11, 22});
  CHECK(values(out[2]) == std::vector<float>{13, 24});
}

TEST_CASE("a sequence input without a length, or with a wrong one, is one error naming it") {
  Model m = sequence_model();
  CHECK(import_error(m, {}) ==
        "m.onnx: input 's': a sequence, whose length the model leaves open; a tape's structure "
        "is static: give it (ytape import --length s=N)");
  CHECK(import_error(m, length("s", -1)) ==
        "m.onnx: input 's': a length of -1; give one from 0 to 4096");
  CHECK(import_error(m, length("s", 2, false)) ==
        "m.onnx: input 's': a sequence is never none: give its length");
  CHECK(import_error(m, length("x", 2)) ==
        "m.onnx: --length x: the model has no sequence or optional input of that name");
  OnnxImportOptions shapes = length("s", 2);
  shapes.sequences["s"].shapes = {{2}};
  CHECK(import_error(m, shapes) == "m.onnx: input 's': 1 shapes given for 2 tensors");
  shapes.sequences["s"].shapes.push_back({3});
  CHECK(import_error(m, shapes) ==
        "m.onnx: input 's': tensor 2 is given the shape [3], which the model's does not allow");
  CHECK(import_error(m, length("s", 0)) ==
        "m.onnx: node 1 'at' (SequenceAt, opset 13): position -1 is out of range for a "
        "sequence of 0 tensors");
}

TEST_CASE("a position that is not known at import is refused, naming the node") {
  Model m;
  structured_input(m, "s", {2});
  m.input("i", {}, onnx::TensorProto_DataType_INT64);
  m.node("SequenceAt", {"s", "i"}, {"y"}, "pick");
  m.output("y");
  CHECK(import_error(m, length("s", 2)) ==
        "m.onnx: node 1 'pick' (SequenceAt, opset 13): input 2 'i' must be static: a constant "
        "or initializer, or computed from them");
  m.ints_initializer("i", {}, {2});
  m.g().mutable_input()->RemoveLast();
  CHECK(import_error(m, length("s", 2)) ==
        "m.onnx: node 1 'pick' (SequenceAt, opset 13): position 2 is out of range for a "
        "sequence of 2 tensors");
}

TEST_CASE("an optional input is one tensor input or none; its ops fold to constants") {
  Model m(15);
  structured_input(m, "o", {2}, true);
  m.node("OptionalHasElement", {"o"}, {"has"}, "has");
  m.node("Identity", {"o"}, {"same"}, "same");
  m.output("has");
  m.output("same");
  OnnxImport some = m.import(length("o", 1));
  std::vector<Tensor> out = run(some, {{"o", onnx_tensor({2}, {1, 2})}});
  REQUIRE(out.size() == 2);
  CHECK(out[0].data<bool>()[0]);
  CHECK(values(out[1]) == std::vector<float>{1, 2});
  OnnxImport none = m.import(length("o", 0, false));
  CHECK(none.tape.outputs.size() == 1);  // `same` is none: no output
  CHECK(!run(none, {})[0].data<bool>()[0]);
  CHECK(import_error(m, {}) ==
        "m.onnx: input 'o': an optional, whose presence the model leaves open; a tape's "
        "structure is static: give it (ytape import --length o=none, or =1 when it holds a "
        "value)");
  CHECK(import_error(m, length("o", 2)) ==
        "m.onnx: input 'o': an optional tensor holds 1 tensor, not 2");
  m.node("OptionalGetElement", {"o"}, {"got"}, "get");
  m.node("Optional", {"got"}, {"again"}, "wrap");  // an optional again, of a tensor
  m.output("again");
  CHECK(values(run(m.import(length("o", 1)), {{"o", onnx_tensor({2}, {1, 2})}})[2]) ==
        std::vector<float>{1, 2});
  CHECK(import_error(m, length("o", 0, false)) ==
        "m.onnx: node 3 'get' (OptionalGetElement, opset 15): input 1 'o' is an optional that "
        "is none, with no element");
}

}  // namespace ytape::onnx_test
