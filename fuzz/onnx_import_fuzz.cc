// libFuzzer target: ONNX import (the protobuf parser, the checks of each node, the folding
// of static subgraphs) and the export of what it imported. A malformed or unsupported model
// must end in a UserError; anything else, or an invalid tape, is a bug. Structure-aware: most
// mutations change a number of the parsed model (an attribute, an initializer's element, an
// input's dim, the opset; fuzz/onnx_mutate.h), the rest its bytes. Tensors may take 256 MB,
// so that a model asking for huge ones at import ends in an error.
#include <onnx/onnx_pb.h>

#include <cstdint>
#include <string_view>

#include "fuzz/onnx_mutate.h"
#include "onnx/export.h"
#include "onnx/import.h"
#include "runtime/tensor.h"
#include "tape/error.h"
#include "tape/validate.h"

namespace {

// A structure for each sequence and optional input, chosen by the input's size, so that
// the fuzzer reaches the sequence rules: a length of 0 to 3 (1 for an optional tensor),
// none for some optionals, and, where the model declares no element shape, elements of 2.
ytape::OnnxImportOptions structure(const uint8_t* data, size_t size) {
  ytape::OnnxImportOptions options;
  onnx::ModelProto model;
  if (!model.ParseFromArray(data, static_cast<int>(size))) return options;
  for (const onnx::ValueInfoProto& v : model.graph().input()) {
    const onnx::TypeProto* t = &v.type();
    if (!t->has_sequence_type() && !t->has_optional_type()) continue;
    ytape::OnnxSequenceInput s;
    s.present = size % 5 != 0;
    bool optional_tensor =
        t->has_optional_type() && t->optional_type().elem_type().has_tensor_type();
    s.length = optional_tensor ? 1 : static_cast<int64_t>(size % 4);
    while (t->has_optional_type() || t->has_sequence_type())
      t = t->has_optional_type() ? &t->optional_type().elem_type()
                                 : &t->sequence_type().elem_type();
    if (s.present && !t->tensor_type().has_shape())
      s.shapes.assign(static_cast<size_t>(s.length), ytape::Shape{2});
    options.sequences[v.name()] = s;
  }
  return options;
}

}  // namespace

extern "C" size_t LLVMFuzzerCustomMutator(uint8_t* data, size_t size, size_t max_size,
                                          unsigned int seed) {
  return ytape::fuzz::mutate_model(data, size, max_size, seed);
}

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  ytape::set_tensor_memory_limit(int64_t{256} << 20);
  ytape::OnnxImport imported;
  try {
    imported = ytape::import_onnx(std::string_view(reinterpret_cast<const char*>(data), size),
                                  "fuzz.onnx", structure(data, size));
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
