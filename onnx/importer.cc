#include "onnx/importer.h"

#include <algorithm>
#include <cmath>
#include <cstring>

#include "onnx/proto.h"
#include "runtime/eval.h"
#include "runtime/random.h"
#include "tape/attrs.h"
#include "tape/checked.h"
#include "tape/infer.h"

namespace ytape::onnx_import {

namespace {

// Folding stops at results this large, which then stay ops (a ConstantOfShape of an image's
// size is better as a `fill` than as a literal in the tape's JSON).
constexpr int64_t kFoldMaxElements = int64_t{1} << 16;

std::vector<uint8_t> bytes_of(const Tensor& t) {
  const auto* p = static_cast<const uint8_t*>(t.raw());
  return {p, p + t.bytes()};
}

}  // namespace

int ydim(int64_t axis, int rank) {
  int64_t a = axis < 0 ? axis + rank : axis;
  if (a < 0 || a >= rank) user_error("axis {} is out of range for rank {}", axis, rank);
  return static_cast<int>(rank - a);
}

Shape reversed(const Shape& s) {
  return Shape(s.rbegin(), s.rend());
}

int64_t listed(int64_t n, std::string_view what) {
  checked::count(n, what);
  if (n > kMaxListed)
    user_error("{}: {} elements, more than the 2^22 that ytape computes at import", what, n);
  return n;
}

namespace {

[[noreturn]] void past_computed(int64_t n, std::string_view what) {
  user_error(
      "{}: {} elements, which with the constants computed before them pass the 2^24 that "
      "ytape computes at import for a whole model",
      what, n);
}

}  // namespace

Tensor Importer::listed_tensor(const Type& type, std::string_view what) const {
  check_computed(listed(checked::elements(type.shape, what), what), what);
  return Tensor(type);
}

void Importer::check_computed(int64_t n, std::string_view what) const {
  if (n > kMaxComputed - computed_) past_computed(n, what);
}

bool Importer::has_input(const Node& node, int i) const {
  return i < node.input_size() && !node.input(i).empty();
}

Var Importer::input(const Node& node, int i) const {
  if (!has_input(node, i)) user_error("input {} is missing", i + 1);
  return lookup(node.input(i));
}

Var Importer::lookup(const std::string& name) const {
  auto it = values_.find(name);
  if (it != values_.end()) return it->second;
  auto list = lists_.find(name);
  if (list != lists_.end()) user_error("'{}' is {}, not a tensor", name, list->second.kind_name());
  if (outer_ != nullptr && outer_->defined(name)) return capture(name);
  user_error("'{}' is not defined before its use", name);
}

Var Importer::capture(const std::string& name) const {
  Var outer = outer_->lookup(name);
  // A small value known at import stays known inside (a shape, an axis, a constant the
  // region's rules need static); any other is a parameter of the region.
  constexpr int64_t kInlined = 4096;
  const Tensor* t = outer_->known(outer);
  Var v;
  if (t != nullptr && t->size() <= kInlined) {
    check_ops();
    v = b_.constant(t->type(), bytes_of(*t));
    known_[v.id] = *t;
  } else {
    v = b_.capture(name, outer_->type(outer));
    captures_.emplace_back(v, outer);
  }
  values_[name] = v;
  return v;
}

bool Importer::defined(const std::string& name) const {
  return values_.count(name) != 0 || lists_.count(name) != 0 ||
         (outer_ != nullptr && outer_->defined(name));
}

void Importer::define(const std::string& name, Var v) {
  lists_.erase(name);
  values_[name] = v;
}

Value Value::optional(const std::optional<Value>& v, bool of_sequence) {
  if (!v) return {Kind::optional, false, of_sequence, {}};
  if (v->kind == Kind::optional) user_error("an optional cannot hold an optional");
  return {Kind::optional, true, v->kind == Kind::sequence, v->tensors};
}

std::optional<Value> Value::content() const {
  if (kind != Kind::optional) return *this;
  if (!present) return std::nullopt;
  return of_sequence ? sequence(tensors) : tensor(tensors.at(0));
}

const char* Value::kind_name() const {
  switch (kind) {
    case Kind::tensor:
      return "a tensor";
    case Kind::sequence:
      return "a sequence";
    case Kind::optional:
      return "an optional";
  }
  return "?";
}

void Importer::define_value(const std::string& name, Value v) {
  if (v.kind == Value::Kind::tensor) return define(name, v.tensors.at(0));
  values_.erase(name);
  lists_[name] = std::move(v);
}

Value Importer::value(const std::string& name) const {
  auto list = lists_.find(name);
  return list != lists_.end() ? list->second : Value::tensor(lookup(name));
}

Value Importer::value_input(const Node& node, int i) const {
  if (!has_input(node, i)) user_error("input {} is missing", i + 1);
  return value(node.input(i));
}

std::vector<Var> Importer::sequence_input(const Node& node, int i) const {
  Value v = value_input(node, i);
  std::optional<Value> content = v.content();
  if (!content || content->kind != Value::Kind::sequence) {
    user_error("input {} '{}' is {}, not a sequence", i + 1, node.input(i),
               content ? content->kind_name() : "an optional that is none");
  }
  return content->tensors;
}

void Importer::set_output_value(const Node& node, int i, Value v) {
  if (i < node.output_size() && !node.output(i).empty()) define_value(node.output(i), std::move(v));
}

Var Importer::stack(const std::vector<Var>& parts, int dim) {
  std::vector<Var> columns;
  for (Var p : parts) {
    Shape s = type(p).shape;
    s.insert(s.begin() + (dim - 1), 1);
    columns.push_back(reshape(p, s));
  }
  return columns.size() == 1 ? columns[0] : op<Prim::concat>(columns, {.dim = dim});
}

int32_t Importer::narrow_type(const std::string& name) const {
  auto it = narrow_types_.find(name);
  return it == narrow_types_.end() ? 0 : it->second;
}

void Importer::set_narrow_type(const std::string& name, int32_t elem_type) {
  if (elem_type != onnx::TensorProto_DataType_INT64 && to_dtype(elem_type, true) == DType::i64)
    narrow_types_[name] = elem_type;
}

const Tensor* Importer::known(Var v) const {
  auto it = known_.find(v.id);
  return it == known_.end() ? nullptr : &it->second;
}

Tensor Importer::static_input(const Node& node, int i) const {
  const Tensor* t = known(input(node, i));
  if (!t) {
    throw UnsupportedError(
        fmt::format(
            "input {} '{}' must be static: a constant or initializer, or computed from them", i + 1,
            node.input(i)),
        node.input(i));
  }
  return *t;
}

std::vector<int64_t> Importer::static_ints(const Node& node, int i) const {
  Tensor t = static_input(node, i);
  if (t.dtype() != DType::i64)
    user_error("input {} must be integers, not {}", i + 1, dtype_name(t.dtype()));
  std::span<const int64_t> v = t.span<const int64_t>();
  return {v.begin(), v.end()};
}

double Importer::static_number(const Node& node, int i) const {
  Tensor t = static_input(node, i);
  if (t.size() != 1) user_error("input {} has {} elements, not 1", i + 1, t.size());
  return element_value(t, 0);
}

int64_t Importer::static_integer(const Node& node, int i) const {
  Tensor t = static_input(node, i);
  if (t.size() != 1) user_error("input {} has {} elements, not 1", i + 1, t.size());
  if (t.dtype() == DType::i64) return t.data<int64_t>()[0];
  double v = element_value(t, 0);
  // 2^63 is the first double past int64; a cast of it or of NaN would be undefined.
  if (!(v >= -9223372036854775808.0 && v < 9223372036854775808.0) || v != std::trunc(v))
    user_error("input {} is {}, not an integer", i + 1, v);
  return static_cast<int64_t>(v);
}

std::optional<std::vector<int64_t>> Importer::ints_input_or_attr(const Node& node, int i,
                                                                 std::string_view attr) const {
  if (has_input(node, i)) return static_ints(node, i);
  if (find_attr(node, attr)) return attr_ints(node, attr);
  return std::nullopt;
}

void Importer::set_output(const Node& node, int i, Var v) {
  if (i < node.output_size() && !node.output(i).empty()) define(node.output(i), v);
}

std::vector<Var> Importer::emit_all(Prim p, VarList args, const Attrs& attrs) {
  std::vector<Tensor> values;
  bool all_known = true;
  for (Var a : args) {
    const Tensor* t = known(a);
    all_known = all_known && t != nullptr;
    if (t) values.push_back(*t);
  }
  if (all_known && !own_ && !prim_info(p).effectful()) {
    try {
      // Only small results fold (shapes, axes, indices), and their size is known before
      // they are computed: a model's iota may be of any size.
      std::vector<Type> types;
      for (const Tensor& t : values) types.push_back(t.type());
      std::vector<Type> out_types = infer_types(p, types, normalize_attrs(p, attrs));
      int64_t elements = 0;
      for (const Type& t : out_types) elements += t.size();
      // Each result is small, and all of them leave room in the model's budget.
      bool small = std::all_of(out_types.begin(), out_types.end(),
                               [](const Type& t) { return t.size() <= kFoldMaxElements; }) &&
                   elements <= kMaxComputed - computed_;
      if (small) {
        std::vector<Var> vars;
        for (const Tensor& t : evaluate(p, values, attrs)) vars.push_back(constant(t));
        return vars;
      }
    } catch (const UserError&) {
      // Left to fail at run time, as the op would (an index out of range), unless the
      // builder below refuses it for its types.
    }
  }
  check_ops();
  return b_.call(p, std::move(args), attrs);
}

Var Importer::emit(Prim p, VarList args, const Attrs& attrs) {
  std::vector<Var> outs = emit_all(p, std::move(args), attrs);
  if (outs.size() != 1) internal_error("emit: {} has {} outputs", prim_name(p), outs.size());
  return outs[0];
}

void Importer::count_iteration(std::string_view op) {
  constexpr int64_t kMaxIterations = 4096;
  if (++iterations_ > kMaxIterations) {
    unsupported(fmt::format("a {} unrolled beyond {} iterations in all", op, kMaxIterations));
  }
}

// The tracer's convention (a draw of a counter-based stream, halved to stay non-negative),
// with the stream keyed by ONNX's seed, a float: its bits, set apart from "no seed".
int64_t Importer::random_seed(const Node& node) {
  uint64_t key = 0;
  if (const onnx::AttributeProto* a = find_attr(node, "seed")) {
    float seed = a->f();
    uint32_t bits = 0;
    std::memcpy(&bits, &seed, sizeof bits);
    key = (uint64_t{1} << 32) | bits;
  }
  return static_cast<int64_t>(random_bits(key, random_ops_++) >> 1);
}

Var Importer::constant(const Tensor& t) {
  if (t.size() > kMaxComputed - computed_) past_computed(t.size(), "a constant");
  computed_ += t.size();
  return given(t);
}

void Importer::check_ops() const {
  if (static_cast<int64_t>(b_.tape().ops.size()) >= kMaxOps) {
    unsupported(fmt::format(
        "a tape of more than {} ops (the bodies of Loop and Scan, unrolled, count once per "
        "iteration)",
        kMaxOps));
  }
}

Var Importer::given(const Tensor& t) {
  check_ops();
  Var v = b_.constant(t.type(), bytes_of(t));
  known_[v.id] = t;
  return v;
}

Var Importer::given(const void* source, const std::function<Tensor()>& make) {
  auto it = given_.find(source);
  if (it != given_.end()) return it->second;
  Var v = given(make());
  given_.emplace(source, v);
  return v;
}

Var Importer::scalar(DType dtype, double value) {
  if (computed_ == kMaxComputed) past_computed(1, "a constant");
  ++computed_;
  check_ops();
  Var v = b_.constant(dtype, value);
  Tensor t(Type{dtype, {}});
  std::memcpy(t.raw(), b_.tape().ops.back().value.data(), t.bytes());
  known_[v.id] = t;
  return v;
}

Var Importer::ints(const std::vector<int64_t>& values) {
  Tensor t(Type{DType::i64, {static_cast<int64_t>(values.size())}});
  std::copy(values.begin(), values.end(), t.data<int64_t>());
  return constant(t);
}

Var Importer::reshape(Var x, const Shape& shape) {
  if (type(x).shape == shape) return x;
  return op<Prim::reshape>({x}, {.shape = shape});
}

Var Importer::take(Var x, int dim, const std::vector<int64_t>& indices) {
  Shape shape(rank(x), 1);
  shape[dim - 1] = static_cast<int64_t>(indices.size());
  Tensor idx = listed_tensor(Type{DType::i64, shape}, "the positions gathered");
  for (size_t i = 0; i < indices.size(); ++i) idx.data<int64_t>()[i] = indices[i] + 1;
  return op<Prim::gather>({x, constant(idx)}, {.dim = dim});
}

Var Importer::slice(Var x, int dim, int64_t from, int64_t count, int64_t step) {
  Shape s = type(x).shape;
  std::vector<int64_t> start(s.size(), 1), stop(s), steps(s.size(), 1);
  start[dim - 1] = from + 1, stop[dim - 1] = from + (count - 1) * step + 1, steps[dim - 1] = step;
  if (count == 0) stop[dim - 1] = from;
  return op<Prim::slice>({x}, {.start = start, .stop = stop, .step = steps});
}

Var Importer::pad(Var x, int dim, int64_t lo, int64_t hi, double value) {
  std::vector<int64_t> los(rank(x), 0), his(rank(x), 0), none(rank(x), 0);
  los[dim - 1] = lo, his[dim - 1] = hi;
  return op<Prim::pad>({x}, {.lo = los, .hi = his, .interior = none, .value = value});
}

const onnx::AttributeProto* find_attr(const Node& node, std::string_view name) {
  for (const onnx::AttributeProto& a : node.attribute()) {
    if (a.name() == name) return &a;
  }
  return nullptr;
}

const onnx::GraphProto& graph_attr(const Node& node, std::string_view name) {
  const onnx::AttributeProto* a = find_attr(node, name);
  if (!a || !a->has_g()) user_error("the graph attribute {} is missing", name);
  return a->g();
}

int64_t attr_int(const Node& node, std::string_view name, int64_t fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a ? a->i() : fallback;
}

// ONNX's float attributes are f32: 1e-5 arrives as 9.99999974737875e-06. Its shortest
// decimal form, read as a double, is the value the model meant (1e-05).
double attr_float(const Node& node, std::string_view name, double fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a ? std::stod(float32_str(a->f())) : fallback;
}

std::string attr_string(const Node& node, std::string_view name, std::string fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  return a ? a->s() : fallback;
}

std::vector<int64_t> attr_ints(const Node& node, std::string_view name,
                               std::vector<int64_t> fallback) {
  const onnx::AttributeProto* a = find_attr(node, name);
  if (!a) return fallback;
  return {a->ints().begin(), a->ints().end()};
}

void unsupported(const std::string& what) {
  throw UnsupportedError(what + " is not supported");
}

const Rules& all_rules() {
  static const Rules rules = [] {
    Rules r;
    add_elementwise_rules(r);
    add_reduce_rules(r);
    add_shape_rules(r);
    add_slice_rules(r);
    add_index_rules(r);
    add_linalg_rules(r);
    add_conv_rules(r);
    add_pool_rules(r);
    add_norm_rules(r);
    add_loss_rules(r);
    add_resize_rules(r);
    add_recurrent_rules(r);
    add_control_rules(r);
    add_sequence_rules(r);
    add_quantize_rules(r);
    add_sample_rules(r);
    add_roi_rules(r);
    add_text_rules(r);
    add_spectral_rules(r);
    add_creation_rules(r);
    add_random_rules(r);
    add_namesake_rules(r);
    return r;
  }();
  return rules;
}

const Rules& training_rules() {
  static const Rules rules = [] {
    Rules r;
    add_training_rules(r);
    return r;
  }();
  return rules;
}

}  // namespace ytape::onnx_import
