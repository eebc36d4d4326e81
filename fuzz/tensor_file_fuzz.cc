// libFuzzer target: the tensor file readers (safetensors, numpy's .npy and .npz, JSON).
// Bad input must end in a UserError; anything else is a bug. What reads is written back
// and must read again the same.
#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/npy.h"
#include "runtime/tensor_file.h"
#include "tape/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ytape::TensorMap m = ytape::read_safetensors(std::span<const uint8_t>(data, size), "fuzz");
    (void)ytape::write_safetensors(m);
  } catch (const ytape::UserError&) {
  }
  std::span<const uint8_t> bytes(data, size);
  try {
    ytape::TensorMap m = ytape::read_npy(bytes, "fuzz.npy", "x");
    if (!ytape::same_bits(m[0].second,
                          ytape::read_npy(ytape::write_npy(m[0].second), "w", "x")[0].second)) {
      __builtin_trap();
    }
  } catch (const ytape::UserError&) {
  }
  try {
    ytape::TensorMap m = ytape::read_npz(bytes, "fuzz.npz");
    (void)ytape::read_npz(ytape::write_npz(m), "w.npz");
  } catch (const ytape::UserError&) {
  }
  try {
    (void)ytape::read_tensor_json(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.json");
  } catch (const ytape::UserError&) {
  }
  return 0;
}
