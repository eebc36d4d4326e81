// The driver of the recognizers that make written-out formulas primitives after import
// (onnx/gelu.h, onnx/attention.h): one pass that copies the tape and replaces each match.
#pragma once

#include <cstring>
#include <optional>
#include <vector>

#include "tape/builder.h"

namespace ytape::onnx_import {

/// The op that made each var of a tape, for matchers that walk back from an op.
class Defs {
 public:
  explicit Defs(const Tape& t) : t_(t), def_(t.types.size(), nullptr) {
    for (const Op& op : t.ops) {
      for (Var o : op.outs) def_[o.id] = &op;
    }
  }

  /// The op that made `v` if it is a call of `p`, else null.
  const Op* call(Var v, Prim p) const {
    const Op* op = def_[v.id];
    return op != nullptr && op->kind == OpKind::call && op->prim == p ? op : nullptr;
  }

  /// The value of `v` if it is a constant of one f32 or f64 element.
  std::optional<double> scalar(Var v) const {
    const Op* op = def_[v.id];
    const Type& type = t_.type(v);
    if (op == nullptr || op->kind != OpKind::constant || type.size() != 1) return std::nullopt;
    if (type.dtype == DType::f32) {
      float f = 0;
      std::memcpy(&f, op->value.data(), 4);
      return f;
    }
    if (type.dtype == DType::f64) {
      double d = 0;
      std::memcpy(&d, op->value.data(), 8);
      return d;
    }
    return std::nullopt;
  }

 private:
  const Tape& t_;
  std::vector<const Op*> def_;  // by var id
};

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
