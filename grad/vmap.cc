#include "grad/vmap.h"

#include <numeric>

#include "grad/grad.h"
#include "tape/error.h"

namespace ytape::grad {

int Batcher::rank(size_t k) const {
  return type(args_[k]).rank() - (batched_[k] ? 1 : 0);
}

Var Batcher::with_batch(size_t k) {
  if (batched_[k]) return args_[k];
  Shape shape = type(args_[k]).shape;
  shape.push_back(size_);
  return b_.broadcast_to(args_[k], {.shape = shape});
}

Var Batcher::padded(size_t k, int rank) {
  if (!batched_[k] || this->rank(k) >= rank) return args_[k];
  Shape shape = type(args_[k]).shape;
  shape.insert(shape.end() - 1, rank - this->rank(k), 1);
  return b_.reshape(args_[k], {.shape = shape});
}

Var Batcher::merge_into(Var v, int at) {
  Shape shape = type(v).shape;
  int r = static_cast<int>(shape.size()) - 1;  // without the batch dim
  if (at < r) {                                // the batch dim moved to just after dim `at`
    std::vector<int64_t> perm(r + 1);
    std::iota(perm.begin(), perm.end(), 1);
    perm.insert(perm.begin() + at, r + 1);
    perm.pop_back();
    v = b_.permutedims(v, {.perm = perm});
    shape = type(v).shape;
  }
  shape[at - 1] *= shape[at];
  shape.erase(shape.begin() + at);
  return b_.reshape(v, {.shape = shape});
}

Var Batcher::split_from(Var v, int at) {
  Shape shape = type(v).shape;
  int r = static_cast<int>(shape.size());
  shape[at - 1] /= size_;
  shape.insert(shape.begin() + at, size_);
  v = b_.reshape(v, {.shape = shape});
  if (at == r) return v;  // the batch dim is last already
  std::vector<int64_t> perm;
  for (int d = 1; d <= r + 1; ++d) {
    if (d != at + 1) perm.push_back(d);
  }
  perm.push_back(at + 1);
  return b_.permutedims(v, {.perm = perm});
}

Tape vmap(const Tape& t, const VmapOptions& o) {
  if (o.over.empty()) user_error("vmap: name the inputs to batch (--over NAME)");
  if (o.size < 1) user_error("vmap: the batch size must be at least 1, got {}", o.size);
  std::vector<bool> chosen = chosen_inputs(t, o.over, "--over");
  Builder b = Builder::like(t);
  VarMap map(t);
  std::vector<bool> batched(t.types.size(), false);
  Batcher batcher(b, o.size);
  size_t input = 0;
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::input && chosen[input++]) {
      Shape shape = t.type(op.outs[0]).shape;
      shape.push_back(o.size);
      map.set(op.outs[0], b.input(op.name, {t.type(op.outs[0]).dtype, shape}));
      batched[op.outs[0].id] = true;
      continue;
    }
    std::vector<bool> which;
    bool any = false;
    for (Var a : op.args) which.push_back(batched[a.id]), any = any || batched[a.id];
    if (!any) {
      copy_op(b, t, op, map);
      continue;
    }
    b.set_loc(op.loc);
    std::vector<Var> outs;
    try {
      outs = batcher.map(op, map.map(op.args), std::move(which));
    } catch (const UserError& e) {
      std::string at = t.loc_str(op.loc);
      user_error("vmap: {}{}{}", at, at.empty() ? "" : ": ", e.what());
    }
    for (size_t k = 0; k < op.outs.size(); ++k) {
      map.set(op.outs[k], outs[k]);
      batched[op.outs[k].id] = true;
    }
  }
  for (const Output& out : t.outputs) b.output(map[out.var], out.name);
  return b.finish();
}

}  // namespace ytape::grad
