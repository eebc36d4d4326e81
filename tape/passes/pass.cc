#include "tape/passes/pass.h"

#include "tape/builder.h"

namespace ytape {

void append_copy(Builder& b, const Tape& src, const Op& op, VarMap& map) {
  if (op.kind != OpKind::call) {
    copy_op(b, src, op, map);
    return;
  }
  b.set_loc(op.loc);
  const Op& copy = b.record(op.prim, map.map(op.args), op.attrs);
  for (size_t k = 0; k < op.outs.size(); ++k) map.set(op.outs[k], copy.outs[k]);
}

}  // namespace ytape
