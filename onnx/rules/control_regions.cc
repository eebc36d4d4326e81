// Control flow imported as region ops (docs/onnx.md, Control flow; docs/regions.md): an If
// whose condition depends on the inputs is a cond of its two branches; a Loop without scan
// outputs is a while_loop whose condition is the Loop's (its trip count, its condition input
// and its body's condition output); a Scan is a scan (its axes moved to the first, inputs
// and outputs of the other direction reversed), and a Scan-8 a scan over its batch whose
// body scans each element's sequence. Each subgraph is imported once, on a builder of its own
// (Importer's region constructor): a tensor of the graph around it that it reads becomes an operand
// of the op. Those whose structure is known at import stay unrolled (onnx/rules/control.cc).
#include "onnx/rules/control_regions.h"

#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// A subgraph imported on a builder of its own, its `params` (named by its inputs) first.
struct Region {
  std::unique_ptr<Builder> builder = std::make_unique<Builder>();
  std::unique_ptr<Importer> importer;
  std::vector<std::pair<Var, std::string>> params;
  std::vector<Var> yields;
};

// `order`, where given, lists the subgraph's inputs in the order of the region's
// parameters (`params` is then in that order too).
Region import_region(Importer& im, const onnx::GraphProto& g, std::string_view attr,
                     const std::vector<Type>& params, const std::vector<int>& order = {}) {
  Region r;
  r.importer = std::make_unique<Importer>(*r.builder, im);
  for (size_t i = 0; i < params.size(); ++i) {
    const std::string& name = g.input(order.empty() ? static_cast<int>(i) : order[i]).name();
    Var v = r.builder->input(name, params[i]);
    r.importer->define(name, v);
    r.params.emplace_back(v, name);
  }
  import_subgraph(*r.importer, g, attr);
  for (const onnx::ValueInfoProto& o : g.output()) r.yields.push_back(r.importer->lookup(o.name()));
  return r;
}

// The operands that the regions read from outside (their captures, in order of first
// capture), each region's parameters for them put before its own (a region that reads
// none of one still takes it); then each region's tape.
VarList finish_regions(Importer& im, std::vector<Region>& regions, std::vector<Tape>& tapes) {
  VarList consts;
  std::vector<std::string> names;
  for (const Region& r : regions) {
    for (const auto& [inner, outer] : r.importer->captures()) {
      if (std::find(consts.begin(), consts.end(), outer) != consts.end()) continue;
      consts.push_back(outer);
      names.emplace_back();
      for (const Op& op : r.builder->tape().ops) {
        if (op.kind == OpKind::input && op.outs[0] == inner) names.back() = op.name;
      }
    }
  }
  for (Region& r : regions) {
    std::vector<std::pair<Var, std::string>> params;
    for (size_t i = 0; i < consts.size(); ++i) {
      const auto& caps = r.importer->captures();
      auto it = std::find_if(caps.begin(), caps.end(),
                             [&](const auto& c) { return c.second == consts[i]; });
      Var inner = it != caps.end() ? it->first : r.builder->capture(names[i], im.type(consts[i]));
      params.emplace_back(inner, names[i]);
    }
    params.insert(params.end(), r.params.begin(), r.params.end());
    tapes.push_back(region_tape(r.builder->tape(), params, r.yields));
  }
  return consts;
}

// A one-element tensor as a scalar: ONNX's conditions may be of shape [1].
Var as_scalar(Importer& im, Var v, std::string_view what) {
  if (im.type(v).size() != 1) user_error("{} has {} elements, not one", what, im.type(v).size());
  return im.reshape(v, {});
}

}  // namespace

void if_region(Importer& im, const Node& n) {
  Var flag = as_scalar(im, im.input(n, 0), "the condition");
  if (im.type(flag).dtype != DType::boolean) user_error("the condition is not a bool");
  std::vector<Region> branches;
  for (const char* attr : {"then_branch", "else_branch"}) {
    const onnx::GraphProto& g = graph_attr(n, attr);
    if (g.input_size() != 0) user_error("the {} has inputs; an If's branches have none", attr);
    if (g.output_size() != n.output_size())
      user_error("the {} has {} outputs, the node {}", attr, g.output_size(), n.output_size());
    try {
      branches.push_back(import_region(im, g, attr, {}));
    } catch (const UserError& e) {
      // A cond holds tensors: branches of sequences or optionals need the branch known.
      if (dynamic_cast<const UnsupportedError*>(&e) != nullptr) throw;
      throw UnsupportedError(fmt::format("an If whose condition is known only at run time "
                                         "imports as a cond of tensors: {}",
                                         e.what()),
                             n.input(0));
    }
  }
  std::vector<Tape> tapes;
  VarList consts = finish_regions(im, branches, tapes);
  std::vector<Var> outs = im.builder().cond(flag, consts, std::move(tapes));
  for (int i = 0; i < n.output_size(); ++i) im.set_output(n, i, outs[static_cast<size_t>(i)]);
}

