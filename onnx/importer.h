// The state of one import, as the rules of each op family see it: the ONNX values
// defined so far (each a var of the tape being built, with its value when it is known at
// import), the node's inputs and attributes, and a builder that folds what it can.
#pragma once

#include <onnx/onnx_pb.h>

#include <functional>
#include <map>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "onnx/import.h"
#include "runtime/tensor.h"
#include "tape/builder.h"

namespace ytape::onnx_import {

using Node = onnx::NodeProto;
class Importer;

/// Imports one node: reads its inputs and attributes and defines its outputs.
using Rule = void (*)(Importer& im, const Node& node);
/// Rules by op type; an older definition that means other than at opset 13 has its own
/// rule, if any, under the op type and the version that defined it ("Scan-8").
using Rules = std::map<std::string, Rule, std::less<>>;

/// An ONNX value as the import holds it: a tensor (a var of the tape), or a sequence or an
/// optional, whose structure a tape cannot hold, expanded into its tensors: a sequence's
/// length and an optional's presence are known at import (docs/onnx.md, Sequences and
/// optionals).
struct Value {
  enum class Kind : uint8_t { tensor, sequence, optional };
  Kind kind = Kind::tensor;
  /// An optional's: whether it holds a value, and whether that value is a sequence.
  bool present = true, of_sequence = false;
  /// A tensor: itself; a sequence: its elements; a present optional: its tensor, or its
  /// sequence's elements.
  std::vector<Var> tensors;

  static Value tensor(Var v) { return {Kind::tensor, true, false, {v}}; }
  static Value sequence(std::vector<Var> elements) {
    return {Kind::sequence, true, true, std::move(elements)};
  }
  /// An optional holding `v` (a tensor or a sequence), or none (`v` empty) of a sequence
  /// where `of_sequence`. UserError when `v` is an optional.
  static Value optional(const std::optional<Value>& v, bool of_sequence = false);
  /// What an optional holds (the value itself for any other: ONNX's ops on optionals take
  /// a tensor or a sequence as present); nullopt for none.
  std::optional<Value> content() const;
  /// "a tensor", "a sequence", "an optional", for messages.
  const char* kind_name() const;
};

/// The most tensors a sequence may hold (each a value of the tape, or an input of it).
constexpr int64_t kMaxSequence = 4096;
/// The most elements of a list or tensor that a rule computes at import itself (the
/// positions a gather takes, Range's values, a resize's weights): 2^22, 32 MB of i64, so
/// that a model whose sizes ask for more is refused rather than filling memory at import.
/// The tape's own ops may be of any size up to kMaxElements; a run allocates them.
constexpr int64_t kMaxListed = int64_t{1} << 22;
/// The most elements of the constants that the import computes in all (folded results,
/// the rules' lists and tables; not the model's own tensors): 2^24, 128 MB of 8-byte
/// elements, so that a small model cannot make a huge tape or a long import. Folding stops
/// short of it; a rule whose constant would pass it is refused.
constexpr int64_t kMaxComputed = int64_t{1} << 24;
/// The most ops of the tape an import makes: 2^20. The iterations of Loop and Scan (4096 in
/// all) and the steps of the recurrent ops import their bodies again and again, so a model
/// of a few kilobytes could otherwise make a tape of gigabytes.
constexpr int64_t kMaxOps = int64_t{1} << 20;
/// The most ops a rule unrolls for the taps of one node's window (a dilated MaxPool's
/// kernel, LRN's channels), each a slice of the tape.
constexpr int64_t kMaxTaps = 4096;

/// `n` as the length of a list that a rule computes at import: UserError "WHAT: N
/// elements, more than the 2^22 that ytape computes at import" unless 0 <= n <= kMaxListed.
int64_t listed(int64_t n, std::string_view what);

/// The layout mapping: ONNX axis `axis` (negative counts from the end) of a rank-`rank`
/// tensor as a 1-based ytape dim. Throws UserError when the axis is out of range.
int ydim(int64_t axis, int rank);
/// An ONNX shape from a ytape one, and back: reversed.
Shape reversed(const Shape& s);

class Importer {
 public:
  Importer(Builder& b, int opset) : b_(b), opset_(opset) {}
  /// An importer of a subgraph imported as a region (an If's branch, a Loop's body) on `b`,
  /// a builder of its own: a tensor of the graph around it (`outer`) that it reads becomes a
  /// capture (Builder::capture), or, where its value is known at import and small, a
  /// constant of the region. Sequences and optionals from outside are refused.
  Importer(Builder& b, Importer& outer)
      : b_(b), opset_(outer.opset_), own_(outer.own_), outer_(&outer) {}
  /// A region importer's captures so far: its var, and the var of the graph around it.
  const std::vector<std::pair<Var, Var>>& captures() const { return captures_; }

