#include "train/binding.h"

#include <fmt/format.h>

#include <unordered_map>

#include "runtime/file_dtype.h"
#include "tape/error.h"

namespace ytape {

namespace {

// P for an output `out.P` or `P` where `is_input(P)`; "" when none.
template <typename IsInput>
std::string carried_name(std::string_view output, const IsInput& is_input) {
  if (output.starts_with("out.") && is_input(output.substr(4))) {
    return std::string(output.substr(4));
  }
  return is_input(output) ? std::string(output) : "";
}

std::string data_names(const DataSet& data) {
  std::string names;
  for (const auto& [name, t] : data.tensors) names += (names.empty() ? "" : ", ") + name;
  return names;
}

// The dims of a batch of B samples of `data`.
Type batch_type(const Tensor& data, int64_t batch) {
  Type type = data.type();
  type.shape.back() = batch;
  return type;
}

void check_data_input(const BoundInput& in, const Tensor& tensor, std::string_view source,
                      const DataSet& data) {
  const Type& want = in.type;
  // The dtype may differ: convert_data converts where every value fits (a U8 image).
  bool fits = want.rank() == tensor.rank() &&
              std::equal(want.shape.begin(), want.shape.end() - (want.rank() > 0 ? 1 : 0),
                         tensor.shape().begin());
  if (!fits) {
    int64_t b = want.rank() > 0 ? want.shape.back() : 1;
    user_error(
        "{}: input '{}' is {}, but a batch of {} samples of '{}' in {} ({}) is {}: the input must "
        "have the data's dims, with the batch size as its last dim",
        source, in.name, type_str(want), b, in.name, data.source, type_str(tensor.type()),
        type_str(batch_type(tensor, b)));
  }
}

// Marks the inputs named like data tensors and sets the batch size from their last dims.
void bind_data(const Tape& t, std::string_view source, const DataSet& data, Binding& b) {
  const BoundInput* first = nullptr;
  std::unordered_map<std::string_view, const Tensor*> tensors;  // the first of each name
  for (const auto& [name, tensor] : data.tensors) tensors.emplace(name, &tensor);
  const size_t num_inputs = t.num_inputs();  // counted on each call
  b.inputs.reserve(num_inputs);              // `first` points into it
  for (size_t i = 0; i < num_inputs; ++i) {
    const Op& op = t.ops[i];
    b.inputs.push_back({op.name, t.type(op.outs[0]), InputRole::fixed, 0});
    BoundInput& in = b.inputs.back();
    auto found = tensors.find(op.name);
    if (found == tensors.end()) continue;
    const Tensor* tensor = found->second;
    in.role = InputRole::data;
    check_data_input(in, *tensor, source, data);
    int64_t batch = in.type.shape.back();
    if (first == nullptr) {
      first = &in;
      b.batch = batch;
    } else if (batch != b.batch) {
      user_error(
          "{}: data inputs disagree on the batch size: '{}' is {} ({} samples), '{}' is {} ({}); "
          "trace every data input with the same last dim",
          source, first->name, type_str(first->type), b.batch, in.name, type_str(in.type), batch);
    }
  }
  if (first == nullptr) {
    user_error(
        "{}: no input is named like a tensor of {} ({}): inputs named after a data tensor take "
        "its batches",
        source, data.source, data_names(data));
  }
  if (b.batch == 0 || b.batch > data.samples) {
    user_error("{}: the batch size of '{}' is {}, but {} holds {} samples", source, first->name,
               b.batch, data.source, data.samples);
  }
}

void bind_carries(const Tape& t, std::string_view source, Binding& b) {
  std::unordered_map<std::string_view, size_t> index;
  for (size_t i = 0; i < b.inputs.size(); ++i) index.emplace(b.inputs[i].name, i);
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    const Output& out = t.outputs[o];
    std::string name =
        carried_name(out.name, [&](std::string_view n) { return index.contains(n); });
    if (name.empty()) continue;
    BoundInput& in = b.inputs[index.at(name)];
    if (in.role == InputRole::data) {
      user_error(
          "{}: output '{}' would carry to input '{}', which takes batches of the data; "
          "rename the output",
          source, out.name, name);
    }
    if (in.role == InputRole::carried) {
      user_error("{}: outputs '{}' and '{}' both carry to input '{}'; keep one of them", source,
                 t.outputs[in.output].name, out.name, name);
    }
    if (t.type(out.var) != in.type) {
      user_error("{}: output '{}' is {} but the input '{}' it carries to is {}", source, out.name,
                 type_str(t.type(out.var)), name, type_str(in.type));
    }
    in.role = InputRole::carried;
    in.output = o;
  }
}

void find_loss(const Tape& t, std::string_view source, Binding& b) {
  std::vector<bool> carries(t.outputs.size(), false);
  for (const BoundInput& in : b.inputs) {
    if (in.role == InputRole::carried) carries[in.output] = true;
  }
  for (std::string_view name : {"out.loss", "loss"}) {
    for (size_t o = 0; o < t.outputs.size(); ++o) {
      if (t.outputs[o].name != name || carries[o]) continue;
      if (!is_float_scalar(t.type(t.outputs[o].var))) {
        user_error("{}: output '{}' is {}, but the loss must be a float scalar (f32[] or f64[])",
                   source, name, type_str(t.type(t.outputs[o].var)));
      }
      b.loss = o;
      return;
    }
  }
  for (size_t o = 0; o < t.outputs.size(); ++o) {
    if (!carries[o] && is_float_scalar(t.type(t.outputs[o].var))) {
      b.loss = o;
      return;
    }
  }
}

}  // namespace