bool loop_region(Importer& im, const Node& n) {
  const onnx::GraphProto& g = graph_attr(n, "body");
  const int carried = n.input_size() - 2;
  if (carried < 0 || g.input_size() != carried + 2 || g.output_size() != carried + 1) return false;
  const Type count{DType::i64, {}}, flag{DType::boolean, {}};
  // The loop's own carries: the iteration number and whether the body's condition held.
  std::vector<Type> params{count, flag};
  VarList initial{im.scalar(DType::i64, 0), im.has_input(n, 1)
                                                ? as_scalar(im, im.input(n, 1), "the condition")
                                                : im.scalar(DType::boolean, 1)};
  for (int k = 0; k < carried; ++k) {
    if (im.value_input(n, 2 + k).kind != Value::Kind::tensor) return false;
    initial.push_back(im.input(n, 2 + k));
    params.push_back(im.type(initial.back()));
  }
  std::vector<Region> regions(1);
  Region& body = regions[0];
  body = import_region(im, g, "body", params);
  // The body gives (cond, carried...); the loop's carries are (i + 1, cond, carried...).
  Builder& b = *body.builder;
  Var next = b.add(body.params[0].first, b.constant(DType::i64, 1.0));
  Var go = body.yields[0];
  if (b.type(go).size() != 1 || b.type(go).dtype != DType::boolean) return false;
  go = b.type(go).shape.empty() ? go : b.reshape(go, {.shape = {}});
  body.yields[0] = go;
  body.yields.insert(body.yields.begin(), next);
  // The condition: the body's last one, and i < M where the Loop has a trip count.
  Region test;
  test.importer = std::make_unique<Importer>(*test.builder, im);
  for (size_t k = 0; k < params.size(); ++k) {
    Var v = test.builder->input(fmt::format("p{}", k + 1), params[k]);
    test.params.emplace_back(v, fmt::format("p{}", k + 1));
  }
  Var holds = test.params[1].first;
  int64_t max_trips = 0;
  if (im.has_input(n, 0)) {
    const Tensor* known = im.known(im.input(n, 0));
    // A bound the gradient can store steps for: a count past 2^30 (PyTorch's while loops
    // give 2^63 - 1) leaves the loop unbounded.
    if (known != nullptr && im.static_integer(n, 0) <= (int64_t{1} << 30))
      max_trips = std::max<int64_t>(im.static_integer(n, 0), 0);
    Var trips = test.importer->lookup(n.input(0));
    trips = test.builder->convert(as_scalar(*test.importer, trips, "the trip count"),
                                  {.dtype = DType::i64});
    Builder& t = *test.builder;
    Var within = t.lt(test.params[0].first, trips);
    holds = t.select(holds, within, t.constant(DType::boolean, 0.0));
  }
  test.yields.push_back(holds);
  regions.insert(regions.begin(), std::move(test));
  std::vector<Tape> tapes;
  VarList consts = finish_regions(im, regions, tapes);
  std::vector<Var> outs =
      im.builder().while_loop(consts, initial, std::move(tapes[0]), std::move(tapes[1]), max_trips);
  for (int k = 0; k < carried; ++k) im.set_output(n, k, outs[static_cast<size_t>(2 + k)]);
  return true;
}

