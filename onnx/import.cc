#include "onnx/import.h"

#include <onnx/defs/schema.h>

#include <algorithm>
#include <map>
#include <unordered_set>

#include "onnx/attention.h"
#include "onnx/gelu.h"
#include "onnx/graph_io.h"
#include "onnx/importer.h"
#include "onnx/marks.h"
#include "onnx/proto.h"
#include "opt/dce.h"
#include "tape/strings.h"
#include "tape/validate.h"

namespace ytape {

namespace {

using namespace onnx_import;

// The opsets whose op definitions the rules implement. A model of an older opset imports
// when each of its ops is still defined as at opset 13 (Conv has not changed since opset
// 11, so a model of opset 11 with convolutions imports; one with Squeeze-11 does not).
constexpr int kMinOpset = 13, kMaxOpset = 17;
// The domain of ONNX's optimizers (Adagrad, Momentum, Adam), at its one version.
constexpr std::string_view kTraining = "ai.onnx.preview.training";

// A model of the training domain's ops alone reads as of opset 13.
int default_opset(const onnx::ModelProto& model, std::string_view source) {
  bool training = false;
  for (const onnx::OperatorSetIdProto& o : model.opset_import()) {
    training = training || (o.domain() == kTraining && o.version() == 1);
    if (o.domain().empty() || o.domain() == "ai.onnx") {
      // The version is an int64; it is narrowed only once known to be in range.
      int64_t version = o.version();
      if (version < 1 || version > kMaxOpset) {
        throw UnsupportedError(
            fmt::format("{}: opset {} is not supported (ytape imports opset {} to {})", source,
                        version, kMinOpset, kMaxOpset));
      }
      return static_cast<int>(version);
    }
  }
  if (training) return kMinOpset;
  throw UnsupportedError(
      fmt::format("{}: the model imports no opset of the default domain (ai.onnx), "
                  "only of others, which are not supported",
                  source));
}

// Op types whose definitions before the one in effect at opset 13 differ from it only in
// the element types they allow (bfloat16 at 13, more integers), or in taking a list as an
// attribute that opset 13 takes as an input (Squeeze-11's axes, Split-11's lengths, which
// the rules read either way), or in accepting what was invalid before (the reductions'
// negative axes from 11: a valid ReduceSum-1 means what ReduceSum-11 does), from the
// version where their meaning last changed. Softmax and LogSoftmax before 13 flatten their
// input: their rules read the model's opset.
// (ONNX's changelog: Add-7 took numpy broadcasting, Gather-11 negative indices, ...)
const std::map<std::string, int, std::less<>>& same_meaning_since() {
  static const std::map<std::string, int, std::less<>> since = {{"Abs", 6},
                                                                {"Add", 7},
                                                                {"ArgMax", 11},
                                                                {"ArgMin", 11},
                                                                {"BatchNormalization", 9},
                                                                {"Cast", 9},
                                                                {"Ceil", 6},
                                                                {"Clip", 11},
                                                                {"Compress", 11},
                                                                {"Concat", 11},
                                                                {"Constant", 9},
                                                                {"CumSum", 11},
                                                                {"ConstantOfShape", 9},
                                                                {"DequantizeLinear", 10},
                                                                {"Div", 7},
                                                                {"DepthToSpace", 11},
                                                                {"Dropout", 10},
                                                                {"Elu", 6},
                                                                {"Equal", 11},
                                                                {"Erf", 9},
                                                                {"Exp", 6},
                                                                {"Expand", 8},
                                                                {"Flatten", 11},
                                                                {"Floor", 6},
                                                                {"Gather", 11},
                                                                {"Gemm", 11},
                                                                {"Greater", 9},
                                                                {"HardSigmoid", 6},
                                                                {"If", 11},
                                                                {"Identity", 1},
                                                                {"LRN", 1},
                                                                {"LeakyRelu", 6},
                                                                {"Less", 9},
                                                                {"Log", 6},
                                                                {"Loop", 11},
                                                                {"LogSoftmax", 1},
                                                                {"MatMul", 9},
                                                                {"Max", 8},
                                                                {"MaxPool", 11},
                                                                {"MaxUnpool", 11},
                                                                {"Mean", 8},
                                                                {"MeanVarianceNormalization", 9},
                                                                {"Min", 8},
                                                                {"Mul", 7},
                                                                {"Neg", 6},
                                                                {"Pad", 11},
                                                                {"Pow", 7},
                                                                {"QuantizeLinear", 10},
                                                                {"Range", 11},
                                                                {"Reciprocal", 6},
                                                                {"ReduceL1", 1},
                                                                {"ReduceL2", 1},
                                                                {"ReduceLogSum", 1},
                                                                {"ReduceLogSumExp", 1},
                                                                {"ReduceMax", 1},
                                                                {"ReduceMean", 1},
                                                                {"ReduceMin", 1},
                                                                {"ReduceProd", 1},
                                                                {"ReduceSum", 1},
                                                                {"ReduceSumSquare", 1},
                                                                {"Relu", 6},
                                                                {"Reshape", 5},
                                                                {"Resize", 11},
                                                                {"ReverseSequence", 10},
                                                                {"Round", 11},
                                                                {"Scan", 9},
                                                                {"Scatter", 9},
                                                                {"Selu", 6},
                                                                {"Shape", 1},
                                                                {"Shrink", 9},
                                                                {"Sigmoid", 6},
                                                                {"Sign", 9},
                                                                {"Slice", 11},
                                                                {"Softmax", 1},
                                                                {"Softplus", 1},
                                                                {"Split", 11},
                                                                {"Sqrt", 6},
                                                                {"Squeeze", 11},
                                                                {"Sub", 7},
                                                                {"Sum", 8},
                                                                {"Tanh", 6},
                                                                {"Tile", 6},
                                                                {"Transpose", 1},
                                                                {"Unsqueeze", 11},
                                                                {"Upsample", 9},
                                                                {"Where", 9}};
  return since;
}

// Refuses an op type ONNX does not define at `opset` (a misspelt one gets the closest
// supported), one without a rule, and one whose definition at `opset` means other than at
// 13 (Squeeze-11 took its axes as an attribute, Softmax-11 flattened its input).
Rule rule_for(const Node& node, int opset) {
  const std::string& op = node.op_type();
  const onnx::OpSchema* schema = onnx::OpSchemaRegistry::Schema(op, opset, "");
  if (!schema) {
    // Defined in a later opset than the model's, or not at all (then perhaps misspelt).
    if (const onnx::OpSchema* later = onnx::OpSchemaRegistry::Schema(op, kMaxOpset, "")) {
      user_error("ONNX defines {} from opset {}, and the model imports opset {}", op,
                 later->since_version(), opset);
    }
    user_error("ONNX has no op type {} at opset {}{}", op, opset,
               did_you_mean(op, onnx_supported_ops()));
  }
  const Rules& rules = all_rules();
  auto rule = rules.find(op);
  if (rule == rules.end()) {
    throw UnsupportedError(
        fmt::format("op type {} is not supported (docs/onnx.md lists those that are)", op));
  }
  const onnx::OpSchema* current = onnx::OpSchemaRegistry::Schema(op, kMinOpset, "");
  auto same = same_meaning_since().find(op);
  bool same_meaning =
      (current && current->since_version() == schema->since_version()) ||
      (same != same_meaning_since().end() && schema->since_version() >= same->second);
  if (opset < kMinOpset && !same_meaning) {
    auto older = rules.find(fmt::format("{}-{}", op, schema->since_version()));
    if (older != rules.end()) return older->second;
    throw UnsupportedError(
        fmt::format("{}-{} is not supported: ytape imports {} as defined from opset {}", op,
                    schema->since_version(), op, kMinOpset));
  }
  return rule->second;
}

// Inputs first (the builder wants them before any other op): the graph's inputs, then the
// floating-point initializers; then the constants (other initializers, bound inputs).
// `own`: a model of ytape's, whose initializers were all inputs of the tape.
void define_inputs(const onnx::GraphProto& g, std::string_view source,
                   const OnnxImportOptions& options, bool own, Importer& im, OnnxImport& result) {
  std::unordered_map<std::string, const onnx::TensorProto*> initializers;
  for (const onnx::TensorProto& t : g.initializer()) initializers[t.name()] = &t;
  std::vector<std::pair<std::string, Tensor>> constants;
  for (const onnx::ValueInfoProto& v : g.input()) {
    if (initializers.count(v.name())) continue;
    auto bound = std::find_if(options.constant_inputs.begin(), options.constant_inputs.end(),
                              [&](const auto& p) { return p.first == v.name(); });
    try {
      if (is_sequence_or_optional(v.type())) {
        define_sequence_input(im, v, options);
        continue;
      }
      if (!v.type().has_tensor_type()) unsupported("an input of other than a tensor type");
      Type type = declared_type(v.type().tensor_type(), options.dims);
      im.set_narrow_type(v.name(), v.type().tensor_type().elem_type());
      if (bound != options.constant_inputs.end()) {
        if (bound->second.type() != type) {
          user_error("bound to a value of type {}, not {}", type_str(bound->second.type()),
                     type_str(type));
        }
        constants.push_back(*bound);
        continue;
      }
      im.define(v.name(), im.builder().input(v.name(), type));
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(fmt::format("{}: input '{}': {}", source, v.name(), e.what()));
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: input '{}': {}", source, v.name(), e.what()));
    }
  }
  for (const onnx::TensorProto& t : g.initializer()) {
    Tensor value = tensor_of(t, fmt::format("{}: initializer '{}': ", source, t.name()));
    im.set_narrow_type(t.name(), t.data_type());
    if (own || is_float(value.dtype())) {
      im.define(t.name(), im.builder().input(t.name(), value.type()));
      result.weights.emplace_back(t.name(), value);
    } else {
      constants.emplace_back(t.name(), value);
    }
  }
  for (const auto& [name, value] : constants) im.define(name, im.given(value));
}

std::string node_prefix(std::string_view source, size_t index, const Node& node, int opset) {
  std::string name = node.name().empty() ? "" : fmt::format(" '{}'", node.name());
  return fmt::format("{}: node {}{} ({}, opset {}): ", source, index + 1, name, node.op_type(),
                     opset);
}

// The rule of a node of the training domain, whose ops have one version.
Rule training_rule_for(const Node& node) {
  auto rule = training_rules().find(node.op_type());
  if (rule == training_rules().end()) {
    throw UnsupportedError(
        fmt::format("op type {} of the domain {} is not supported", node.op_type(), kTraining));
  }
  return rule->second;
}

void import_node(Importer& im, const Node& node) {
  if (node.domain() == kTraining) {
    training_rule_for(node)(im, node);
  } else if (!node.domain().empty() && node.domain() != "ai.onnx") {
    throw UnsupportedError(fmt::format("the domain '{}' is not supported (only ai.onnx and {})",
                                       node.domain(), kTraining));
  } else {
    rule_for(node, im.opset())(im, node);
  }
  for (int i = 0; i < node.output_size(); ++i) {
    if (!node.output(i).empty() && !im.defined(node.output(i))) {
      throw UnsupportedError(
          fmt::format("output {} ('{}') is not supported", i + 1, node.output(i)));
    }
  }
}

// The primitive a mark names, over the values it names; returns how many nodes it stands for.
int import_marked(Importer& im, const onnx_marks::Mark& m) {
  VarList args;
  for (const std::string& a : m.args) args.push_back(im.lookup(a));
  VarList outs = im.builder().record(m.prim, std::move(args), m.attrs, m.regions).outs;
  if (outs.size() != m.outs.size()) {
    user_error("the mark of {} names {} outputs, where it has {}", prim_name(m.prim), m.outs.size(),
               outs.size());
  }
  for (size_t k = 0; k < outs.size(); ++k) im.define(m.outs[k], outs[k]);
  return m.nodes;
}

// The node `i` of `g`, or the group of nodes from it on that a mark of ytape's names (in
// a model of its own: Importer::own); returns how many nodes it imported.
int import_group(Importer& im, const onnx::GraphProto& g, int i) {
  std::optional<onnx_marks::Mark> mark;
  if (im.own()) mark = onnx_marks::read_mark(g.node(i));
  if (mark && mark->digest == onnx_marks::group_digest(g, i, mark->nodes))
    return import_marked(im, *mark);
  import_node(im, g.node(i));
  return 1;
}

}  // namespace

// Inner nodes' errors name the subgraph and the node in it; the caller prefixes the node
// that holds the subgraph, as for any rule's error.
void onnx_import::import_subgraph(Importer& im, const onnx::GraphProto& g, std::string_view attr) {
  for (const onnx::TensorProto& t : g.initializer()) {
    im.define(t.name(), im.given(&t, [&] {
      return tensor_of(t, fmt::format("{}: initializer '{}': ", attr, t.name()));
    }));
  }
  for (int i = 0; i < g.node_size();) {
    const Node& node = g.node(i);
    std::string where =
        fmt::format("{} node {}{} ({}): ", attr, i + 1,
                    node.name().empty() ? "" : " '" + node.name() + "'", node.op_type());
    try {
      i += import_group(im, g, i);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(where + e.what(), e.needs_static());
    } catch (const UserError& e) {
      throw UserError(where + e.what());
    }
  }
}

namespace {

// The builder's messages start with the op's location, which the node prefix already
// says, and show the tape's shapes, which read reversed to ONNX eyes.
std::string builder_message(std::string message, std::string_view source, int node) {
  std::string loc = fmt::format("{}:{}: ", source, node + 1);
  if (message.rfind(loc, 0) != 0) return message;
  return message.substr(loc.size()) + " (in the tape's shapes, ONNX's reversed)";
}

void import_nodes(const onnx::GraphProto& g, std::string_view source, int opset, Importer& im) {
  uint32_t file = im.builder().intern_file(source);
  for (int i = 0; i < g.node_size();) {
    const Node& node = g.node(i);
    // An op's location is its node's position in the graph: "model.onnx:12" is node 12.
    im.builder().set_loc(Loc{file, static_cast<uint32_t>(i + 1)});
    try {
      i += import_group(im, g, i);
    } catch (const UnsupportedError& e) {
      throw UnsupportedError(node_prefix(source, i, node, opset) + e.what(), e.needs_static());
    } catch (const UserError& e) {
      throw UserError(node_prefix(source, i, node, opset) + builder_message(e.what(), source, i));
    }
  }
}

}  // namespace

OnnxImport import_onnx(std::string_view bytes, std::string_view source,
                       const OnnxImportOptions& options) {
  onnx::ModelProto model;
  if (!model.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    user_error("{}: not an ONNX model (its bytes do not parse as a ModelProto)", source);
  }
  int opset = default_opset(model, source);
  const onnx::GraphProto& g = model.graph();
  Builder b(g.name().empty() ? "model" : g.name());
  b.add_meta("onnx.opset", std::to_string(opset));
  if (!model.producer_name().empty()) {
    std::string version = model.producer_version().empty() ? "" : " " + model.producer_version();
    b.add_meta("onnx.producer", model.producer_name() + version);
  }
  bool own = options.read_marks && model.producer_name() == "ytape";
  Importer im(b, opset);
  im.set_own(own);
  OnnxImport result;
  try {
    check_sequence_options(g, options);
  } catch (const UserError& e) {
    user_error("{}: {}", source, e.what());
  }
  define_inputs(g, source, options, own, im, result);
  import_nodes(g, source, opset, im);
  b.set_loc({});
  for (const onnx::ValueInfoProto& out : g.output()) {
    try {
      for (const auto& [name, v] : output_tensors(im, out)) b.output(v, name);
    } catch (const UserError& e) {
      throw UserError(fmt::format("{}: output '{}': {}", source, out.name(), e.what()));
    }
  }
  result.tape = b.finish();
  if (!own) {  // a tape of ytape's comes back as it was, dead ops included
    if (std::optional<Tape> g = recognize_gelu(result.tape)) result.tape = std::move(*g);
    if (std::optional<Tape> a = recognize_attention(result.tape)) result.tape = std::move(*a);
    PassResult dce = eliminate_dead_code(result.tape);
    if (dce.tape) result.tape = std::move(*dce.tape);
  }
  try {
    // What the rules cannot see: names the model gives twice (an output listed twice).
    validate(result.tape);
  } catch (const UserError& e) {
    user_error("{}: the model does not make a valid tape: {}", source, e.what());
  }
  return result;
}

Tensor read_onnx_tensor(std::string_view bytes, std::string_view source) {
  onnx::TensorProto t;
  if (!t.ParseFromArray(bytes.data(), static_cast<int>(bytes.size()))) {
    user_error("{}: not an ONNX tensor (its bytes do not parse as a TensorProto)", source);
  }
  return tensor_of(t, fmt::format("{}: ", source));
}

std::vector<std::string> onnx_supported_ops() {
  std::vector<std::string> names;
  for (const auto& [name, rule] : all_rules()) {
    if (name.find('-') == std::string::npos) names.push_back(name);
  }
  return names;
}

}  // namespace ytape
