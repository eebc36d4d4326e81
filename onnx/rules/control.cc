// Control flow whose structure is static, unrolled at import (control_regions.cc imports
// what is known only at run time as region ops): If whose condition is known
// (its taken branch imported in its place), Loop whose trip count and condition are known
// at every iteration (its body imported once per iteration; its loop-carried values may be
// sequences and optionals, whose structure may change from one iteration to the next), Scan (its
// body once per slice along the scanned axes; Scan-8 once per slice of each batch element). The
// body's values of one iteration (the iteration number among them) are known at import where the
// loop's are, so what depends only on them folds. What would have to be decided at run time is
// refused, naming the node.
#include <algorithm>
#include <limits>

#include "onnx/importer.h"
#include "onnx/rules/control_regions.h"

namespace ytape::onnx_import {

namespace {

void if_then_else(Importer& im, const Node& n) {
  // A condition known only at run time: a cond of both branches.
  if (im.known(im.input(n, 0)) == nullptr) return if_region(im, n);
  bool taken = im.static_number(n, 0) != 0;
  const char* attr = taken ? "then_branch" : "else_branch";
  const onnx::GraphProto& branch = graph_attr(n, attr);
  if (branch.input_size() != 0) user_error("the {} has inputs; an If's branches have none", attr);
  if (branch.output_size() != n.output_size()) {
    user_error("the {} has {} outputs, the node {}", attr, branch.output_size(), n.output_size());
  }
  import_subgraph(im, branch, attr);
  for (int i = 0; i < n.output_size(); ++i)
    im.set_output_value(n, i, im.value(branch.output(i).name()));
}

// Loop: M (trip count) and cond, both optional, then the loop-carried values; the body
// takes (iteration, cond, carried...) and gives (cond, carried..., scanned...), each scanned
// value stacked over the iterations along a new first ONNX axis (the tape's last dim).
void loop(Importer& im, const Node& n) {
  const onnx::GraphProto& body = graph_attr(n, "body");
  int carried = n.input_size() - 2, scans = body.output_size() - 1 - carried;
  if (carried < 0 || body.input_size() != carried + 2 || scans < 0 ||
      n.output_size() > carried + scans) {
    user_error("a body of {} inputs and {} outputs does not fit {} inputs and {} outputs",
               body.input_size(), body.output_size(), n.input_size(), n.output_size());
  }
  // A while_loop or a scan, where the Loop fits one and its body imports once for every
  // iteration; else unrolled, which needs its structure known at import and lets the body
  // use the iteration number as a constant (a Slice at it).
  try {
    if (scans == 0 ? loop_region(im, n) : loop_scan(im, n)) return;
  } catch (const UnsupportedError&) {
  }
  int64_t trips =
      im.has_input(n, 0) ? im.static_integer(n, 0) : std::numeric_limits<int64_t>::max();
  bool go = !im.has_input(n, 1) || im.static_number(n, 1) != 0;
  std::vector<Value> values;
  for (int k = 0; k < carried; ++k) values.push_back(im.value_input(n, 2 + k));
  std::vector<std::vector<Var>> scanned(scans);
  for (int64_t i = 0; go && i < trips; ++i) {
    im.count_iteration("Loop");
    im.define(body.input(0).name(), im.scalar(DType::i64, static_cast<double>(i)));
    im.define(body.input(1).name(), im.scalar(DType::boolean, 1));
    for (int k = 0; k < carried; ++k) im.define_value(body.input(2 + k).name(), values[k]);
    import_subgraph(im, body, "body");
    const Tensor* cond = im.known(im.lookup(body.output(0).name()));
    if (!cond || cond->size() != 1)
      unsupported("a Loop whose condition is not known at import (it depends on the values)");
    go = element_value(*cond, 0) != 0;
    for (int k = 0; k < carried; ++k) values[k] = im.value(body.output(1 + k).name());
    for (int s = 0; s < scans; ++s)
      scanned[s].push_back(im.lookup(body.output(1 + carried + s).name()));
  }
  for (int k = 0; k < carried; ++k) im.set_output_value(n, k, values[k]);
  for (int s = 0; s < scans; ++s) {
    if (scanned[s].empty()) unsupported("a Loop of no iterations with scan outputs");
    im.set_output(n, carried + s, im.stack(scanned[s], im.rank(scanned[s][0]) + 1));
  }
}

// ONNX's per-input or per-output axis (or direction) attribute, 0 for each by default.
std::vector<int64_t> per_value(const Node& n, std::string_view name, int count) {
  std::vector<int64_t> v = attr_ints(n, name, std::vector<int64_t>(count, 0));
  if (static_cast<int>(v.size()) != count)
    user_error("{} has {} entries, not {}", name, v.size(), count);
  return v;
}

// One Scan's unrolling: the states, then the scan inputs, each sliced along its ytape dim
// `dims[j]` (from the end where `backward[j]`); the body's scanned outputs are stacked along
// the ONNX axes `out_axes` (the last iteration's first where `out_back`).
struct ScanOf {
  std::vector<Var> states, inputs;
  std::vector<int> dims;
  std::vector<int64_t> backward, out_axes, out_back;
};

// The body run over `s`: the final states, then the stacked scanned outputs.
std::vector<Var> run_scan(Importer& im, const onnx::GraphProto& body, ScanOf s) {
  auto states = static_cast<int>(s.states.size()), inputs = static_cast<int>(s.inputs.size());
  int outputs = body.output_size() - states;
  int64_t len = -1;
  for (int j = 0; j < inputs; ++j) {
    int64_t size = im.type(s.inputs[j]).shape[s.dims[j] - 1];
    if (len >= 0 && size != len) user_error("scan inputs of {} and {} elements", len, size);
    len = size;
  }
  if (len == 0 && outputs > 0) unsupported("a Scan of no iterations with scan outputs");
  std::vector<std::vector<Var>> scanned(outputs);
  for (int64_t t = 0; t < len; ++t) {
    im.count_iteration("Scan");
    for (int k = 0; k < states; ++k) im.define(body.input(k).name(), s.states[k]);
    for (int j = 0; j < inputs; ++j) {
      Shape shape = im.type(s.inputs[j]).shape;
      shape.erase(shape.begin() + (s.dims[j] - 1));
      Var slice = im.slice(s.inputs[j], s.dims[j], s.backward[j] != 0 ? len - 1 - t : t, 1);
      im.define(body.input(states + j).name(), im.reshape(slice, shape));
    }
    import_subgraph(im, body, "body");
    for (int k = 0; k < states; ++k) s.states[k] = im.lookup(body.output(k).name());
    for (int o = 0; o < outputs; ++o)
      scanned[o].push_back(im.lookup(body.output(states + o).name()));
  }
  std::vector<Var> out = s.states;
  for (int o = 0; o < outputs; ++o) {
    if (s.out_back[o] != 0) std::reverse(scanned[o].begin(), scanned[o].end());
    int rank = im.rank(scanned[o][0]) + 1;
    out.push_back(im.stack(scanned[o], ydim(s.out_axes[o], rank)));
  }
  return out;
}

// The body of a Scan node whose inputs are `first` values (Scan-8's sequence_lens), the
// states and then the scan inputs; its number of states and of scan outputs.
const onnx::GraphProto& scan_body(const Node& n, int first, int& states, int& outputs) {
  const onnx::GraphProto& body = graph_attr(n, "body");
  int64_t scan_inputs = attr_int(n, "num_scan_inputs", 0);
  if (scan_inputs < 1 || scan_inputs > n.input_size())
    user_error("num_scan_inputs is {}, not 1 to the node's {} inputs", scan_inputs, n.input_size());
  auto inputs = static_cast<int>(scan_inputs);
  states = n.input_size() - first - inputs, outputs = body.output_size() - states;
  if (states < 0 || outputs < 0 || body.input_size() != states + inputs ||
      n.output_size() != body.output_size()) {
    user_error(
        "a body of {} inputs and {} outputs does not fit {} inputs, {} outputs and {} "
        "scan inputs",
        body.input_size(), body.output_size(), n.input_size(), n.output_size(), inputs);
  }
  return body;
}

// Scan (opset 9 on): the states, then num_scan_inputs tensors sliced along their scan axes;
// the body takes (states..., slices...) and gives (states..., scanned...), each scanned
// value stacked along its scan_output_axes (the first ONNX axis by default), the last
// iteration's first where scan_output_directions is 1.
void scan(Importer& im, const Node& n) {
  int states = 0, outputs = 0;
  const onnx::GraphProto& body = scan_body(n, 0, states, outputs);
  if (scan_region(im, n, states, outputs)) return;
  int inputs = n.input_size() - states;
  ScanOf s;
  s.backward = per_value(n, "scan_input_directions", inputs);
  s.out_axes = per_value(n, "scan_output_axes", outputs);
  s.out_back = per_value(n, "scan_output_directions", outputs);
  std::vector<int64_t> in_axes = per_value(n, "scan_input_axes", inputs);
  for (int k = 0; k < states; ++k) s.states.push_back(im.input(n, k));
  for (int j = 0; j < inputs; ++j) {
    s.inputs.push_back(im.input(n, states + j));
    s.dims.push_back(ydim(in_axes[j], im.rank(s.inputs[j])));
  }
  std::vector<Var> out = run_scan(im, body, std::move(s));
  for (int i = 0; i < n.output_size(); ++i) im.set_output(n, i, out[i]);
}

// Element `b` of `x`'s batch: its first ONNX axis (the tape's last dim) taken away.
Var batch_element(Importer& im, Var x, int64_t b) {
  if (im.rank(x) == 0) user_error("a Scan-8 input of rank 0 has no batch axis");
  Shape s = im.type(x).shape;
  s.pop_back();
  return im.reshape(im.slice(x, im.rank(x), b, 1), s);
}

// Scan-8: sequence_lens (optional), the states and the scan inputs, all with a first
// batch axis, the scan inputs scanned along their second; per batch element, the Scan of
// its slices, stacked again along the batch axis.
void scan_8(Importer& im, const Node& n) {
  int states = 0, outputs = 0;
  const onnx::GraphProto& body = scan_body(n, 1, states, outputs);
  int inputs = n.input_size() - 1 - states;
  std::vector<int64_t> backward = per_value(n, "directions", inputs);
  Var first = im.input(n, 1 + states);
  int64_t batch = im.rank(first) == 0 ? 0 : im.type(first).shape.back();
  if (im.has_input(n, 0)) {
    int64_t len = im.rank(first) < 2 ? 0 : im.type(first).shape[im.rank(first) - 2];
    for (int64_t l : im.static_ints(n, 0))
      if (l != len) unsupported("a Scan-8 over sequences shorter than the scan inputs");
  }
  if (scan8_region(im, n, states, outputs)) return;
  if (batch == 0) unsupported("a Scan-8 of an empty batch");
  std::vector<std::vector<Var>> per_batch(n.output_size());
  for (int64_t b = 0; b < batch; ++b) {
    im.count_iteration("Scan-8's batch");  // even of empty sequences, which run no body
    ScanOf s;
    s.backward = backward;
    s.out_axes = s.out_back = std::vector<int64_t>(outputs, 0);
    for (int k = 0; k < states; ++k) s.states.push_back(batch_element(im, im.input(n, 1 + k), b));
    for (int j = 0; j < inputs; ++j) {
      s.inputs.push_back(batch_element(im, im.input(n, 1 + states + j), b));
      s.dims.push_back(ydim(0, im.rank(s.inputs[j])));
    }
    std::vector<Var> out = run_scan(im, body, std::move(s));
    for (size_t i = 0; i < out.size(); ++i) per_batch[i].push_back(out[i]);
  }
  for (int i = 0; i < n.output_size(); ++i)
    im.set_output(n, i, im.stack(per_batch[i], im.rank(per_batch[i][0]) + 1));
}

}  // namespace

void add_control_rules(Rules& r) {
  r["If"] = if_then_else;
  r["Loop"] = loop;
  r["Scan"] = scan;
  r["Scan-8"] = scan_8;
}

}  // namespace ytape::onnx_import
