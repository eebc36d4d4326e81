#include "train/checkpoint.h"

#include <fmt/format.h>

#include <charconv>

#include "runtime/tensor_file.h"
#include "tape/error.h"

namespace ytape {

namespace {

constexpr std::string_view kFormat = "ytape-train-checkpoint-2";
// Format 1 lacked the step tape's digest; such checkpoints still resume, unchecked for it.
constexpr std::string_view kFormat1 = "ytape-train-checkpoint-1";

const std::string& entry(const TensorFileMetadata& metadata, std::string_view key,
                         std::string_view source) {
  for (const auto& [k, v] : metadata) {
    if (k == key) return v;
  }
  user_error("{}: the checkpoint's metadata has no '{}'", source, key);
}

template <typename T>
T number(const TensorFileMetadata& metadata, std::string_view key, std::string_view source) {
  const std::string& text = entry(metadata, key, source);
  T value{};
  auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) {
    user_error("{}: the checkpoint's metadata '{}' is '{}', not a number", source, key, text);
  }
  return value;
}

bool boolean(const TensorFileMetadata& metadata, std::string_view key, std::string_view source) {
  const std::string& text = entry(metadata, key, source);
  if (text != "true" && text != "false") {
    user_error("{}: the checkpoint's metadata '{}' is '{}', not true or false", source, key, text);
  }
  return text == "true";
}

}  // namespace

std::vector<uint8_t> write_checkpoint(const Checkpoint& c) {
  TensorFileMetadata metadata = {
      {"format", std::string(kFormat)},
      {"step_tape", c.run.tape},
      {"epoch", fmt::format("{}", c.position.epoch)},
      {"step", fmt::format("{}", c.position.step)},
      {"global_step", fmt::format("{}", c.position.global_step)},
      {"loss_sum", fmt::format("{}", c.position.loss_sum)},
      {"seed", fmt::format("{}", c.run.seed)},
      {"shuffle", c.run.shuffle ? "true" : "false"},
      {"batch_size", fmt::format("{}", c.run.batch)},
      {"samples", fmt::format("{}", c.run.samples)},
  };
  if (c.run.last > 0) metadata.emplace_back("last_batch", fmt::format("{}", c.run.last));
  return write_safetensors(c.state, metadata);
}

Checkpoint read_checkpoint(std::span<const uint8_t> bytes, std::string_view source) {
  Checkpoint c;
  TensorFileMetadata metadata;
  c.state = read_safetensors(bytes, source, &metadata);
  bool has_format = false;
  for (const auto& [k, v] : metadata) has_format = has_format || k == "format";
  if (!has_format) {
    user_error("{}: not a training checkpoint of ytape train (its metadata has no 'format')",
               source);
  }
  const std::string& format = entry(metadata, "format", source);
  if (format != kFormat && format != kFormat1) {
    user_error("{}: checkpoint format '{}' is not the '{}' this ytape reads", source, format,
               kFormat);
  }
  if (format == kFormat) c.run.tape = entry(metadata, "step_tape", source);
  c.position.epoch = number<int64_t>(metadata, "epoch", source);
  c.position.step = number<int64_t>(metadata, "step", source);
  c.position.global_step = number<int64_t>(metadata, "global_step", source);
  c.position.loss_sum = number<double>(metadata, "loss_sum", source);
  c.run.seed = number<uint64_t>(metadata, "seed", source);
  c.run.shuffle = boolean(metadata, "shuffle", source);
  c.run.batch = number<int64_t>(metadata, "batch_size", source);
  c.run.samples = number<int64_t>(metadata, "samples", source);
  for (const auto& [k, v] : metadata) {
    if (k == "last_batch") c.run.last = number<int64_t>(metadata, "last_batch", source);
  }
  if (c.position.epoch < 1 || c.position.step < 0 || c.position.global_step < 0) {
    user_error("{}: the checkpoint's position (epoch {}, step {}, global step {}) is invalid",
               source, c.position.epoch, c.position.step, c.position.global_step);
  }
  if (c.run.batch < 1 || c.run.samples < 1 || c.run.last < 0) {
    user_error("{}: the checkpoint's batch size {}, sample count {} or last batch {} is invalid",
               source, c.run.batch, c.run.samples, c.run.last);
  }
  return c;
}

}  // namespace ytape
