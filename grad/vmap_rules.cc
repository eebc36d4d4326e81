// The batching rules, by family (tape/families.def). Each maps one op some of whose
// arguments carry the batch dim (last) to ops whose outputs all carry it. The batch dim
// stays last everywhere: dims an op names (reductions, concat, gather) keep their numbers,
// and the ops that take their batch in a dim of their own (convolutions and pooling: N;
// batch norm: channels) get the batch merged into it and split off again, so that a
// batched convolution is one convolution, not a loop.
#include <fmt/format.h>

#include "grad/vmap.h"
#include "tape/error.h"
#include "tape/op_attrs.h"

namespace ytape::grad {

namespace {

Shape appended(Shape s, int64_t d) {
  s.push_back(d);
  return s;
}

// Elementwise ops broadcast by Julia's rule (a missing trailing dim is 1): a batched
// argument of lower rank than the others gets dims of 1 before its batch dim.
std::vector<Var> elementwise(Batcher& c, const Op& op) {
  int rank = 0;
  for (size_t k = 0; k < c.num_args(); ++k) rank = std::max(rank, c.rank(k));
  VarList args;
  for (size_t k = 0; k < c.num_args(); ++k) args.push_back(c.padded(k, rank));
  return c.b().call(op.prim, std::move(args), op.attrs);
}

std::vector<Var> shape_op(Batcher& c, const Op& op) {
  Builder& b = c.b();
  Attrs a = op.attrs;
  int64_t n = c.size();
  switch (op.prim) {
    case Prim::reshape:
      a.set("shape", appended(a.get_ints("shape"), n));
      return {b.call1(op.prim, {c.arg(0)}, a)};
    case Prim::permutedims:
      a.set("perm", appended(a.get_ints("perm"), c.rank(0) + 1));
      return {b.call1(op.prim, {c.arg(0)}, a)};
    case Prim::broadcast_to: {
      const std::vector<int64_t>& shape = a.get_ints("shape");
      Var x = c.padded(0, static_cast<int>(shape.size()));
      a.set("shape", appended(shape, n));
      return {b.call1(op.prim, {x}, a)};
    }
    case Prim::slice:
      a.set("start", appended(a.get_ints("start"), 1));
      a.set("stop", appended(a.get_ints("stop"), n));
      a.set("step", appended(a.get_ints("step"), 1));
      return {b.call1(op.prim, {c.arg(0)}, a)};
    case Prim::pad:
      for (const char* name : {"lo", "hi", "interior"}) a.set(name, appended(a.get_ints(name), 0));
      return {b.call1(op.prim, {c.arg(0)}, a)};
    case Prim::concat: {
      VarList args;
      for (size_t k = 0; k < c.num_args(); ++k) args.push_back(c.with_batch(k));
      return {b.call1(op.prim, std::move(args), a)};
    }
    default:  // stop_gradient
      return {b.call1(op.prim, {c.arg(0)}, a)};
  }
}

// gather(x, idx) and scatter_add(y, idx): an unbatched index broadcasts over the batch
// (a trailing dim of 1); a batched index needs the batch in the data too.
std::vector<Var> index_op(Batcher& c, const Op& op) {
  Var data = c.arg_as(0, c.batched(1));
  Var idx = c.arg(1);
  if (!c.batched(1)) idx = c.b().reshape(idx, {.shape = appended(c.type(idx).shape, 1)});
  return {c.b().call1(op.prim, {data, idx}, op.attrs)};
}

// Attention's dims after the first two are independent slices: the batch dim last is one
// more. The mask, one for every slice, cannot differ between examples.
std::vector<Var> attention(Batcher& c, const Op& op) {
  if (c.batched(3)) {
    user_error("{}'s mask has no batching rule: it must be the same for every example",
               prim_name(op.prim));
  }
  VarList args;
  for (size_t k = 0; k < c.num_args(); ++k) args.push_back(k == 3 ? c.arg(3) : c.with_batch(k));
  return c.b().call(op.prim, std::move(args), op.attrs);
}

// matmul batches over its dims after the second; one of two unbatched takes the batch
// as B copies, but for a product W * x of an unbatched W, whose x's columns the batch
// only widens: [K, N, B] as [K, N*B], no copy.
std::vector<Var> linalg(Batcher& c, const Op& op) {
  if (op.prim == Prim::attention || op.prim == Prim::attention_backward) return attention(c, op);
  auto m = attrs_of<Prim::matmul>(op.attrs);
  if (!c.batched(0) && c.batched(1) && c.rank(0) == 2 && c.rank(1) == 2 && !m.transpose_b) {
    Var y = c.b().call1(op.prim, {c.arg(0), c.merge_into(c.arg(1), 2)}, op.attrs);
    return {c.split_from(y, 2)};
  }
  return {c.b().call1(op.prim, {c.with_batch(0), c.with_batch(1)}, op.attrs)};
}

// Convolutions: with unbatched weights, the batch merged into N; with batched weights (and
// for the filter's gradient, per example), the batch as groups: example b's channels are
// group b's, one grouped convolution for all.
std::vector<Var> conv(Batcher& c, const Op& op) {
  Builder& b = c.b();
  Attrs a = op.attrs;
  int64_t n = c.size();
  bool per_example_weights = op.prim == Prim::conv2d_backward_filter || c.batched(1);
  if (!per_example_weights) {
    if (op.prim == Prim::conv2d_backward_input) {
      std::vector<int64_t> shape = a.get_ints("shape");
      shape[3] *= n;
      a.set("shape", shape);
    }
    return {c.split_from(b.call1(op.prim, {c.merge_into(c.arg(0), 4), c.arg(1)}, a), 4)};
  }
  a.set("groups", a.get_int("groups") * n);
  if (op.prim == Prim::conv2d_backward_filter) {  // (x, dy) -> dw: both by channel
    std::vector<int64_t> shape = a.get_ints("shape");
    shape[3] *= n;
    a.set("shape", shape);
    Var dw =
        b.call1(op.prim, {c.merge_into(c.with_batch(0), 3), c.merge_into(c.with_batch(1), 3)}, a);
    return {c.split_from(dw, 4)};
  }
  if (op.prim == Prim::conv2d_backward_input) {
    std::vector<int64_t> shape = a.get_ints("shape");
    shape[2] *= n;
    a.set("shape", shape);
  }
  // x (or dy) by channel, w by output channel: [kw, kh, cin/groups, cout * B].
  Var y = b.call1(op.prim, {c.merge_into(c.with_batch(0), 3), c.merge_into(c.with_batch(1), 4)}, a);
  return {c.split_from(y, 3)};
}

// Pooling takes the batch in N, its indices too (their order is the merged tensor's).
std::vector<Var> pool(Batcher& c, const Op& op) {
  Attrs a = op.attrs;
  if (a.find("shape") != nullptr) {
    std::vector<int64_t> shape = a.get_ints("shape");
    shape[3] *= c.size();
    a.set("shape", shape);
  }
  VarList args;
  for (size_t k = 0; k < c.num_args(); ++k) args.push_back(c.merge_into(c.with_batch(k), 4));
  std::vector<Var> outs = c.b().call(op.prim, std::move(args), a);
  for (Var& o : outs) o = c.split_from(o, 4);
  return outs;
}

// Batch norm normalizes each example on its own: the batch joins the channels (the
// second-to-last dim), and each per-channel vector becomes one per channel and example.
std::vector<Var> norm(Batcher& c, const Op& op) {
  int channels = c.rank(0) == 1 ? 1 : c.rank(0) - 1;
  VarList args;
  for (size_t k = 0; k < c.num_args(); ++k) {
    bool tensor = k == 0 || (op.prim == Prim::batchnorm_backward && k == 1);
    args.push_back(c.merge_into(c.with_batch(k), tensor ? channels : 1));
  }
  std::vector<Var> outs = c.b().call(op.prim, std::move(args), op.attrs);
  for (size_t k = 0; k < outs.size(); ++k) outs[k] = c.split_from(outs[k], k == 0 ? channels : 1);
  return outs;
}

}  // namespace

std::vector<Var> Batcher::map(const Op& op, VarList args, std::vector<bool> batched) {
  args_ = std::move(args);
  batched_ = std::move(batched);
  out_batched_.clear();
  if (op.prim == Prim::scan) return scan(op);
  if (op.prim == Prim::cond) return cond(op);
  if (op.prim == Prim::while_loop) return while_loop(op);
  if (op.prim == Prim::custom_rule) return custom_rule(op);
  switch (prim_info(op.prim).family) {
    case Family::elementwise:
      return elementwise(*this, op);
    case Family::reduce:  // its dims keep their numbers; the batch dim is never one
      return b_.call(op.prim, {args_[0]}, op.attrs);
    case Family::shape:
      return shape_op(*this, op);
    case Family::index:
      return index_op(*this, op);
    case Family::linalg:
      return linalg(*this, op);
    case Family::conv:
      return conv(*this, op);
    case Family::pool:
      return pool(*this, op);
    case Family::norm:
      return norm(*this, op);
    default:
      user_error("{} has no batching rule (vmap maps straight-line tapes of pure ops)",
                 prim_name(op.prim));
  }
}

}  // namespace ytape::grad
