// The driver of the recognizers that make written-out formulas primitives after import
// (onnx/gelu.h, onnx/attention.h): one pass that copies the tape and replaces each match.
#pragma once

#include <optional>

#include "tape/builder.h"

namespace ytape::onnx_import {

/// `t` with the output of each call of `root` that `match(op)` (an optional) accepts made
/// `emit(b, *match, map)`, a var built on `b` from vars of `t` mapped by `map`; nothing if
/// no op matched. The ops a match leaves unread stay for dead-code elimination.
template <class Match, class Emit>
std::optional<Tape> replace_matches(const Tape& t, Prim root, Match match, Emit emit) {
  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  size_t found = 0;
  for (const Op& op : t.ops) {
    decltype(match(op)) m;
    if (op.kind == OpKind::call && op.prim == root) m = match(op);
    if (!m) {
      copy_op(b, t, op, map);
      continue;
    }
    b.set_loc(op.loc);
    map.set(op.outs[0], emit(b, *m, map));
    ++found;
  }
  if (found == 0) return std::nullopt;
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape::onnx_import
