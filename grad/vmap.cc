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

BatchedCopy::BatchedCopy(Builder& b, const Tape& src, int64_t size)
    : src_(src), b_(b), size_(size), map_(src), batched_(src.types.size(), false) {}

void BatchedCopy::bind_input(Var v, Var now, bool batched) {
  map_.set(v, now);
  batched_[v.id] = batched;
}

void BatchedCopy::forward() {
  Batcher batcher(b_, size_);
  for (const Op& op : src_.ops) {
    if (op.kind == OpKind::input) continue;
    std::vector<bool> which;
    bool any = false;
    for (Var a : op.args) which.push_back(batched_[a.id]), any = any || batched_[a.id];
    if (!any) {
      copy_op(b_, src_, op, map_);
      continue;
    }
    b_.set_loc(op.loc);
    std::vector<Var> outs;
    try {
      outs = batcher.map(op, map_.map(op.args), std::move(which));
    } catch (const UserError& e) {
      std::string at = src_.loc_str(op.loc);
      user_error("vmap: {}{}{}", at, at.empty() ? "" : ": ", e.what());
    }
    for (size_t k = 0; k < op.outs.size(); ++k) {
      map_.set(op.outs[k], outs[k]);
      batched_[op.outs[k].id] = batcher.out_batched(k);
    }
  }
}

Tape vmap(const Tape& t, const VmapOptions& o) {
  if (o.over.empty()) user_error("vmap: name the inputs to batch (--over NAME)");
  if (o.size < 1) user_error("vmap: the batch size must be at least 1, got {}", o.size);
  std::vector<bool> chosen = chosen_inputs(t, o.over, "--over");
  Builder b = Builder::like(t);
  BatchedCopy copy(b, t, o.size);
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    const Op& in = t.ops[i];
    Type type = t.type(in.outs[0]);
    if (chosen[i]) type.shape.push_back(o.size);
    copy.bind_input(in.outs[0], b.input(in.name, type), chosen[i]);
  }
  copy.forward();
  for (const Output& out : t.outputs) b.output(copy[out.var], out.name);
  return b.finish();
}

}  // namespace ytape::grad