bool is_float_scalar(const Type& type) {
  return type.rank() == 0 && (type.dtype == DType::f32 || type.dtype == DType::f64);
}

std::string carried_input_name(const Tape& t, std::string_view output) {
  return carried_name(output, [&t](std::string_view name) {
    for (size_t i = 0, n = t.num_inputs(); i < n; ++i) {
      if (t.ops[i].name == name) return true;
    }
    return false;
  });
}

std::vector<std::pair<uint32_t, uint32_t>> carry_pairs(const Tape& t, std::string_view source) {
  Binding b;
  for (size_t i = 0, n = t.num_inputs(); i < n; ++i) {
    b.inputs.push_back({t.ops[i].name, t.type(t.ops[i].outs[0])});
  }
  bind_carries(t, source, b);
  std::vector<std::pair<uint32_t, uint32_t>> pairs;
  for (size_t i = 0; i < b.inputs.size(); ++i) {
    if (b.inputs[i].role == InputRole::carried) {
      pairs.emplace_back(static_cast<uint32_t>(b.inputs[i].output), static_cast<uint32_t>(i));
    }
  }
  if (pairs.empty()) {
    user_error(
        "{}: no output carries into an input (--carry): name the output that replaces "
        "input P 'out.P' or 'P' (docs/training.md)",
        source);
  }
  return pairs;
}

void convert_data(const Binding& b, DataSet& data) {
  for (const BoundInput& in : b.inputs) {
    if (in.role != InputRole::data) continue;
    for (auto& [name, tensor] : data.tensors) {
      if (name == in.name && tensor.dtype() != in.type.dtype) {
        tensor =
            convert_exact(tensor, in.type.dtype, fmt::format("{}: tensor '{}'", data.source, name));
      }
    }
  }
}

Binding bind_step(const Tape& t, std::string_view source, const DataSet& data) {
  Binding b;
  bind_data(t, source, data, b);
  bind_carries(t, source, b);
  find_loss(t, source, b);
  return b;
}

Binding bind_eval(const Tape& t, std::string_view source, const DataSet& data) {
  Binding b;
  bind_data(t, source, data, b);
  return b;
}

}  // namespace ytape
