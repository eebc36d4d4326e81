// Export rules of the control family. A cond on a bool exports as ONNX If, its branches as
// the If's subgraphs; a while_loop as ONNX Loop, its body and its condition (run once on the
// initial carries before the Loop, and after the body in it) as the Loop's body. A region's
// parameters are named as the values the op gives it, which ONNX's subgraphs read from the
// graph around them; its own values get names of their own (Exporter's prefix). A scan
// exports as ONNX Scan, its body as the Scan's.
#include <fmt/format.h>

#include "onnx/export_rules.h"
#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_export {

namespace {

// The ops of region `r` appended to `g`, its parameters named `given`; returns the names of
// what it yields.
std::vector<std::string> inline_region(const Tape& r, onnx::GraphProto& g,
                                       const std::vector<std::string>& given,
                                       const std::string& prefix) {
  Exporter sub(r, g, prefix);
  for (size_t i = 0; i < given.size(); ++i) sub.name(r.ops[i].outs[0], given[i]);
  for (size_t i = r.num_inputs(); i < r.ops.size(); ++i) sub.export_op(r.ops[i]);
  std::vector<std::string> out;
  for (const Output& o : r.outputs) out.push_back(sub.name(o.var));
  return out;
}

// Declares `values` (of types `types`) as the outputs of `g`, each through an Identity to
// a name of its own (`prefix`out1, ...): a graph's outputs are values it defines.
void yield(onnx::GraphProto& g, const std::vector<std::string>& values,
           const std::vector<Type>& types, const std::string& prefix) {
  for (size_t j = 0; j < values.size(); ++j) {
    std::string out = fmt::format("{}out{}", prefix, j + 1);
    onnx::NodeProto* n = g.add_node();
    n->set_op_type("Identity");
    n->add_input(values[j]);
    n->add_output(out);
    declare(g.add_output(), out, types[j]);
  }
}

onnx::GraphProto& graph_attr(onnx::NodeProto& n, const std::string& name) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_GRAPH);
  a->mutable_g()->set_name(name);
  return *a->mutable_g();
}

void cond(Exporter& ex, const Op& op) {
  if (ex.type(op.args[0]).dtype != DType::boolean)
    refuse("a cond on an i64 selector has no ONNX form here (If takes a bool)");
  std::vector<std::string> given;
  for (size_t i = 1; i < op.args.size(); ++i) given.push_back(in(ex, op, i));
  onnx::NodeProto& n = ex.node("If", {in(ex, op, 0)});
  n.clear_output();
  std::string base = ex.name(op.outs[0]) + ".";
  for (size_t k = 0; k < op.regions.size(); ++k) {
    const Tape& r = op.regions[k];
    onnx::GraphProto& g = graph_attr(n, k == 0 ? "then_branch" : "else_branch");
    std::string prefix = base + r.name + ".";
    yield(g, inline_region(r, g, given, prefix), r.output_types(), prefix);
  }
  for (Var o : op.outs) n.add_output(ex.name(o));
}

// while_loop(consts; carries) as Loop("", c0, carries...) whose body takes (i, c, carries...)
// and gives (cond(consts, carries'), carries'...). max_trips is not written: a Loop's trip
// count would cut the loop short where ytape stops with an error.
void while_loop(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::while_loop>(op.attrs);
  const Tape &test = op.regions[0], &body = op.regions[1];
  const auto consts = static_cast<size_t>(a.consts);
  std::vector<std::string> given;
  for (size_t i = 0; i < op.args.size(); ++i) given.push_back(in(ex, op, i));
  std::string base = ex.name(op.outs[0]) + ".";
  std::string go = inline_region(test, ex.graph(), given, base + "first.")[0];
  std::vector<std::string> inputs{"", go};
  inputs.insert(inputs.end(), given.begin() + static_cast<std::ptrdiff_t>(consts), given.end());
  onnx::NodeProto& n = ex.node("Loop", inputs);
  n.clear_output();
  onnx::GraphProto& g = graph_attr(n, "body");
  declare(g.add_input(), base + "i", Type{DType::i64, {}});
  declare(g.add_input(), base + "go", Type{DType::boolean, {}});
  std::vector<std::string> carried(given.begin(),
                                   given.begin() + static_cast<std::ptrdiff_t>(consts));
  for (size_t k = consts; k < op.args.size(); ++k) {
    std::string name = fmt::format("{}carry{}", base, k - consts + 1);
    declare(g.add_input(), name, ex.type(op.args[k]));
    carried.push_back(name);
  }
  std::vector<std::string> next = inline_region(body, g, carried, base + "body.");
  std::vector<std::string> after(carried.begin(),
                                 carried.begin() + static_cast<std::ptrdiff_t>(consts));
  after.insert(after.end(), next.begin(), next.end());
  std::vector<std::string> yields{inline_region(test, g, after, base + "test.")[0]};
  yields.insert(yields.end(), next.begin(), next.end());
  std::vector<Type> types{Type{DType::boolean, {}}};
  for (const Type& t : body.output_types()) types.push_back(t);
  yield(g, yields, types, base + "body.");
  for (Var o : op.outs) n.add_output(ex.name(o));
}

