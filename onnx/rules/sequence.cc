// Sequences and optionals, expanded at import (docs/onnx.md, Sequences and optionals): a
// sequence is the list of its tensors, its length known at import, and an optional is none
// or its value, so each op here is list work done at import (SequenceInsert, SequenceAt,
// Optional), tape ops on the tensors (ConcatFromSequence, SplitToSequence, SequenceMap's
// body per element), or a constant (SequenceLength, OptionalHasElement). A position or
// split that is not known at import is refused, naming the node.
#include <algorithm>

#include "onnx/importer.h"

namespace ytape::onnx_import {

namespace {

// Static input `i`, a position in a sequence of `size` tensors (negative: from the end),
// 0-based; `size` itself, one past the end, only where `past_end` (SequenceInsert's).
size_t position(Importer& im, const Node& n, int i, size_t size, bool past_end) {
  std::vector<int64_t> p = im.static_ints(n, i);
  if (p.size() != 1) user_error("input {} (a position) has {} elements, not 1", i + 1, p.size());
  auto len = static_cast<int64_t>(size);
  int64_t q = p[0] < 0 ? p[0] + len : p[0];
  if (q < 0 || q > len || (q == len && !past_end))
    user_error("position {} is out of range for a sequence of {} tensors", p[0], size);
  return static_cast<size_t>(q);
}

void check_length(size_t size) {
  if (size > static_cast<size_t>(kMaxSequence))
    unsupported(fmt::format("a sequence of more than {} tensors", kMaxSequence));
}

void sequence_construct(Importer& im, const Node& n) {
  std::vector<Var> xs;
  for (int i = 0; i < n.input_size(); ++i) {
    xs.push_back(im.input(n, i));
    if (im.type(xs[i]).dtype != im.type(xs[0]).dtype) {
      user_error("input {} is {}, input 1 {}: a sequence's tensors have one element type", i + 1,
                 dtype_name(im.type(xs[i]).dtype), dtype_name(im.type(xs[0]).dtype));
    }
  }
  im.set_output_value(n, 0, Value::sequence(std::move(xs)));
}

void sequence_empty(Importer& im, const Node& n) {
  im.set_output_value(n, 0, Value::sequence({}));
}

void sequence_at(Importer& im, const Node& n) {
  std::vector<Var> xs = im.sequence_input(n, 0);
  im.set_output(n, 0, xs[position(im, n, 1, xs.size(), false)]);
}

void sequence_insert(Importer& im, const Node& n) {
  std::vector<Var> xs = im.sequence_input(n, 0);
  size_t at = im.has_input(n, 2) ? position(im, n, 2, xs.size(), true) : xs.size();
  xs.insert(xs.begin() + static_cast<ptrdiff_t>(at), im.input(n, 1));
  check_length(xs.size());
  im.set_output_value(n, 0, Value::sequence(std::move(xs)));
}

void sequence_erase(Importer& im, const Node& n) {
  std::vector<Var> xs = im.sequence_input(n, 0);
  if (xs.empty()) user_error("erases from an empty sequence");
  size_t at = im.has_input(n, 1) ? position(im, n, 1, xs.size(), false) : xs.size() - 1;
  xs.erase(xs.begin() + static_cast<ptrdiff_t>(at));
  im.set_output_value(n, 0, Value::sequence(std::move(xs)));
}

void sequence_length(Importer& im, const Node& n) {
  im.set_output(n, 0, im.scalar(DType::i64, static_cast<double>(im.sequence_input(n, 0).size())));
}

// The lengths of SplitToSequence's pieces along an axis of `len`: its static `split` (one
// length for all, the last piece shorter; or each piece's), or 1 each.
std::vector<int64_t> split_lengths(Importer& im, const Node& n, int64_t len) {
  if (!im.has_input(n, 1)) {
    check_length(static_cast<size_t>(len));
    return std::vector<int64_t>(static_cast<size_t>(len), 1);
  }
  Tensor t = im.static_input(n, 1);
  std::vector<int64_t> split = im.static_ints(n, 1);
  if (t.rank() == 0) {
    if (split[0] < 1) user_error("a split of {}; a piece has 1 element at least", split[0]);
    check_length(static_cast<size_t>(len / split[0]));
    std::vector<int64_t> pieces(static_cast<size_t>(len / split[0]), split[0]);
    if (len % split[0] != 0) pieces.push_back(len % split[0]);
    return pieces;
  }
  for (int64_t l : split) {
    if (l < 0) user_error("a split of length {}", l);
  }
  int64_t total = 0;
  for (int64_t l : split) {
    total += std::min(l, len + 1);  // past len it is wrong however much, and cannot overflow
    if (total > len) break;
  }
  if (total != len) user_error("the split's lengths do not sum to the axis' {}", len);
  return split;
}

void split_to_sequence(Importer& im, const Node& n) {
  Var x = im.input(n, 0);
  int dim = ydim(attr_int(n, "axis", 0), im.rank(x));
  int64_t len = im.type(x).shape[dim - 1];
  std::vector<int64_t> lengths = split_lengths(im, n, len);
  check_length(lengths.size());
  bool squeeze = !im.has_input(n, 1) && attr_int(n, "keepdims", 1) == 0;
  Shape squeezed = im.type(x).shape;
  squeezed.erase(squeezed.begin() + (dim - 1));
  std::vector<Var> pieces;
  int64_t from = 0;
  for (int64_t l : lengths) {
    Var piece = im.slice(x, dim, from, l);
    pieces.push_back(squeeze ? im.reshape(piece, squeezed) : piece);
    from += l;
  }
  im.set_output_value(n, 0, Value::sequence(std::move(pieces)));
}

void concat_from_sequence(Importer& im, const Node& n) {
  std::vector<Var> xs = im.sequence_input(n, 0);
  if (xs.empty()) user_error("concatenates an empty sequence, which has no result");
  if (!find_attr(n, "axis")) user_error("the attribute axis is missing");
  int64_t axis = attr_int(n, "axis", 0);
  if (attr_int(n, "new_axis", 0) != 0) {
    im.set_output(n, 0, im.stack(xs, ydim(axis, im.rank(xs[0]) + 1)));
    return;
  }
  int dim = ydim(axis, im.rank(xs[0]));
  im.set_output(n, 0, xs.size() == 1 ? xs[0] : im.op<Prim::concat>(xs, {.dim = dim}));
}

// SequenceMap: the body once per element of the first input, a sequence; each further
// input is a sequence of as many (its element at the same position) or a tensor (as it is).
// Each output is the sequence of the body's results.
void sequence_map(Importer& im, const Node& n) {
  const onnx::GraphProto& body = graph_attr(n, "body");
  if (body.input_size() != n.input_size() || body.output_size() != n.output_size()) {
    user_error("a body of {} inputs and {} outputs does not fit {} inputs and {} outputs",
               body.input_size(), body.output_size(), n.input_size(), n.output_size());
  }
  std::vector<Value> ins;
  for (int i = 0; i < n.input_size(); ++i) ins.push_back(im.value_input(n, i));
  size_t len = im.sequence_input(n, 0).size();
  for (int i = 1; i < n.input_size(); ++i) {
    if (ins[i].kind == Value::Kind::sequence && ins[i].tensors.size() != len)
      user_error("input {} has {} tensors, input 1 has {}", i + 1, ins[i].tensors.size(), len);
  }
  std::vector<std::vector<Var>> outs(n.output_size());
  for (size_t k = 0; k < len; ++k) {
    im.count_iteration("SequenceMap");
    for (int i = 0; i < n.input_size(); ++i) {
      bool each = i == 0 || ins[i].kind == Value::Kind::sequence;
      im.define_value(body.input(i).name(), each ? Value::tensor(ins[i].tensors[k]) : ins[i]);
    }
    import_subgraph(im, body, "body");
    for (int o = 0; o < n.output_size(); ++o) outs[o].push_back(im.lookup(body.output(o).name()));
  }
  for (int o = 0; o < n.output_size(); ++o) im.set_output_value(n, o, Value::sequence(outs[o]));
}

// Optional: of its input, or none of the type its attribute `type` names.
void optional(Importer& im, const Node& n) {
  if (im.has_input(n, 0)) {
    im.set_output_value(n, 0, Value::optional(im.value_input(n, 0)));
    return;
  }
  const onnx::AttributeProto* type = find_attr(n, "type");
  if (!type || !type->has_tp()) user_error("an Optional without an input needs the attribute type");
  im.set_output_value(n, 0, Value::optional(std::nullopt, type->tp().has_sequence_type()));
}

// OptionalHasElement, a constant: false for none or no input (opset 18), true otherwise.
void optional_has_element(Importer& im, const Node& n) {
  bool has = im.has_input(n, 0) && im.value_input(n, 0).content().has_value();
  im.set_output(n, 0, im.scalar(DType::boolean, has ? 1 : 0));
}

void optional_get_element(Importer& im, const Node& n) {
  std::optional<Value> content = im.value_input(n, 0).content();
  if (!content) user_error("input 1 '{}' is an optional that is none, with no element", n.input(0));
  im.set_output_value(n, 0, *content);
}

}  // namespace

void add_sequence_rules(Rules& r) {
  r["ConcatFromSequence"] = concat_from_sequence;
  r["Optional"] = optional;
  r["OptionalGetElement"] = optional_get_element;
  r["OptionalHasElement"] = optional_has_element;
  r["SequenceAt"] = sequence_at;
  r["SequenceConstruct"] = sequence_construct;
  r["SequenceEmpty"] = sequence_empty;
  r["SequenceErase"] = sequence_erase;
  r["SequenceInsert"] = sequence_insert;
  r["SequenceLength"] = sequence_length;
  r["SequenceMap"] = sequence_map;
  r["SplitToSequence"] = split_to_sequence;
}

}  // namespace ytape::onnx_import
