// Small ONNX models built in the tests with ONNX's protobuf classes, and running their
// imported tapes.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "onnx/import.h"
#include "runtime/executor.h"

namespace ytape::onnx_test {

/// A graph under construction: inputs, initializers and nodes, in ONNX's row-major terms.
struct Model {
  explicit Model(int opset = 13) {
    model.set_ir_version(8);
    auto* o = model.add_opset_import();
    o->set_domain("");
    o->set_version(opset);
    model.mutable_graph()->set_name("g");
  }
  onnx::GraphProto& g() { return *model.mutable_graph(); }

  void input(const std::string& name, std::vector<int64_t> shape,
             int32_t type = onnx::TensorProto_DataType_FLOAT) {
    value(g().add_input(), name, shape, type);
  }
  /// An output, of ONNX element type `type` when given (0: left undeclared).
  void output(const std::string& name, int32_t type = 0) {
    onnx::ValueInfoProto* v = g().add_output();
    v->set_name(name);
    if (type != 0) v->mutable_type()->mutable_tensor_type()->set_elem_type(type);
  }
  /// A float initializer, row-major.
  void initializer(const std::string& name, std::vector<int64_t> shape, std::vector<float> v) {
    onnx::TensorProto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_FLOAT);
    for (int64_t d : shape) t->add_dims(d);
    for (float x : v) t->add_float_data(x);
  }
  void ints_initializer(const std::string& name, std::vector<int64_t> v) {
    ints_initializer(name, {static_cast<int64_t>(v.size())}, v);
  }
  /// An int64 initializer of any shape, row-major.
  void ints_initializer(const std::string& name, std::vector<int64_t> shape,
                        std::vector<int64_t> v) {
    onnx::TensorProto* t = g().add_initializer();
    t->set_name(name);
    t->set_data_type(onnx::TensorProto_DataType_INT64);
    for (int64_t d : shape) t->add_dims(d);
    for (int64_t x : v) t->add_int64_data(x);
  }
  onnx::NodeProto& node(const std::string& op, std::vector<std::string> ins,
                        std::vector<std::string> outs, const std::string& name = "") {
    onnx::NodeProto* n = g().add_node();
    n->set_op_type(op);
    n->set_name(name);
    for (auto& i : ins) n->add_input(i);
    for (auto& o : outs) n->add_output(o);
    return *n;
  }
  std::string bytes() const { return model.SerializeAsString(); }
  OnnxImport import(const OnnxImportOptions& options = {}) const {
    return import_onnx(bytes(), "m.onnx", options);
  }

  onnx::ModelProto model;

 private:
  static void value(onnx::ValueInfoProto* v, const std::string& name,
                    const std::vector<int64_t>& shape, int32_t type) {
    v->set_name(name);
    auto* t = v->mutable_type()->mutable_tensor_type();
    t->set_elem_type(type);
    for (int64_t d : shape) t->mutable_shape()->add_dim()->set_dim_value(d);
  }
};

inline void set_ints(onnx::NodeProto& n, const std::string& name, std::vector<int64_t> v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}
inline void set_int(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}
inline void set_float(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(v);
}
inline void set_string(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s(v);
}

/// A float tensor of the ONNX (row-major) shape `onnx_shape` holding `v` in memory order:
/// the tape's tensor of the reversed shape.
inline Tensor onnx_tensor(std::vector<int64_t> onnx_shape, const std::vector<float>& v) {
  Tensor t(Type{DType::f32, Shape(onnx_shape.rbegin(), onnx_shape.rend())});
  std::copy(v.begin(), v.end(), t.data<float>());
  return t;
}

/// Runs the imported tape on `inputs` (its weights added) and returns its outputs.
inline std::vector<Tensor> run(const OnnxImport& m, TensorMap inputs) {
  for (const auto& w : m.weights) inputs.push_back(w);
  Executor e(m.tape);
  return e.run(inputs);
}

/// The message of the UserError that importing `m` throws, or "no error".
inline std::string import_error(const Model& m) {
  try {
    m.import();
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

/// An i64 tensor of the ONNX shape `onnx_shape` holding `v` in memory order.
inline Tensor onnx_ints(std::vector<int64_t> onnx_shape, const std::vector<int64_t>& v) {
  Tensor t(Type{DType::i64, Shape(onnx_shape.rbegin(), onnx_shape.rend())});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return t;
}

inline std::vector<int64_t> int_values(const Tensor& t) {
  std::span<const int64_t> s = t.span<const int64_t>();
  return {s.begin(), s.end()};
}

inline std::vector<float> values(const Tensor& t) {
  std::span<const float> s = t.span<const float>();
  return {s.begin(), s.end()};
}

/// The ops of `t` (not of its regions) that call `p`.
inline size_t count_prim(const Tape& t, Prim p) {
  size_t n = 0;
  for (const Op& op : t.ops) n += op.kind == OpKind::call && op.prim == p;
  return n;
}

}  // namespace ytape::onnx_test
