// The state of one export, and the rule of each primitive: a primitive becomes one or a few
// ONNX nodes over the names of its arguments. The rules are kept as the primitives are
// grouped: the namesakes of onnx/namesakes.def, written by one generic rule, and the others
// in onnx/export_rules/<family>.cc (the families of tape/families.def), each registered by
// its family's register_<family>_export.
//
// The layout mapping, as the rules apply it: ytape dim d of a rank-r tensor is ONNX axis
// r - d; shapes and per-dim lists are reversed, [w, h] lists become [H, W] and pads
// [w_lo, w_hi, h_lo, h_hi] become [H_begin, W_begin, H_end, W_end].
#pragma once

#include <onnx/onnx_pb.h>

#include <array>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape::onnx_export {

/// A TensorProto holding `t` (its shape reversed, the same bytes), named `name`.
onnx::TensorProto tensor_proto(const Tensor& t, const std::string& name);

class Exporter {
 public:
  /// An exporter of `t`'s ops into `g`; the names it makes start with `prefix` (a region's
  /// exporter gives each region names of its own: ONNX names every value once, subgraphs
  /// included).
  Exporter(const Tape& t, onnx::GraphProto& g, std::string prefix = "")
      : tape_(t), g_(g), names_(t.types.size()), prefix_(std::move(prefix)) {}

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

  /// Appends the nodes of `op` and names its outputs; UnsupportedError for a primitive
  /// without an ONNX form. Every form but a namesake's node is marked with the primitive
  /// (onnx/marks.h), so that ytape's import gives the op back.
  void export_op(const Op& op);

 private:
  const Tape& tape_;
  onnx::GraphProto& g_;
  std::vector<std::string> names_;
  std::string prefix_;
  int fresh_ = 0;
};

/// Declares the ONNX value `name` of ytape type `type` (its shape reversed) in `v`.
void declare(onnx::ValueInfoProto* v, const std::string& name, const Type& type);

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v);
void set_attr(onnx::NodeProto& n, const std::string& name, float v);
void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v);

// ---- the table ----------------------------------------------------------------------------

/// Appends the nodes of `op` to `ex` and names its outputs there.
using ExportRule = void (*)(Exporter& ex, const Op& op);

/// The rule of each primitive, indexed by it; null where a primitive has no ONNX form (the
/// effects, print and guard). tests/unit/onnx/export_table_test.cc checks that every other
/// primitive has a rule.
struct ExportTable {
  std::array<ExportRule, kNumPrims> rules{};

  /// Sets `p`'s rule; InternalError when it has one already (a namesake row and a family's
  /// rule both, say).
  void set(Prim p, ExportRule rule);
  ExportRule rule(Prim p) const { return rules[static_cast<size_t>(p)]; }
};

/// The table, built on first use: the rows of onnx/namesakes.def, then each family's rules.
const ExportTable& export_table();

/// The ONNX op type of which `p` is the namesake (onnx/namesakes.def); empty for the others.
std::string_view namesake_of(Prim p);

/// One registration function per family (onnx/export_rules/<family>.cc).
#define FAMILY(f) void register_##f##_export(ExportTable& t);
#include "tape/families.def"
#undef FAMILY

// ---- helpers shared by the rules ----------------------------------------------------------

/// The ONNX name of argument `i` of `op`.
inline std::string in(Exporter& ex, const Op& op, size_t i) {
  return ex.name(op.args[i]);
}
inline int rank(Exporter& ex, Var v) {
  return ex.type(v).rank();
}
/// The ONNX axis of ytape dim `dim` (1-based) of `v`.
inline int64_t axis(Exporter& ex, Var v, int64_t dim) {
  return rank(ex, v) - dim;
}
/// A shape or per-dim list in the other order (ytape's <-> ONNX's).
inline std::vector<int64_t> reversed(std::vector<int64_t> v) {
  return {v.rbegin(), v.rend()};
}
/// Names `op`'s one output after node `n`'s first.
inline void done(Exporter& ex, const Op& op, onnx::NodeProto& n) {
  ex.name(op.outs[0], n.output(0));
}
/// Throws UnsupportedError `why`: an op whose attributes have no ONNX form here.
[[noreturn]] void refuse(const std::string& why);

/// A tensor of ytape shape `shape` whose every element is `v` in `dtype` (as `convert`
/// rounds it).
Tensor holding(DType dtype, Shape shape, double v);
/// A ConstantOfShape node of ytape shape `shape` filled with `v`; returns its output.
std::string filled(Exporter& ex, DType dtype, const Shape& shape, double v);

/// Conv and pool pads: ytape's [w_lo, w_hi, h_lo, h_hi] as ONNX's
/// [H_begin, W_begin, H_end, W_end].
std::vector<int64_t> onnx_pads(const std::vector<int64_t>& p);

/// What a transposed convolution needs of its op: the output's ytape shape (w, h, ...),
/// and per spatial dim ([w, h]) the stride, pads and dilation, as conv2d's attributes.
struct ConvGeometry {
  std::vector<int64_t> shape, stride, pad, dilation;
};
/// A ConvTranspose of `op`'s first argument with the weights `w` (of ytape shape `ws`,
/// (kw, kh, cin/groups, cout)), its output padding making up what the stride left over;
/// names `op`'s output (onnx/export_rules/conv.cc).
void transposed_conv(Exporter& ex, const Op& op, const std::string& w, const Shape& ws,
                     const ConvGeometry& a, int64_t groups);

/// out = zeros of ytape shape `out`, then out[..., idx, ...] += y along ONNX axis `axis`,
/// where `y` is of type `yt` and `idx` (1-based) broadcasts to y's shape: a ScatterElements
/// adding onto zeros; returns its output (onnx/export_rules/index.cc).
std::string scatter_added(Exporter& ex, const std::string& y, const Type& yt, std::string idx,
                          const Shape& out, int64_t axis);

}  // namespace ytape::onnx_export