bool loop_scan(Importer& im, const Node& n) {
  const onnx::GraphProto& g = graph_attr(n, "body");
  const int carried = n.input_size() - 2;
  const int scans = g.output_size() - 1 - carried;
  if (carried < 0 || scans < 1 || g.input_size() != carried + 2 || !im.has_input(n, 0))
    return false;
  const Tensor* m = im.known(im.input(n, 0));
  if (m == nullptr || m->size() != 1) return false;
  const int64_t trips = im.static_integer(n, 0);
  if (trips < 1 || trips > (int64_t{1} << 30)) return false;
  if (im.has_input(n, 1)) {
    const Tensor* c = im.known(im.input(n, 1));
    if (c == nullptr || c->size() != 1 || element_value(*c, 0) == 0) return false;
  }
  for (int k = 0; k < carried; ++k) {
    if (im.value_input(n, 2 + k).kind != Value::Kind::tensor) return false;
  }
  // The body's parameters as a scan's: the condition (a const, true), the carried values,
  // then the iteration number (an xs of 0..M-1).
  std::vector<int> order{1};
  std::vector<Type> params{Type{DType::boolean, {}}};
  VarList carries, xs;
  for (int k = 0; k < carried; ++k) {
    order.push_back(2 + k);
    carries.push_back(im.input(n, 2 + k));
    params.push_back(im.type(carries.back()));
  }
  order.push_back(0);
  params.push_back(Type{DType::i64, {}});
  std::vector<Region> body;
  body.push_back(import_region(im, g, "body", params, order));
  Region& r = body[0];
  // A scan where the body's condition stays true: passed on as it came, or a true constant.
  Var go = r.yields[0];
  const Tensor* known = r.importer->known(go);
  bool stays = go == r.params[0].first ||
               (known != nullptr && known->size() == 1 && element_value(*known, 0) != 0);
  if (!stays) return false;
  r.yields.erase(r.yields.begin());
  std::vector<Tape> tapes;
  VarList consts = finish_regions(im, body, tapes);
  consts.push_back(im.scalar(DType::boolean, 1));
  Tensor positions(Type{DType::i64, {trips}});
  for (int64_t i = 0; i < trips; ++i) positions.data<int64_t>()[i] = i;
  xs.push_back(im.constant(positions));
  std::vector<Var> outs = im.builder().scan(consts, carries, xs, std::move(tapes[0]), trips);
  for (int i = 0; i < n.output_size(); ++i) im.set_output(n, i, outs[static_cast<size_t>(i)]);
  return true;
}

namespace {

// `x` with its ytape dim `d` moved last (ONNX's first axis), where a scan op slices it.
Var dim_last(Importer& im, Var x, int d) {
  const int r = im.rank(x);
  if (d == r) return x;
  std::vector<int64_t> perm;
  for (int k = 1; k <= r; ++k) {
    if (k != d) perm.push_back(k);
  }
  perm.push_back(d);
  return im.op<Prim::permutedims>({x}, {.perm = perm});
}

// `y`, whose last dim is a scan's steps, with that dim moved to ytape dim `d`.
Var last_to(Importer& im, Var y, int d) {
  const int r = im.rank(y);
  if (d == r) return y;
  std::vector<int64_t> perm;
  for (int k = 1; k <= r; ++k) perm.push_back(k < d ? k : k == d ? r : k - 1);
  return im.op<Prim::permutedims>({y}, {.perm = perm});
}

// `x` reversed along its ytape dim `d`.
Var flipped(Importer& im, Var x, int d) {
  const int64_t n = im.type(x).shape[static_cast<size_t>(d - 1)];
  std::vector<int64_t> back;
  for (int64_t i = n; i-- > 0;) back.push_back(i);
  return im.take(x, d, back);
}

// The value of per-input (or per-output) attribute `v` for number `i`: 0 when not listed.
int64_t nth(const std::vector<int64_t>& v, int i) {
  return i < static_cast<int>(v.size()) ? v[static_cast<size_t>(i)] : 0;
}

}  // namespace

