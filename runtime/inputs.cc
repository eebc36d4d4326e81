#include "runtime/inputs.h"

#include <string>
#include <unordered_map>
#include <unordered_set>

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

TensorMap load_inputs(std::string_view content, std::string_view source, const Tape& t) {
  auto types = input_types(t);
  TensorMap inputs;
  if (source.ends_with(".json")) {
    inputs = read_tensor_json(content, source, [&](std::string_view name) -> const Type* {
      auto it = types.find(name);
      return it == types.end() ? nullptr : it->second;
    });
  } else {
    inputs = read_safetensors({reinterpret_cast<const uint8_t*>(content.data()), content.size()},
                              source);
  }
  for (const auto& [name, tensor] : inputs) {
    if (!types.contains(name))
      user_error("{}: '{}' is not an input of tape {}", source, name, t.name);
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
