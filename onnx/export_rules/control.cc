// Export rules of the control family: none yet. A scan would export as ONNX Scan, its body
// as the Scan's graph; until then the export refuses it, naming the op
// (tests/unit/onnx/export_table_test.cc lists it).
#include "onnx/export_rules.h"

namespace ytape::onnx_export {

void register_control_export(ExportTable&) {}

}  // namespace ytape::onnx_export
