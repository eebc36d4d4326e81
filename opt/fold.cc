#include "opt/fold.h"

#include <unordered_map>
#include <vector>

#include "opt/splat.h"
#include "runtime/eval.h"
#include "runtime/kernels/kernel.h"
#include "tape/builder.h"
#include "tape/error.h"

namespace ytape {

namespace {

bool small(const Type& type) {
  return type.size() <= kFoldMaxElements;
}

// Whether `op` is a call the sweep may evaluate, given which vars hold small constants.
bool foldable(const Tape& t, const Op& op, const std::vector<bool>& constant) {
  // Region ops run only in an executor (their bodies are planned there).
  if (op.kind != OpKind::call || prim_info(op.prim).effectful() ||
      prim_info(op.prim).holds_regions())
    return false;
  if (kernel_table().kernels[static_cast<int>(op.prim)] == nullptr) return false;
  for (Var a : op.args) {
    if (!constant[a.id]) return false;
  }
  for (Var o : op.outs) {
    if (!small(t.type(o))) return false;
  }
  return true;
}

// Runs the kernel of `op` on `args`; empty when it rejects them.
std::vector<Tensor> try_evaluate(const Tape& t, const Op& op,
                                 const std::vector<const Tensor*>& args) {
  try {
    return evaluate(t, op, args);
  } catch (const UserError&) {
    return {};
  }
}

std::vector<uint8_t> bytes_of(const Tensor& tensor) {
  const auto* p = static_cast<const uint8_t*>(tensor.raw());
  return {p, p + tensor.bytes()};
}

// A folded value: a fill when it has several elements all of one value, else a constant.
Var emit(Builder& b, const Type& type, const Tensor& value) {
  std::vector<uint8_t> bytes = bytes_of(value);
  if (type.size() > 1) {
    if (std::optional<double> v = splat_value(bytes, type.dtype)) {
      return b.fill({.value = *v, .dtype = type.dtype, .shape = type.shape});
    }
  }
  return b.constant(type, std::move(bytes));
}

}  // namespace

PassResult fold_constants(const Tape& t) {
  // First, without building: does anything fold? Vars that are small constants, or would
  // be once earlier ops fold; a small fill counts as constant but stays as it is. The
  // values the folding ops read are the only ones computed or copied below.
  std::vector<bool> constant(t.types.size(), false), read(t.types.size(), false);
  std::vector<bool> folds(t.ops.size(), false);
  bool any = false;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    bool c = op.kind == OpKind::constant ? small(t.type(op.outs[0])) : foldable(t, op, constant);
    for (Var o : op.outs) constant[o.id] = c;
    if (!c || op.kind != OpKind::call) continue;
    folds[i] = true;
    for (Var a : op.args) read[a.id] = true;
    any = any || op.prim != Prim::fill;
  }
  if (!any) return {};

  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  std::unordered_map<uint32_t, Tensor> values;  // old var -> its value, when read
  std::vector<const Tensor*> args;
  size_t changed = 0;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (op.kind == OpKind::constant && read[op.outs[0].id]) {
      values.emplace(op.outs[0].id, Tensor::of_bytes(t.type(op.outs[0]), op.value));
    }
    bool ready = folds[i];
    for (Var a : op.args) ready = ready && constant[a.id];
    std::vector<Tensor> outs;
    if (ready) {
      args.clear();
      for (Var a : op.args) args.push_back(&values.at(a.id));
      outs = try_evaluate(t, op, args);
    }
    if (outs.empty() || op.prim == Prim::fill) {
      copy_op(b, t, op, map);
      if (folds[i] && outs.empty()) {
        for (Var o : op.outs) constant[o.id] = false;  // it failed: its readers stay too
      }
    } else {
      b.set_loc(op.loc);
      for (size_t k = 0; k < op.outs.size(); ++k)
        map.set(op.outs[k], emit(b, t.type(op.outs[k]), outs[k]));
      ++changed;
    }
    for (size_t k = 0; k < outs.size(); ++k) {
      if (read[op.outs[k].id]) values.emplace(op.outs[k].id, std::move(outs[k]));
    }
  }
  if (changed == 0) return {};
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

}  // namespace ytape
