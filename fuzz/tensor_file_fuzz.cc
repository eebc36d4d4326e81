// libFuzzer target: the tensor file readers (safetensors and JSON). Bad input must end in
// a UserError; anything else is a bug.
#include <cstdint>
#include <span>
#include <string_view>

#include "runtime/tensor_file.h"
#include "tape/error.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  try {
    ytape::TensorMap m = ytape::read_safetensors(std::span<const uint8_t>(data, size), "fuzz");
    (void)ytape::write_safetensors(m);
  } catch (const ytape::UserError&) {
  }
  try {
    (void)ytape::read_tensor_json(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.json");
  } catch (const ytape::UserError&) {
  }
  return 0;
}
