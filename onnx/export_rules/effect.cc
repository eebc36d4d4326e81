// Export rules of the effect family: none. print writes to the run's output and guard stops
// a run with its message; ONNX has no op for either, so the export refuses them, naming the
// op (tests/unit/onnx/export_table_test.cc lists them).
#include "onnx/export_rules.h"

namespace ytape::onnx_export {

void register_effect_export(ExportTable&) {}

}  // namespace ytape::onnx_export
