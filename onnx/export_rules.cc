// The Exporter's node writing, the table of rules (indexed by primitive, filled from the
// namesakes' rows and the families' registrations) and the helpers the families share.
#include "onnx/export_rules.h"

#include <algorithm>
#include <cstring>

#include "onnx/import.h"
#include "onnx/marks.h"
#include "onnx/proto.h"

namespace ytape::onnx_export {

namespace {

// The ONNX op type of each primitive that is a namesake's, by primitive.
const std::array<std::string_view, kNumPrims>& namesakes() {
  static const std::array<std::string_view, kNumPrims> names = [] {
    std::array<std::string_view, kNumPrims> n{};
#define NAMESAKE(prim, op_type, import) n[static_cast<size_t>(Prim::prim)] = op_type;
#include "onnx/namesakes.def"
#undef NAMESAKE
    return n;
  }();
  return names;
}

void namesake(Exporter& ex, const Op& op) {
  std::vector<std::string> args;
  for (size_t i = 0; i < op.args.size(); ++i) args.push_back(in(ex, op, i));
  done(ex, op, ex.node(std::string(namesake_of(op.prim)), args));
}

}  // namespace

void ExportTable::set(Prim p, ExportRule rule) {
  ExportRule& slot = rules[static_cast<size_t>(p)];
  if (slot) internal_error("two ONNX export rules for {}", prim_name(p));
  slot = rule;
}

const ExportTable& export_table() {
  static const ExportTable table = [] {
    ExportTable t;
#define NAMESAKE(prim, op_type, import) t.set(Prim::prim, namesake);
#include "onnx/namesakes.def"
#undef NAMESAKE
#define FAMILY(f) register_##f##_export(t);
#include "tape/families.def"
#undef FAMILY
    return t;
  }();
  return table;
}

std::string_view namesake_of(Prim p) {
  return namesakes()[static_cast<size_t>(p)];
}

void refuse(const std::string& why) {
  throw UnsupportedError(why);
}

Tensor holding(DType dtype, Shape shape, double v) {
  Tensor t(Type{dtype, std::move(shape)});
  std::array<uint8_t, 8> element = scalar_bytes(dtype, v);
  auto* bytes = static_cast<uint8_t*>(t.raw());
  for (int64_t i = 0; i < t.size(); ++i) {
    std::memcpy(bytes + i * dtype_size(dtype), element.data(), dtype_size(dtype));
  }
  return t;
}

std::string filled(Exporter& ex, DType dtype, const Shape& shape, double v) {
  onnx::NodeProto& n = ex.node("ConstantOfShape", {ex.ints(reversed(shape))});
  auto* attr = n.add_attribute();
  attr->set_name("value");
  attr->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *attr->mutable_t() = tensor_proto(holding(dtype, {1}, v), "");
  return n.output(0);
}

onnx::TensorProto tensor_proto(const Tensor& t, const std::string& name) {
  onnx::TensorProto p;
  p.set_name(name);
  p.set_data_type(onnx_import::to_onnx_dtype(t.dtype()));
  for (auto d = t.shape().rbegin(); d != t.shape().rend(); ++d) p.add_dims(*d);
  p.set_raw_data(std::string(static_cast<const char*>(t.raw()), static_cast<size_t>(t.bytes())));
  return p;
}

const std::string& Exporter::name(Var v) {
  if (names_[v.id].empty()) names_[v.id] = fmt::format("{}%{}", prefix_, v.id + 1);
  return names_[v.id];
}

std::string Exporter::fresh() {
  return fmt::format("{}%t{}", prefix_, ++fresh_);
}

void declare(onnx::ValueInfoProto* v, const std::string& name, const Type& type) {
  v->set_name(name);
  auto* t = v->mutable_type()->mutable_tensor_type();
  t->set_elem_type(onnx_import::to_onnx_dtype(type.dtype));
  auto* shape = t->mutable_shape();
  for (auto d = type.shape.rbegin(); d != type.shape.rend(); ++d)
    shape->add_dim()->set_dim_value(*d);
}

onnx::NodeProto& Exporter::node(const std::string& op_type, std::vector<std::string> inputs,
                                std::string out) {
  onnx::NodeProto* n = g_.add_node();
  n->set_op_type(op_type);
  for (auto& i : inputs) n->add_input(i);
  n->add_output(out.empty() ? fresh() : out);
  return *n;
}

std::string Exporter::constant(const Tensor& t) {
  onnx::NodeProto& n = node("Constant", {});
  auto* a = n.add_attribute();
  a->set_name("value");
  a->set_type(onnx::AttributeProto_AttributeType_TENSOR);
  *a->mutable_t() = tensor_proto(t, "");
  return n.output(0);
}

std::string Exporter::ints(const std::vector<int64_t>& v) {
  Tensor t(Type{DType::i64, {static_cast<int64_t>(v.size())}});
  std::copy(v.begin(), v.end(), t.data<int64_t>());
  return constant(t);
}

std::string Exporter::scalar(DType dtype, double v) {
  return constant(holding(dtype, {}, v));
}

void Exporter::export_op(const Op& op) {
  if (op.kind == OpKind::constant) {
    Tensor t = Tensor::of_bytes(type(op.outs[0]), op.value);
    return name(op.outs[0], constant(t));
  }
  ExportRule rule = export_table().rule(op.prim);
  if (!rule) refuse(fmt::format("{} has no ONNX form here", prim_name(op.prim)));
  const int first = g_.node_size();
  rule(*this, op);
  // A namesake node imports back as the primitive; any other form is marked with it, but
  // for a scan and a cond, whose Scan and If import back by their nodes' own rules as
  // they were. A while_loop's Loop imports with its counter and condition as two more
  // carries: its mark holds its regions.
  const bool own_rule = op.prim == Prim::scan || op.prim == Prim::cond;
  if (!namesake_of(op.prim).empty() || own_rule) return;
  onnx_marks::Mark m{op.prim, op.attrs, {}, {}, g_.node_size() - first, {}, op.regions};
  for (Var a : op.args) m.args.push_back(name(a));
  for (Var o : op.outs) m.outs.push_back(name(o));
  if (m.nodes < 1) internal_error("the export of {} wrote no node", prim_name(op.prim));
  m.digest = onnx_marks::group_digest(g_, first, m.nodes);
  g_.mutable_node(first)->set_doc_string(onnx_marks::mark_text(m));
}

void set_attr(onnx::NodeProto& n, const std::string& name, int64_t v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INT);
  a->set_i(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::vector<int64_t>& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_INTS);
  for (int64_t x : v) a->add_ints(x);
}

void set_attr(onnx::NodeProto& n, const std::string& name, const std::string& v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_STRING);
  a->set_s(v);
}

void set_attr(onnx::NodeProto& n, const std::string& name, float v) {
  auto* a = n.add_attribute();
  a->set_name(name);
  a->set_type(onnx::AttributeProto_AttributeType_FLOAT);
  a->set_f(v);
}

}  // namespace ytape::onnx_export