  int opset() const { return opset_; }
  Builder& builder() { return b_; }
  /// Whether the model is one of ytape's own exports, read with its marks: its marked
  /// groups of nodes import as their primitives (onnx/marks.h), in subgraphs too, and
  /// `emit` evaluates nothing, every op being one of the original tape's (off by default:
  /// ops whose arguments are all known are evaluated).
  void set_own(bool on) { own_ = on; }
  bool own() const { return own_; }

  // ---- values ------------------------------------------------------------------------
  /// Whether input `i` of `node` is given (optional inputs may be missing or "").
  bool has_input(const Node& node, int i) const;
  /// Input `i` of `node`; UserError when missing.
  Var input(const Node& node, int i) const;
  const Type& type(Var v) const { return b_.type(v); }
  int rank(Var v) const { return type(v).rank(); }
  /// The ONNX shape of `v` (its ytape shape reversed).
  Shape onnx_shape(Var v) const { return reversed(type(v).shape); }
  /// The value of `v` when known at import (a constant, or computed from constants).
  const Tensor* known(Var v) const;
  /// Input `i`'s value, which must be known at import ("must be static" otherwise).
  Tensor static_input(const Node& node, int i) const;
  /// A static input's elements as integers, in ONNX order (for 1-D: as listed).
  std::vector<int64_t> static_ints(const Node& node, int i) const;
  /// A static input of one element (a scalar, or a tensor of one): its value.
  double static_number(const Node& node, int i) const;
  /// A static input of one element that is an integer (of an integer type, or a float
  /// that holds one exactly): its value. UserError for NaN, a fraction or a number beyond
  /// int64.
  int64_t static_integer(const Node& node, int i) const;
  /// A list that opset 13 takes as static input `i` and older versions as the attribute
  /// `attr` (Squeeze's axes, Split's lengths): whichever the node has, or nothing.
  std::optional<std::vector<int64_t>> ints_input_or_attr(const Node& node, int i,
                                                         std::string_view attr) const;
  /// Defines output `i` of `node` (skipped when the node leaves it unnamed).
  void set_output(const Node& node, int i, Var v);
  /// Defines an ONNX value by name: the graph's inputs and initializers.
  void define(const std::string& name, Var v);
  /// The tensor named `name`; UserError when none is defined or it is a sequence or optional.
  Var lookup(const std::string& name) const;
  bool defined(const std::string& name) const;

  // ---- sequences and optionals -------------------------------------------------------
  /// Any value by name, tensors included.
  void define_value(const std::string& name, Value v);
  Value value(const std::string& name) const;
  /// Input `i` of `node`, of any kind; UserError when missing.
  Value value_input(const Node& node, int i) const;
  /// The elements of input `i`, which must be a sequence (or an optional holding one).
  std::vector<Var> sequence_input(const Node& node, int i) const;
  /// Defines output `i` of `node` (skipped when the node leaves it unnamed).
  void set_output_value(const Node& node, int i, Value v);
  /// `parts` stacked along a new ytape dim `dim` of their rank + 1, in order.
  Var stack(const std::vector<Var>& parts, int dim);
  /// The ONNX integer type of a value that the tape holds as i64 and ONNX narrower (a graph
  /// input, initializer or Constant of int8, uint8, ...), by name; 0 when not known so.
  int32_t narrow_type(const std::string& name) const;
  void set_narrow_type(const std::string& name, int32_t elem_type);

  /// Counts one more iteration that a loop (Loop, Scan) unrolls: the tape grows with each,
  /// so past 4096 in the whole model (nested loops multiply) UnsupportedError names `op`.
  void count_iteration(std::string_view op);
  /// The `seed` attribute of the next `rand` or `randn`, for `node`: a stream of its own for
  /// each random op of the import, chosen by ONNX's `seed` attribute when the node has one
  /// (docs/onnx.md, Random ops). The same model always gives the same seeds.
  int64_t random_seed(const Node& node);

