#include <memory>

#include "cli/commands.h"
#include "cli/io.h"
#include "onnx/export.h"
#include "runtime/tensor_file.h"

namespace ytape::cli {

namespace {

struct ExportCliOptions {
  std::string tape, out, weights;
};

}  // namespace

Run setup_export(CLI::App& sub) {
  auto o = std::make_shared<ExportCliOptions>();
  sub.add_option("TAPE", o->tape, "Tape in JSON form, or - for standard input")->required();
  sub.add_option("-o,--output", o->out, "Write the ONNX model (opset 17) here")->required();
  sub.add_option("--weights", o->weights,
                 "Tensors (safetensors) of inputs to store in the model as initializers");
  return [o] {
    refuse_overwrites({{"TAPE", o->tape}, {"--weights", o->weights}}, {{"-o", o->out}});
    Tape t = load_tape(o->tape);
    TensorMap weights;
    if (!o->weights.empty()) {
      std::string bytes = read_file(o->weights);
      weights = read_safetensors({reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size()},
                                 source_name(o->weights));
    }
    write_file(o->out, export_onnx(t, weights));
    return kOk;
  };
}

}  // namespace ytape::cli
