// Inference rules of the comm family: allreduce, shard and allgather, the ops of a
// distributed run (docs/distributed.md).
#include "tape/infer.h"
#include "tape/infer/common.h"
#include "tape/strings.h"

namespace ytape {

namespace {

using namespace shapes;

void require_group(const std::string& group) {
  if (group != "world") {
    user_error("group={} is not a group of this run: the one group is \"world\"", quoted(group));
  }
}

void require_rank_count(int64_t ranks) {
  if (ranks < 1 || ranks > (int64_t{1} << 24)) {
    user_error("ranks={} is not a rank count (1 to 2^24)", ranks);
  }
}

// Throws unless `ranks` is a rank count that divides dim `dim` of `t` (`divides`) or can
// multiply it without overflow.
void require_ranks(const Type& t, int64_t dim, int64_t ranks, bool divides) {
  require_dim(dim, t.rank(), "dim");
  require_rank_count(ranks);
  const int64_t extent = t.shape[dim - 1];
  if (divides && extent % ranks != 0) {
    user_error("dim {} of {} has {} elements, which {} ranks do not divide", dim, type_str(t),
               extent, ranks);
  }
}

// allreduce(xs...; ranks, op, group): each result has its argument's type; one dtype for all.
std::vector<Type> allreduce(Prim, std::span<const Type> a, const Attrs& attrs) {
  const auto at = attrs_of<Prim::allreduce>(attrs);
  if (at.op != "sum" && at.op != "max" && at.op != "min") {
    user_error("op={} is not a reduction: sum, max or min{}", quoted(at.op),
               did_you_mean(at.op, {"sum", "max", "min"}));
  }
  require_group(at.group);
  require_rank_count(at.ranks);
  if (a.empty()) user_error("needs at least one argument");
  require_same_dtype(a);  // one message of one dtype (f16 is run as f32: lower_f16)
  require_numeric(a[0], "the arguments");
  return {a.begin(), a.end()};
}

std::vector<Type> shard(Prim, std::span<const Type> a, const Attrs& attrs) {
  const auto at = attrs_of<Prim::shard>(attrs);
  require_ranks(a[0], at.dim, at.ranks, true);
  Shape out = a[0].shape;
  out[at.dim - 1] /= at.ranks;
  return one(a[0].dtype, out);
}

std::vector<Type> allgather(Prim, std::span<const Type> a, const Attrs& attrs) {
  const auto at = attrs_of<Prim::allgather>(attrs);
  require_group(at.group);
  require_ranks(a[0], at.dim, at.ranks, false);
  Shape out = a[0].shape;
  out[at.dim - 1] *= at.ranks;
  require_sane(out, "the gathered shape");
  return one(a[0].dtype, out);
}

}  // namespace

void register_comm_infer(InferTable& t) {
  t.set(Prim::allreduce, allreduce);
  t.set(Prim::shard, shard);
  t.set(Prim::allgather, allgather);
}

}  // namespace ytape
