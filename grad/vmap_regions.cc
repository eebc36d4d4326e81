// The batching rules of region ops (docs/regions.md): a scan, a cond and a while_loop
// batched are the same op with their regions batched; a cond whose selector differs by
// example runs every branch and selects each example's results. A while_loop whose
// condition differs by example runs while any example's holds, each example's carries kept
// once its own fails.
#include "grad/vmap.h"
#include "tape/error.h"
#include "tape/infer.h"
#include "tape/op_attrs.h"

namespace ytape::grad {

namespace {

struct BatchedRegion {
  Tape tape;
  std::vector<bool> yields;  // per yield: whether it has the batch dim
};

// Region `r` batched: parameter k gets the batch dim where `params[k]`; a yield gets it
// where `want` says (broadcast if it has none), and keeps what it has where `want` is
// empty or false.
BatchedRegion batch_region(const Tape& r, const std::vector<bool>& params, int64_t size,
                           const std::vector<bool>& want) {
  Builder b(r.name);
  std::vector<bool> yields = batch_onto(b, r, params, size, want);
  return {b.finish(), std::move(yields)};
}

// Marks in `flags` (per operand: nc consts, nk carries, then any xs) the carries that a
// trip of `body` makes depend on the batch: those carry it from the start.
void carry_batch(const Tape& body, size_t nc, size_t nk, std::vector<bool>& flags) {
  int64_t size = 1;  // any: only which yields depend on the batch is read
  for (size_t round = 0; round <= nk; ++round) {
    std::vector<bool> yields = batch_region(body, flags, size, {}).yields;
    bool changed = false;
    for (size_t k = 0; k < nk; ++k) {
      if (yields[k] && !flags[nc + k]) flags[nc + k] = changed = true;
    }
    if (!changed) break;
  }
}

// The permutation that moves dim `from` (1-based, of `rank`) to be dim `to`.
std::vector<int64_t> moved(int rank, int from, int to) {
  std::vector<int64_t> perm;
  for (int d = 1; d <= rank; ++d) {
    if (d != from) perm.push_back(d);
  }
  perm.insert(perm.begin() + (to - 1), from);
  return perm;
}

}  // namespace

// scan: the carries that any step makes depend on the batch carry it from the start (a
// fixed point over the body); xs slice their steps from a dim before the batch's, so each
// is [..., B, T] inside, and each ys comes out so and is turned back.
std::vector<Var> Batcher::scan(const Op& op) {
  auto a = attrs_of<Prim::scan>(op.attrs);
  size_t nc = a.consts, nk = a.carries, n = num_args();
  std::vector<bool> flags = batched_;
  const Tape& body = op.regions[0];
  carry_batch(body, nc, nk, flags);
  if ((a.running > 0 && flags[nc + a.running - 1]) || (a.mask > 0 && flags[nc + nk + a.mask - 1]))
    user_error("scan: a scan whose steps stop for each example on its own has no batching rule");
  std::vector<bool> want(body.outputs.size(), true);
  for (size_t k = 0; k < nk; ++k) want[k] = flags[nc + k];
  BatchedRegion region = batch_region(body, flags, size_, want);
  VarList args;
  for (size_t k = 0; k < n; ++k) {
    if (k < nc + nk) {
      args.push_back(arg_as(k, flags[k]));
      continue;
    }
    if (!batched_[k]) {
      args.push_back(args_[k]);
      continue;
    }
    int rank = type(args_[k]).rank();  // [..., T, B] -> [..., B, T]
    args.push_back(b_.permutedims(args_[k], {.perm = moved(rank, rank, rank - 1)}));
  }
  std::vector<Tape> regions;
  regions.push_back(std::move(region.tape));
  std::vector<Var> outs =
      b_.record(op.prim, std::move(args), op.attrs, std::move(regions)).outs.vector();
  out_batched_.assign(outs.size(), true);
  for (size_t k = 0; k < outs.size(); ++k) {
    if (k < nk) {
      out_batched_[k] = flags[nc + k];
      continue;
    }
    int rank = type(outs[k]).rank();  // [..., B, T] -> [..., T, B]
    outs[k] = b_.permutedims(outs[k], {.perm = moved(rank, rank - 1, rank)});
  }
  return outs;
}

// cond: one selector for the batch keeps the op, its branches batched; a selector per
// example runs every branch and selects each example's results.
std::vector<Var> Batcher::cond(const Op& op) {
  std::vector<bool> operands(batched_.begin() + 1, batched_.end());
  std::vector<Var> args(args_.begin() + 1, args_.end());
  std::vector<Tape> branches;
  for (const Tape& r : op.regions) {
    branches.push_back(
        batch_region(r, operands, size_, std::vector<bool>(r.outputs.size(), true)).tape);
  }
  if (!batched_[0]) {
    VarList all = args_;
    return b_.record(op.prim, std::move(all), op.attrs, std::move(branches)).outs.vector();
  }
  std::vector<std::vector<Var>> results;
  for (const Tape& r : branches) results.push_back(inline_region(b_, r, args));
  Var selector = args_[0];  // bool[B] or i64[B]
  bool boolean = type(selector).dtype == DType::boolean;
  std::vector<Var> outs = results.back();
  for (size_t k = results.size() - 1; k-- > 0;) {
    Var pick =
        boolean ? selector : b_.eq(selector, b_.constant(DType::i64, static_cast<double>(k + 1)));
    for (size_t i = 0; i < outs.size(); ++i)
      outs[i] = select_each(b_, pick, results[k][i], outs[i], size_);
  }
  return outs;
}

namespace {

// The regions of a while_loop whose condition differs by example, its carries all batched
// (`params`): `cond` yields whether any example's holds; `body` runs a trip for all and
// keeps the carries of each example whose own condition fails, as they were.
std::vector<Tape> masked_loop(const Tape& cond, const Tape& body, const std::vector<bool>& params,
                              size_t nc, int64_t size) {
  BatchedRegion test = batch_region(cond, params, size, {true});
  auto inputs = [](Builder& b, const Tape& r) {
    std::vector<Var> in;
    for (size_t i = 0; i < r.num_inputs(); ++i) {
      in.push_back(b.input(r.ops[i].name, r.type(r.ops[i].outs[0])));
    }
    return in;
  };
  Builder any("cond");
  Var holds = inline_region(any, test.tape, inputs(any, test.tape))[0];  // bool[B]
  Var count = any.sum(any.convert(holds, {.dtype = DType::i64}), {.dims = {1}});
  any.output(any.gt(count, any.constant(DType::i64, 0)), "");
  BatchedRegion trip =
      batch_region(body, params, size, std::vector<bool>(params.size() - nc, true));
  Builder b("body");
  std::vector<Var> in = inputs(b, trip.tape);
  holds = inline_region(b, test.tape, in)[0];
  std::vector<Var> next = inline_region(b, trip.tape, in);
  for (size_t k = 0; k < next.size(); ++k)
    b.output(select_each(b, holds, next[k], in[nc + k], size), "");
  std::vector<Tape> regions;
  regions.push_back(any.finish());
  regions.push_back(b.finish());
  return regions;
}

}  // namespace

// while_loop: with a condition the same for the batch, the op with its regions batched;
// with one per example, a loop while any example's holds, each example's carries kept
// from its own last trip on (as JAX's vmap of while_loop): the trips are the most any
// example needs, max_trips bounding each.
std::vector<Var> Batcher::while_loop(const Op& op) {
  auto a = attrs_of<Prim::while_loop>(op.attrs);
  size_t nc = a.consts, nk = num_args() - nc;
  std::vector<bool> flags = batched_;
  const Tape& cond = op.regions[0];
  const Tape& body = op.regions[1];
  carry_batch(body, nc, nk, flags);
  std::vector<Tape> regions;
  BatchedRegion test = batch_region(cond, flags, size_, {});
  if (test.yields[0]) {
    for (size_t k = nc; k < flags.size(); ++k) flags[k] = true;
    regions = masked_loop(cond, body, flags, nc, size_);
  } else {
    regions.push_back(std::move(test.tape));
    regions.push_back(
        batch_region(body, flags, size_, std::vector<bool>(flags.begin() + nc, flags.end())).tape);
  }
  VarList args;
  for (size_t k = 0; k < num_args(); ++k) args.push_back(arg_as(k, flags[k]));
  std::vector<Var> outs =
      b_.record(op.prim, std::move(args), op.attrs, std::move(regions)).outs.vector();
  out_batched_.assign(flags.begin() + nc, flags.end());
  return outs;
}

namespace {

// The batched pullback as a region: `pullback` batched with `params`, and each cotangent of
// an operand shared by the batch (unbatched) summed over the examples, whose results all
// read it, as the gradient of a broadcast sums (`shared` per yield).
Tape summed_pullback(const Tape& pullback, const std::vector<bool>& params,
                     const std::vector<bool>& shared, int64_t size) {
  std::vector<bool> want(shared.size());
  for (size_t k = 0; k < want.size(); ++k) want[k] = !shared[k];
  BatchedRegion batched = batch_region(pullback, params, size, want);
  Builder b(pullback.name);
  std::vector<Var> in;
  for (size_t i = 0; i < batched.tape.num_inputs(); ++i) {
    const Op& op = batched.tape.ops[i];
    in.push_back(b.input(op.name, batched.tape.type(op.outs[0])));
  }
  std::vector<Var> outs = inline_region(b, batched.tape, in);
  for (size_t k = 0; k < outs.size(); ++k) {
    Var v = outs[k];
    if (shared[k] && batched.yields[k]) {
      const Shape& shape = b.type(v).shape;
      v = b.sum(v, {.dims = {static_cast<int64_t>(shape.size())}});
      v = b.reshape(v, {.shape = Shape(shape.begin(), shape.end() - 1)});
    }
    b.output(v, batched.tape.outputs[k].name);
  }
  return b.finish();
}

}  // namespace

// custom_rule: the same op with its regions batched, every result batched. The body takes
// the operands as batched; the pullback takes them, the results and their cotangents
// (batched) and gives an operand shared by the batch the sum of its examples' cotangents;
// the pushforward takes a tangent batched as its operand.
std::vector<Var> Batcher::custom_rule(const Op& op) {
  const Tape& body = op.regions[0];
  std::vector<bool> results(body.outputs.size(), true);
  std::vector<Tape> regions;
  regions.push_back(batch_region(body, batched_, size_, results).tape);
  std::vector<bool> pulled = batched_, shared, pushed = batched_;
  pulled.insert(pulled.end(), body.outputs.size(), true);  // the results
  for (const Output& o : body.outputs) {
    if (is_float(body.type(o.var).dtype)) pulled.push_back(true);  // its cotangent
  }
  for (size_t k = 0; k < num_args(); ++k) {
    if (!is_float(type(args_[k]).dtype)) continue;
    shared.push_back(!batched_[k]);
    pushed.push_back(batched_[k]);  // its tangent
  }
  regions.push_back(summed_pullback(op.regions[1], pulled, shared, size_));
  if (op.regions.size() > 2) {
    std::vector<bool> tangents;
    for (const Output& o : body.outputs) {
      if (is_float(body.type(o.var).dtype)) tangents.push_back(true);
    }
    regions.push_back(batch_region(op.regions[2], pushed, size_, tangents).tape);
  }
  VarList args = args_;
  return b_.record(op.prim, std::move(args), op.attrs, std::move(regions)).outs.vector();
}

}  // namespace ytape::grad
