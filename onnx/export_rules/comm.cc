// Export rules of the comm family: none. ONNX describes one process's graph and has no
// collective ops, so the export refuses allreduce, shard and allgather, naming the op:
// export the tape before `ytape distribute`.
#include "onnx/export_rules.h"

namespace ytape::onnx_export {

void register_comm_export(ExportTable&) {}

}  // namespace ytape::onnx_export
