#include "onnx/export.h"

#include <onnx/checker.h>
#include <onnx/onnx_pb.h>

#include <algorithm>
#include <unordered_map>

#include "onnx/export_rules.h"
#include "onnx/import.h"
#include "onnx/proto.h"

namespace ytape {

namespace {

using namespace onnx_export;

constexpr int kExportOpset = 17;

void add_inputs(const Tape& t, const TensorMap& weights, Exporter& ex) {
  for (size_t i = 0, n = t.num_inputs(); i < n; ++i) {
    const Op& op = t.ops[i];
    ex.name(op.outs[0], op.name);
    auto w = std::find_if(weights.begin(), weights.end(),
                          [&](const auto& p) { return p.first == op.name; });
    if (w == weights.end()) {
      declare(ex.graph().add_input(), op.name, t.type(op.outs[0]));
      continue;
    }
    if (w->second.type() != t.type(op.outs[0])) {
      user_error("weight '{}' is {}, the input {}", op.name, type_str(w->second.type()),
                 type_str(t.type(op.outs[0])));
    }
    *ex.graph().add_initializer() = tensor_proto(w->second, op.name);
  }
}

// The graph's outputs, by name: an Identity of the value, or the graph input itself when
// the output is that input under its own name. ONNX names each value once, so an output
// may not take the name of another input.
void add_outputs(const Tape& t, Exporter& ex, onnx::GraphProto& g) {
  std::unordered_map<std::string, uint32_t> inputs;
  for (size_t i = 0, n = t.num_inputs(); i < n; ++i)
    inputs.emplace(t.ops[i].name, t.ops[i].outs[0].id);
  for (const Output& out : t.outputs) {
    auto in = inputs.find(out.name);
    if (in == inputs.end()) {
      ex.node("Identity", {ex.name(out.var)}, out.name);
    } else if (in->second != out.var.id) {
      user_error(
          "output '{}' has the name of input %{}: ONNX names each value once, so "
          "rename the output or the input",
          out.name, in->second + 1);
    }
    declare(g.add_output(), out.name, t.type(out.var));
  }
}

}  // namespace

std::string export_onnx(const Tape& tape, const TensorMap& weights) {
  const Tape& t = tape;
  onnx::ModelProto model;
  model.set_ir_version(8);
  model.set_producer_name("ytape");
  auto* opset = model.add_opset_import();
  opset->set_domain("");
  opset->set_version(kExportOpset);
  onnx::GraphProto& g = *model.mutable_graph();
  g.set_name(t.name.empty() ? "tape" : t.name);
  Exporter ex(t, g);
  add_inputs(t, weights, ex);
  for (size_t i = t.num_inputs(); i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    try {
      ex.export_op(op);
    } catch (const UnsupportedError& e) {
      std::string loc = t.loc_str(op.loc);
      throw UnsupportedError(fmt::format("op {} ({}{}): {}", i + 1,
                                         op.kind == OpKind::call ? prim_name(op.prim) : "const",
                                         loc.empty() ? "" : ", " + loc, e.what()));
    }
  }
  add_outputs(t, ex, g);
  try {
    onnx::checker::check_model(model);
  } catch (const std::exception& e) {
    internal_error("the exported model fails ONNX's checker: {}", e.what());
  }
  return model.SerializeAsString();
}

}  // namespace ytape
