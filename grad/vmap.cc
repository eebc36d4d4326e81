#include "grad/vmap.h"

#include <numeric>

#include "grad/grad.h"
#include "tape/error.h"

namespace ytape::grad {

int Batcher::rank(size_t k) const {
  return type(args_[k]).rank() - (batched_[k] ? 1 : 0);
}

Var broadcast_batch(Builder& b, Var v, int64_t size) {
  Shape shape = b.type(v).shape;
  shape.push_back(size);
  return b.broadcast_to(v, {.shape = shape});
}

Var select_each(Builder& b, Var pick, Var yes, Var no, int64_t size) {
  Shape shape(b.type(yes).rank() - 1, 1);  // pick broadcast over each example's dims
  shape.push_back(size);
  return b.select(b.reshape(pick, {.shape = shape}), yes, no);
}

Var Batcher::with_batch(size_t k) {
  return batched_[k] ? args_[k] : broadcast_batch(b_, args_[k], size_);
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
    v = permuted(v, perm);
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
  return permuted(v, perm);
}

// A permutation that only moves dims of 1 (the batch past a channel dim of 1) as the
// reshape it is: no copy at run time, even without `ytape opt`.
Var Batcher::permuted(Var v, const std::vector<int64_t>& perm) {
  Shape shape = type(v).shape;
  if (!moves_only_ones(perm, shape)) return b_.permutedims(v, {.perm = perm});
  Shape to(perm.size());
  for (size_t d = 0; d < perm.size(); ++d) to[d] = shape[perm[d] - 1];
  return b_.reshape(v, {.shape = to});
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

std::vector<bool> batch_onto(Builder& b, const Tape& t, const std::vector<bool>& params,
                             int64_t size, const std::vector<bool>& want) {
  BatchedCopy copy(b, t, size);
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    const Op& in = t.ops[i];
    Type type = t.type(in.outs[0]);
    if (params[i]) type.shape.push_back(size);
    copy.bind_input(in.outs[0], b.input(in.name, type), params[i]);
  }
  copy.forward();
  std::vector<bool> batched;
  for (size_t k = 0; k < t.outputs.size(); ++k) {
    Var y = copy[t.outputs[k].var];
    batched.push_back(copy.batched(t.outputs[k].var));
    if (!batched.back() && k < want.size() && want[k]) {
      y = broadcast_batch(b, y, size);
      batched.back() = true;
    }
    b.output(y, t.outputs[k].name);
  }
  return batched;
}

Tape vmap(const Tape& t, const VmapOptions& o) {
  if (o.over.empty()) user_error("vmap: name the inputs to batch (--over NAME)");
  if (o.size < 1) user_error("vmap: the batch size must be at least 1, got {}", o.size);
  Builder b = Builder::like(t);
  batch_onto(b, t, chosen_inputs(t, o.over, "--over"), o.size);
  return b.finish();
}

}  // namespace ytape::grad
