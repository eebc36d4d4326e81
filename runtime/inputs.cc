#include "runtime/inputs.h"

#include <fmt/format.h>

#include <string>
#include <unordered_map>
#include <unordered_set>

#include "runtime/file_dtype.h"
#include "runtime/npy.h"
#include "runtime/random.h"
#include "runtime/tensor_file.h"
#include "tape/float16.h"

namespace ytape {

namespace {

std::unordered_map<std::string_view, const Type*> input_types(const Tape& t) {
  std::unordered_map<std::string_view, const Type*> types;
  for (size_t i = 0, n = t.num_inputs(); i < n; ++i)
    types.emplace(t.ops[i].name, &t.type(t.ops[i].outs[0]));
  return types;
}

uint64_t name_hash(std::string_view name) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a: stable across platforms and runs
  for (unsigned char c : name) h = (h ^ c) * 1099511628211ull;
  return h;
}

}  // namespace

TensorMap read_tensor_file(std::span<const uint8_t> bytes, std::string_view source) {
  if (source.ends_with(".npz")) return read_npz(bytes, source);
  if (source.ends_with(".npy")) {  // one array, named as the file: w.npy is 'w'
    std::string_view stem = source.substr(source.rfind('/') + 1);
    return read_npy(bytes, source, stem.substr(0, stem.size() - 4));
  }
  return read_safetensors(bytes, source);
}

TensorMap load_inputs(std::string_view content, std::string_view source, const Tape& t,
                      bool skip_extra) {
  auto types = input_types(t);
  TensorMap inputs;
  if (source.ends_with(".json")) {
    inputs = read_tensor_json(content, source, [&](std::string_view name) -> const Type* {
      auto it = types.find(name);
      return it == types.end() ? nullptr : it->second;
    });
  } else {
    inputs = read_tensor_file({reinterpret_cast<const uint8_t*>(content.data()), content.size()},
                              source);
  }
  if (skip_extra) std::erase_if(inputs, [&](const auto& in) { return !types.contains(in.first); });
  for (auto& [name, tensor] : inputs) {
    auto it = types.find(name);
    if (it == types.end()) {
      user_error(
          "{}: '{}' is not an input of tape {} (--skip-extra leaves out the tensors a "
          "tape does not read)",
          source, name, t.name);
    }
    // A file's dtype need not be the tape's: U8 pixels feed an f32 input, I32 token ids an
    // i64 one, where every value converts exactly.
    if (tensor.dtype() != it->second->dtype && tensor.shape() == it->second->shape) {
      tensor =
          convert_exact(tensor, it->second->dtype, fmt::format("{}: tensor '{}'", source, name));
    }
  }
  return inputs;
}

TensorMap complete_inputs(const Tape& t, TensorMap given, uint64_t seed) {
  // Copies of the names: views into `given` would dangle once `out` grows (short names
  // live inside the strings, which move when the vector reallocates).
  std::unordered_set<std::string> have;
  for (const auto& [name, tensor] : given) have.insert(name);
  TensorMap out = std::move(given);
  for (size_t i = 0, n = t.num_inputs(); i < n; ++i) {
    const Op& op = t.ops[i];
    if (have.contains(op.name)) continue;
    Tensor x = Tensor::uninitialized(t.type(op.outs[0]));
    uint64_t stream = seed ^ name_hash(op.name);
    for (int64_t k = 0; k < x.size(); ++k) {
      switch (x.dtype()) {
        case DType::f32:
          x.data<float>()[k] = 2 * uniform_f32(stream, k) - 1;
          break;
        case DType::f64:
          x.data<double>()[k] = 2 * uniform_f64(stream, k) - 1;
          break;
        case DType::i64:
          x.data<int64_t>()[k] = 1;
          break;
        case DType::boolean:
          x.data<bool>()[k] = true;
          break;
        case DType::f16:
          x.data<uint16_t>()[k] = f16_from_double(2 * uniform_f32(stream, k) - 1);
          break;
      }
    }
    out.emplace_back(op.name, std::move(x));
  }
  return out;
}

}  // namespace ytape