// A scan op runs in one direction: an input or an output of the other is reversed along
// its steps (where ONNX's iteration i reads slice L-1-i, the scan's reads slice i of the
// reversed input), and each scan axis is moved to the scan's, ONNX's first.
bool scan_region(Importer& im, const Node& n, int states, int outputs) {
  const onnx::GraphProto& g = graph_attr(n, "body");
  const int inputs = n.input_size() - states;
  const std::vector<int64_t> in_axes = attr_ints(n, "scan_input_axes", {}),
                             out_axes = attr_ints(n, "scan_output_axes", {}),
                             in_dirs = attr_ints(n, "scan_input_directions", {}),
                             out_dirs = attr_ints(n, "scan_output_directions", {});
  const bool reverse = inputs > 0 ? nth(in_dirs, 0) != 0 : nth(out_dirs, 0) != 0;
  int64_t length = -1;  // checked before anything is recorded
  for (int j = 0; j < inputs; ++j) {
    const Shape& s = im.type(im.input(n, states + j)).shape;
    if (s.empty()) return false;
    int64_t steps = s[static_cast<size_t>(ydim(nth(in_axes, j), static_cast<int>(s.size())) - 1)];
    if (length >= 0 && steps != length) return false;
    length = steps;
  }
  if (length <= 0 || g.output_size() != states + outputs) return false;
  std::vector<Type> params;
  VarList carries, xs;
  for (int k = 0; k < states; ++k) {
    carries.push_back(im.input(n, k));
    params.push_back(im.type(carries.back()));
  }
  for (int j = 0; j < inputs; ++j) {
    Var x = im.input(n, states + j);
    x = dim_last(im, x, ydim(nth(in_axes, j), im.rank(x)));
    if ((nth(in_dirs, j) != 0) != reverse) x = flipped(im, x, im.rank(x));
    Type t = im.type(x);
    t.shape.pop_back();
    params.push_back(t);
    xs.push_back(x);
  }
  std::vector<Region> body;
  body.push_back(import_region(im, g, "body", params));
  std::vector<Tape> tapes;
  VarList consts = finish_regions(im, body, tapes);
  std::vector<Var> outs =
      im.builder().scan(consts, carries, xs, std::move(tapes[0]), length, reverse);
  for (int i = 0; i < n.output_size(); ++i) {
    Var y = outs[static_cast<size_t>(i)];
    if (i >= states) {
      const int k = i - states;
      if ((nth(out_dirs, k) != 0) != reverse) y = flipped(im, y, im.rank(y));
      y = last_to(im, y, ydim(nth(out_axes, k), im.rank(y)));
    }
    im.set_output(n, i, y);
  }
  return true;
}

// Scan-8 as a scan over the batch (its first ONNX axis, ytape's last dim) whose body is a
// scan over the sequence of that element (its next axis, then the element's last dim).
bool scan8_region(Importer& im, const Node& n, int states, int outputs) {
  const onnx::GraphProto& g = graph_attr(n, "body");
  const int inputs = n.input_size() - 1 - states;
  const std::vector<int64_t> dirs = attr_ints(n, "directions", {});
  if (inputs < 1 || g.output_size() != states + outputs) return false;
  VarList batched;
  std::vector<Type> element, params;  // of each batch element; the inner body's
  int64_t batch = -1, length = -1;
  for (int i = 0; i < states + inputs; ++i) {
    Type t = im.type(im.input(n, 1 + i));
    const bool scanned = i >= states;
    if (t.rank() < (scanned ? 2 : 1) || (batch >= 0 && t.shape.back() != batch)) return false;
    batch = t.shape.back();
    t.shape.pop_back();
    element.push_back(t);
    if (scanned) {
      if (length >= 0 && t.shape.back() != length) return false;
      length = t.shape.back();
      t.shape.pop_back();
    }
    params.push_back(t);
  }
  if (batch <= 0 || length <= 0) return false;
  for (int i = 0; i < states + inputs; ++i) {
    Var x = im.input(n, 1 + i);
    if (i >= states && nth(dirs, i - states) != 0) x = flipped(im, x, im.rank(x) - 1);
    batched.push_back(x);
  }
  std::vector<Region> body;
  body.push_back(import_region(im, g, "body", params));
  std::vector<Tape> tapes;
  VarList consts = finish_regions(im, body, tapes);
  // The outer body: the consts, then one batch element of each state and input.
  Builder outer;
  VarList inner_consts, inner_states, inner_xs;
  for (size_t i = 0; i < consts.size(); ++i)
    inner_consts.push_back(outer.input(fmt::format("c{}", i + 1), im.type(consts[i])));
  for (int i = 0; i < states + inputs; ++i) {
    Var v = outer.input(fmt::format("b{}", i + 1), element[static_cast<size_t>(i)]);
    (i < states ? inner_states : inner_xs).push_back(v);
  }
  for (Var y : outer.scan(inner_consts, inner_states, inner_xs, std::move(tapes[0]), length))
    outer.output(y, "");
  std::vector<Var> outs = im.builder().scan(consts, {}, batched, outer.finish(), batch);
  for (int i = 0; i < n.output_size(); ++i) im.set_output(n, i, outs[static_cast<size_t>(i)]);
  return true;
}

}  // namespace ytape::onnx_import