  // ---- building ----------------------------------------------------------------------
  /// Applies `p`; when every argument is known, evaluates it with the runtime's kernel
  /// instead and returns a constant (folding the static parts of a model at import).
  /// Effectful primitives (`rand`, `randn`) never fold: a run draws them.
  Var emit(Prim p, VarList args, const Attrs& attrs = {});
  std::vector<Var> emit_all(Prim p, VarList args, const Attrs& attrs = {});
  template <Prim P>
  Var op(VarList args, const AttrsOf<P>& attrs = {}) {
    return emit(P, std::move(args), attrs.to_attrs());
  }
  /// A constant holding `t`, which a rule computed, whose value is then known: counted
  /// against kMaxComputed (UserError past it).
  Var constant(const Tensor& t);
  /// A constant holding one of the model's own tensors (an integer initializer, a Constant
  /// node's value, a bound input): not counted, since the model holds its bytes.
  Var given(const Tensor& t);
  /// The constant of the model's tensor `source` (its proto): made by `make` the first time,
  /// the same var after, so that a Constant or initializer of a Loop's body is one constant
  /// of the tape however many iterations import it.
  Var given(const void* source, const std::function<Tensor()>& make);
  /// A zeroed tensor of `type` for a constant that a rule computes, its element count
  /// checked (checked::elements, `listed`, and what kMaxComputed leaves) before anything
  /// is allocated.
  Tensor listed_tensor(const Type& type, std::string_view what) const;
  /// UserError unless `n` more computed elements fit in what kMaxComputed leaves: for a
  /// rule that computes its constants in parts (a plan per output position).
  void check_computed(int64_t n, std::string_view what) const;
  /// A rank-0 constant of `dtype`.
  Var scalar(DType dtype, double value);
  /// A rank-1 i64 constant.
  Var ints(const std::vector<int64_t>& values);
  /// `x` reshaped to the ytape shape `shape` (nothing when it already has it).
  Var reshape(Var x, const Shape& shape);
  /// Elements of `x` along ytape dim `dim` picked by 0-based `indices`, in order.
  Var take(Var x, int dim, const std::vector<int64_t>& indices);
  /// `count` elements of `x` along ytape dim `dim`, every `step`-th from 0-based `from`.
  Var slice(Var x, int dim, int64_t from, int64_t count, int64_t step = 1);
  /// `x` padded along ytape dim `dim` with `lo` and `hi` elements of `value`.
  Var pad(Var x, int dim, int64_t lo, int64_t hi, double value = 0);

 private:
  Builder& b_;
  int opset_;
  bool own_ = false;
  int64_t iterations_ = 0;
  int64_t computed_ = 0;   // elements of the constants computed so far (kMaxComputed)
  void check_ops() const;  // UnsupportedError once the tape has kMaxOps ops
  uint64_t random_ops_ = 0;
  Importer* outer_ = nullptr;
  // A region importer's names read from outside, defined on first use (see lookup).
  Var capture(const std::string& name) const;
  mutable std::vector<std::pair<Var, Var>> captures_;
  mutable std::unordered_map<std::string, Var> values_;
  std::unordered_map<std::string, Value> lists_;  // the sequences and optionals
  std::unordered_map<std::string, int32_t> narrow_types_;
  mutable std::unordered_map<uint32_t, Tensor> known_;  // by var id
  std::unordered_map<const void*, Var> given_;          // the model's tensors, by their protos
};

// ---- attributes --------------------------------------------------------------------------
const onnx::AttributeProto* find_attr(const Node& node, std::string_view name);
/// The graph attribute `name` (an If's branch, a Loop's body); UserError when missing.
const onnx::GraphProto& graph_attr(const Node& node, std::string_view name);
int64_t attr_int(const Node& node, std::string_view name, int64_t fallback);
double attr_float(const Node& node, std::string_view name, double fallback);
std::string attr_string(const Node& node, std::string_view name, std::string fallback);
std::vector<int64_t> attr_ints(const Node& node, std::string_view name,
                               std::vector<int64_t> fallback = {});
/// Throws UnsupportedError "<what> is not supported".
[[noreturn]] void unsupported(const std::string& what);

/// Imports the nodes of `graph`, a subgraph of the node being imported (an If's branch, a
/// Loop's body, named by its attribute `attr` in messages), once the values its inputs name
/// are defined; its outputs are then defined by their names. Recursion is bounded by the
/// model's own nesting, which protobuf's parser limits.
void import_subgraph(Importer& im, const onnx::GraphProto& graph, std::string_view attr);

// ---- the families' rules -----------------------------------------------------------------
/// The rules of onnx/namesakes.def's rows (all but the `wider` ones, whose families have
/// their own); InternalError when a family registered the same op type.
void add_namesake_rules(Rules& rules);
void add_elementwise_rules(Rules& rules);
void add_reduce_rules(Rules& rules);
void add_shape_rules(Rules& rules);
void add_slice_rules(Rules& rules);
void add_index_rules(Rules& rules);
void add_linalg_rules(Rules& rules);
void add_conv_rules(Rules& rules);
void add_pool_rules(Rules& rules);
void add_norm_rules(Rules& rules);
void add_loss_rules(Rules& rules);
void add_creation_rules(Rules& rules);
void add_random_rules(Rules& rules);
void add_resize_rules(Rules& rules);
void add_recurrent_rules(Rules& rules);
void add_control_rules(Rules& rules);
void add_quantize_rules(Rules& rules);
void add_sample_rules(Rules& rules);
void add_roi_rules(Rules& rules);
void add_text_rules(Rules& rules);
void add_spectral_rules(Rules& rules);

void add_sequence_rules(Rules& rules);

void add_training_rules(Rules& rules);

/// Every rule of the default domain (ai.onnx), by op type.
const Rules& all_rules();
/// The rules of ONNX's training domain (ai.onnx.preview.training), by op type.
const Rules& training_rules();

}  // namespace ytape::onnx_import
