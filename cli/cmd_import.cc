#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "io/json.h"
#include "onnx/import.h"
#include "runtime/tensor_file.h"

namespace ytape::cli {

namespace {

struct ImportCliOptions {
  std::string model, out, weights;
  bool ignore_marks = false;
};

}  // namespace

Run setup_import(CLI::App& sub) {
  auto o = std::make_shared<ImportCliOptions>();
  sub.add_option("MODEL", o->model, "ONNX model (.onnx), opset 13 to 17")->required();
  sub.add_option("-o,--output", o->out, "Write the tape (JSON) here instead of standard output");
  sub.add_option("--weights", o->weights,
                 "Write the initializers (the tape's weight inputs) to this safetensors file");
  sub.add_flag("--ignore-marks", o->ignore_marks,
               "Read a model that ytape exported as any other: its nodes, not the primitives "
               "its marks name (docs/onnx.md)");
  return [o] {
    OnnxImportOptions options;
    options.read_marks = !o->ignore_marks;
    OnnxImport imported = import_onnx(read_file(o->model), source_name(o->model), options);
    // The weights first: a tape is never left without the values it was written with.
    if (!o->weights.empty()) {
      std::vector<uint8_t> bytes = write_safetensors(imported.weights);
      write_file(o->weights, {reinterpret_cast<const char*>(bytes.data()), bytes.size()});
    }
    write_file(o->out, write_tape_json(imported.tape));
    return kOk;
  };
}

}  // namespace ytape::cli
