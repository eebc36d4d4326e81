#include "onnx/graph_io.h"

#include <algorithm>

#include "onnx/proto.h"
#include "onnx/rules/integer.h"

namespace ytape::onnx_import {

namespace {

// A sequence's tensor k (1-based) as an input or output of the tape.
std::string element_name(const std::string& name, size_t k) {
  return fmt::format("{}[{}]", name, k);
}

DType declared_dtype(const onnx::TypeProto_Tensor& t) {
  std::optional<DType> dtype = to_dtype(t.elem_type(), true);
  if (!dtype) {
    throw UnsupportedError(
        fmt::format("element type {} is not one of ytape's (f32, f64, f16, i64, bool)",
                    onnx_dtype_name(t.elem_type())));
  }
  return *dtype;
}

// What a sequence or optional input's type declares: a sequence, an optional tensor or an
// optional sequence, and its tensors' type.
struct Declared {
  bool optional = false, of_sequence = false;
  const onnx::TypeProto_Tensor* element = nullptr;
};

Declared declared_structure(const onnx::TypeProto& t) {
  Declared d;
  d.optional = t.has_optional_type();
  const onnx::TypeProto& inner = d.optional ? t.optional_type().elem_type() : t;
  if (inner.has_sequence_type()) {
    d.of_sequence = true;
    const onnx::TypeProto& e = inner.sequence_type().elem_type();
    if (e.has_tensor_type()) d.element = &e.tensor_type();
  } else if (d.optional && inner.has_tensor_type()) {
    d.element = &inner.tensor_type();
  }
  if (!d.element) unsupported("a sequence or optional of other than tensors");
  return d;
}

// The type of tensor `k` (0-based) of a sequence or optional input: of the option's shape,
// which must agree with the model's element type, or of that type's, when it declares one.
Type element_input_type(const onnx::TypeProto_Tensor& t, const std::string& name,
                        const OnnxSequenceInput& s, size_t k,
                        const std::map<std::string, int64_t>& dims) {
  DType dtype = declared_dtype(t);
  if (s.shapes.empty()) {
    if (!t.has_shape()) {
      user_error(
          "the model does not declare the shape of its tensors: give each one's, as in "
          "ytape import --length '{}=[2,3],[4]' (ONNX's order)",
          name);
    }
    return declared_type(t, dims);
  }
  std::string problem = shape_problem(s.shapes[k]);
  if (!problem.empty()) user_error("tensor {}: {}", k + 1, problem);
  Shape given = reversed(s.shapes[k]);  // ONNX's order, as declared
  bool agrees = !t.has_shape() || static_cast<int>(given.size()) == t.shape().dim_size();
  for (int i = 0; agrees && t.has_shape() && i < t.shape().dim_size(); ++i) {
    const onnx::TensorShapeProto_Dimension& d = t.shape().dim(i);
    agrees = !d.has_dim_value() || d.dim_value() == given[i];
  }
  if (!agrees) {
    user_error("tensor {} is given the shape {}, which the model's does not allow", k + 1,
               shape_str(given));
  }
  return Type{dtype, s.shapes[k]};
}

// The options' structure for input `name`, checked against its declared structure `d`.
const OnnxSequenceInput& given_structure(const std::string& name, const Declared& d,
                                         const OnnxImportOptions& options) {
  auto given = options.sequences.find(name);
  if (given == options.sequences.end()) {
    if (d.optional) {
      user_error(
          "an optional, whose presence the model leaves open; a tape's structure is static: "
          "give it (ytape import --length {}=none, or ={} when it holds a value)",
          name, d.of_sequence ? "N" : "1");
    }
    user_error(
        "a sequence, whose length the model leaves open; a tape's structure is static: give "
        "it (ytape import --length {}=N)",
        name);
  }
  const OnnxSequenceInput& s = given->second;
  if (!s.present && !d.optional) user_error("a sequence is never none: give its length");
  if (s.length < 0 || s.length > kMaxSequence) {
    user_error("a length of {}; give one from 0 to {}", s.length, kMaxSequence);
  }
  if (s.present && d.optional && !d.of_sequence && s.length != 1)
    user_error("an optional tensor holds 1 tensor, not {}", s.length);
  size_t count = s.present ? static_cast<size_t>(s.length) : 0;
  if (!s.shapes.empty() && s.shapes.size() != count)
    user_error("{} shapes given for {} tensors", s.shapes.size(), count);
  return s;
}

}  // namespace

Type declared_type(const onnx::TypeProto_Tensor& t, const std::map<std::string, int64_t>& dims) {
  DType dtype = declared_dtype(t);
  Shape shape;
  for (const onnx::TensorShapeProto_Dimension& d : t.shape().dim()) {
    if (d.has_dim_value()) {
      shape.push_back(d.dim_value());
    } else if (!d.dim_param().empty()) {
      auto size = dims.find(d.dim_param());
      if (size == dims.end()) {
        user_error(
            "dimension '{}' has no fixed size; a tape's shapes are static: give it one "
            "(ytape import --dim {}=N)",
            d.dim_param(), d.dim_param());
      }
      shape.push_back(size->second);
    } else {
      user_error(
          "dimension {} has no size, fixed or named; a tape's shapes are static, so "
          "export the model with fixed sizes",
          shape.size() + 1);
    }
  }
  // Checked here, where the message is about the model's input and not the tape's.
  if (std::string why = shape_problem(shape); !why.empty()) user_error("{}", why);
  return Type{dtype, reversed(shape)};
}

bool is_sequence_or_optional(const onnx::TypeProto& t) {
  return t.has_sequence_type() || t.has_optional_type();
}

void define_sequence_input(Importer& im, const onnx::ValueInfoProto& v,
                           const OnnxImportOptions& options) {
  Declared d = declared_structure(v.type());
  const OnnxSequenceInput& s = given_structure(v.name(), d, options);
  std::vector<Var> tensors;
  for (size_t k = 0; s.present && k < static_cast<size_t>(s.length); ++k) {
    Type type = element_input_type(*d.element, v.name(), s, k, options.dims);
    std::string name = d.of_sequence ? element_name(v.name(), k + 1) : v.name();
    tensors.push_back(im.builder().input(name, type));
  }
  std::optional<Value> content;
  if (s.present) content = d.of_sequence ? Value::sequence(tensors) : Value::tensor(tensors[0]);
  im.define_value(v.name(), d.optional ? Value::optional(content, d.of_sequence) : *content);
}

void check_sequence_options(const onnx::GraphProto& g, const OnnxImportOptions& options) {
  for (const auto& entry : options.sequences) {
    const std::string& name = entry.first;  // not a structured binding: Clang 14 captures none
    bool found = std::any_of(g.input().begin(), g.input().end(), [&](const auto& v) {
      return v.name() == name && is_sequence_or_optional(v.type());
    });
    if (!found) {
      user_error("--length {}: the model has no sequence or optional input of that name", name);
    }
  }
}

std::vector<std::pair<std::string, Var>> output_tensors(Importer& im,
                                                        const onnx::ValueInfoProto& out) {
  std::optional<Value> content = im.value(out.name()).content();
  if (!content) return {};
  // The declared element type, through sequences and optionals.
  const onnx::TypeProto* t = &out.type();
  while (t->has_optional_type() || t->has_sequence_type())
    t = t->has_optional_type() ? &t->optional_type().elem_type() : &t->sequence_type().elem_type();
  int32_t elem_type = t->has_tensor_type() ? t->tensor_type().elem_type() : 0;
  std::vector<std::pair<std::string, Var>> outs;
  for (size_t k = 0; k < content->tensors.size(); ++k) {
    Var x = content->tensors[k];
    if (im.type(x).dtype == DType::i64) x = wrap_integer(im, x, elem_type);
    bool element = content->kind == Value::Kind::sequence;
    outs.emplace_back(element ? element_name(out.name(), k + 1) : out.name(), x);
  }
  return outs;
}

}  // namespace ytape::onnx_import