// scan(consts; carries; xs) as Scan(carries..., xs...) (opset 9 on: every scan axis the
// first ONNX axis, ytape's last dim), its body taking (carries, slices) and giving
// (carries', y_t...); reverse as every direction 1.
void scan(Exporter& ex, const Op& op) {
  const auto a = attrs_of<Prim::scan>(op.attrs);
  if (skips_steps(a)) {
    user_error(
        "ONNX Scan runs every step, and this scan may skip some (running={}, mask={}: the "
        "gradient of a while_loop): export the tape before `ytape grad`",
        a.running, a.mask);
  }
  const Tape& body = op.regions[0];
  const auto consts = static_cast<size_t>(a.consts);
  const size_t xs = op.args.size() - consts - static_cast<size_t>(a.carries);
  const size_t ys = body.outputs.size() - static_cast<size_t>(a.carries);
  std::vector<std::string> inputs;
  for (size_t i = consts; i < op.args.size(); ++i) inputs.push_back(in(ex, op, i));
  onnx::NodeProto& n = ex.node("Scan", inputs);
  n.clear_output();
  set_attr(n, "num_scan_inputs", static_cast<int64_t>(xs));
  if (a.reverse) {
    set_attr(n, "scan_input_directions", std::vector<int64_t>(xs, 1));
    set_attr(n, "scan_output_directions", std::vector<int64_t>(ys, 1));
  }
  std::string base = ex.name(op.outs[0]) + ".";
  onnx::GraphProto& g = graph_attr(n, "body");
  std::vector<std::string> given;
  for (size_t i = 0; i < consts; ++i) given.push_back(in(ex, op, i));
  std::vector<Type> types = body.input_types();
  for (size_t i = consts; i < types.size(); ++i) {
    given.push_back(fmt::format("{}in{}", base, i - consts + 1));
    declare(g.add_input(), given.back(), types[i]);
  }
  yield(g, inline_region(body, g, given, base + "body."), body.output_types(), base + "body.");
  for (Var o : op.outs) n.add_output(ex.name(o));
}

// custom_rule as its body's nodes, each result through an Identity: ONNX has no
// derivatives of its own, and the op's mark (onnx/marks.h) keeps its pullback for ytape's
// import.
void custom_rule(Exporter& ex, const Op& op) {
  std::vector<std::string> given;
  for (size_t i = 0; i < op.args.size(); ++i) given.push_back(in(ex, op, i));
  std::string base = ex.name(op.outs[0]) + ".";
  std::vector<std::string> out = inline_region(op.regions[0], ex.graph(), given, base + "body.");
  for (size_t k = 0; k < op.outs.size(); ++k) ex.node("Identity", {out[k]}, ex.name(op.outs[k]));
}

}  // namespace

void register_control_export(ExportTable& t) {
  t.set(Prim::scan, scan);
  t.set(Prim::cond, cond);
  t.set(Prim::while_loop, while_loop);
  t.set(Prim::custom_rule, custom_rule);
}

}  // namespace ytape::onnx_export
