// The state of one export, and the rule of each primitive: a primitive becomes one or a few
// ONNX nodes over the names of its arguments.
#pragma once

#include <onnx/onnx_pb.h>

#include <string>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape::onnx_export {

/// A TensorProto holding `t` (its shape reversed, the same bytes), named `name`.
onnx::TensorProto tensor_proto(const Tensor& t, const std::string& name);

class Exporter {
 public:
  Exporter(const Tape& t, onnx::GraphProto& g) : tape_(t), g_(g), names_(t.types.size()) {}

  onnx::GraphProto& graph() { return g_; }
  const Type& type(Var v) const { return tape_.type(v); }
  /// The ONNX name of `v`: set for inputs, "%N" (as `ytape show` numbers it) otherwise.
  const std::string& name(Var v);
  void name(Var v, std::string n) { names_[v.id] = std::move(n); }
  /// A new name for an intermediate value.
  std::string fresh();

  /// Appends a node of `op_type` on `inputs` with one output `out` (fresh if empty).
  onnx::NodeProto& node(const std::string& op_type, std::vector<std::string> inputs,
                        std::string out = "");
  /// A Constant node holding `t`; returns its name.
  std::string constant(const Tensor& t);
  std::string ints(const std::vector<int64_t>& v);
  std::string scalar(DType dtype, double v);

  /// Appends the nodes of `op` and names its outputs.
  void export_op(const Op& op);

 private:
  const Tape& tape_;
  onnx::GraphProto& g_;
  std::vector<std::string> names_;
  int fresh_ = 0;
};

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v);

}  // namespace ytape::onnx_export
