#include "train/data.h"

#include <cstring>
#include <numeric>

#include "runtime/random.h"
#include "tape/error.h"

namespace ytape {

const Tensor* DataSet::find(std::string_view name) const {
  for (const auto& [n, t] : tensors) {
    if (n == name) return &t;
  }
  return nullptr;
}

DataSet make_data_set(TensorMap tensors, std::string source) {
  if (tensors.empty()) user_error("{}: the data file holds no tensors", source);
  DataSet data{std::move(source), std::move(tensors), 0};
  const std::string* first = nullptr;
  for (const auto& [name, t] : data.tensors) {
    if (t.rank() == 0) {
      user_error("{}: tensor '{}' is a scalar; data tensors need a last dim that counts samples",
                 data.source, name);
    }
    int64_t n = t.shape().back();
    if (first == nullptr) {
      first = &name;
      data.samples = n;
    } else if (n != data.samples) {
      user_error(
          "{}: tensor '{}' ({}) has {} samples but '{}' has {}: the last dim counts samples and "
          "must be the same in every tensor",
          data.source, name, type_str(t.type()), n, *first, data.samples);
    }
  }
  if (data.samples == 0)
    user_error("{}: the data holds no samples (the last dims are 0)", data.source);
  return data;
}

uint64_t epoch_key(uint64_t seed, int64_t epoch) {
  return random_bits(random_bits(seed, 2), static_cast<uint64_t>(epoch));
}

uint64_t step_key(uint64_t seed, int64_t step) {
  uint64_t key = random_bits(random_bits(seed, 1), static_cast<uint64_t>(step));
  return key == 0 ? 1 : key;
}

std::vector<int64_t> epoch_order(int64_t n, uint64_t seed, int64_t epoch, bool shuffle) {
  std::vector<int64_t> order(static_cast<size_t>(n));
  std::iota(order.begin(), order.end(), int64_t{0});
  if (!shuffle) return order;
  uint64_t key = epoch_key(seed, epoch);
  // The modulo's bias is below n / 2^64: far below anything a training run can notice.
  for (int64_t i = n - 1; i > 0; --i) {
    auto j = random_bits(key, static_cast<uint64_t>(i)) % static_cast<uint64_t>(i + 1);
    std::swap(order[static_cast<size_t>(i)], order[j]);
  }
  return order;
}

Tensor gather_samples(const Tensor& data, std::span<const int64_t> indices) {
  Shape shape = data.shape();
  int64_t n = shape.back();
  shape.back() = static_cast<int64_t>(indices.size());
  Tensor out = Tensor::uninitialized(Type{data.dtype(), shape});
  int64_t sample_bytes = n == 0 ? 0 : data.bytes() / n;
  const auto* from = static_cast<const uint8_t*>(data.raw());
  auto* to = static_cast<uint8_t*>(out.raw());
  for (size_t k = 0; k < indices.size(); ++k) {
    if (indices[k] < 0 || indices[k] >= n) {
      internal_error("gather_samples: sample {} of {}", indices[k], n);
    }
    std::memcpy(to + static_cast<int64_t>(k) * sample_bytes, from + indices[k] * sample_bytes,
                static_cast<size_t>(sample_bytes));
  }
  return out;
}

}  // namespace ytape
