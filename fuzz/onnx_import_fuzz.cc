// libFuzzer target: ONNX import (the protobuf parser, the checks of each node, the folding
// of static subgraphs) and the export of what it imported. A malformed or unsupported model
// must end in a UserError; anything else, or an invalid tape, is a bug.
#include <cstdint>
#include <string_view>

#include "onnx/export.h"
#include "onnx/import.h"
#include "tape/error.h"
#include "tape/validate.h"

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ytape::OnnxImport imported;
  try {
    imported = ytape::import_onnx(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.onnx");
  } catch (const ytape::UserError&) {
    return 0;
  }
  ytape::validate(imported.tape);  // an InternalError here is a bug of the importer
  try {
    (void)ytape::export_onnx(imported.tape, imported.weights);
  } catch (const ytape::UserError&) {
  }
  return 0;
}
