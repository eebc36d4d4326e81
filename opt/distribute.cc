#include "opt/distribute.h"

#include <algorithm>
#include <charconv>
#include <unordered_set>

#include "opt/distribute_impl.h"
#include "tape/error.h"
#include "tape/strings.h"

namespace ytape {

namespace dist {

namespace {

constexpr uint32_t kNone = ~uint32_t{0};

// The ops after the last allreduce (the optimizer's update, once the last bucket is issued)
// in the order their buckets arrive: each op after every op that reads an earlier bucket
// only, otherwise in tape order. The update of the weights whose gradients travelled first
// then runs while the last bucket (issued at the end of the backward, with nothing left to
// overlap it) is still in flight, instead of waiting for it at the first weight. An op's
// bucket is the latest one it reads, through any chain; effects keep their order.
Tape update_in_arrival_order(const Tape& t) {
  size_t tail = t.ops.size();
  for (size_t i = t.ops.size(); i-- > 0;) {
    if (t.ops[i].kind == OpKind::call && t.ops[i].prim == Prim::allreduce) {
      tail = i + 1;
      break;
    }
  }
  std::vector<uint32_t> bucket(t.types.size(), 0);
  uint32_t buckets = 0, effects = 0;
  std::vector<uint32_t> of_op(t.ops.size(), 0);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    uint32_t b = 0;
    if (op.kind == OpKind::call && op.prim == Prim::allreduce) {
      b = ++buckets;
    } else if (i >= tail) {
      for (Var a : op.args) b = std::max(b, bucket[a.id]);
      if (op.kind == OpKind::call && prim_info(op.prim).effectful())
        b = effects = std::max(b, effects);
    }
    for (Var o : op.outs) bucket[o.id] = b;
    of_op[i] = b;
  }
  if (tail == t.ops.size()) return t;
  // A counting sort of the tail by bucket, stable: linear in the tape.
  std::vector<std::vector<size_t>> by_bucket(buckets + 1);
  for (size_t i = tail; i < t.ops.size(); ++i) by_bucket[of_op[i]].push_back(i);
  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  for (size_t i = 0; i < tail; ++i) copy_op(b, t, t.ops[i], map);
  for (const std::vector<size_t>& ops : by_bucket) {
    for (size_t i : ops) copy_op(b, t, t.ops[i], map);
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace

Distributor::Distributor(const Tape& t, const DistributeOptions& o, DistributeReport* report)
    : old_(t),
      o_(o),
      report_(report),
      b_(Builder::like(t)),
      places_(t.types.size()),
      now_(t.types.size(), kNone),
      replicated_(t.types.size(), kNone) {
  if (o_.ranks < 1 || o_.ranks > (1 << 24)) user_error("--ranks {} is not 1 to 2^24", o_.ranks);
  if (o_.bucket_bytes < 1) user_error("the bucket size must be at least one byte");
}

Tape Distributor::run() {
  std::vector<std::string> inputs;
  for (const Op& op : old_.ops) {
    if (op.kind == OpKind::input) inputs.push_back(op.name);
    if (op.kind == OpKind::call && prim_info(op.prim).family == Family::comm) {
      user_error("{}: the tape has {} ops already: distribute the tape written for one process",
                 prim_name(op.prim), prim_name(op.prim));
    }
  }
  for (const std::string& name : o_.split) {
    if (std::find(inputs.begin(), inputs.end(), name) == inputs.end()) {
      user_error("{} has no input '{}' to split{}", old_.name.empty() ? "the tape" : old_.name,
                 name, did_you_mean(name, inputs));
    }
  }
  b_.reserve(old_.ops.size() + old_.ops.size() / 8, old_.types.size() + old_.types.size() / 8);
  for (const Op& op : old_.ops) {
    b_.set_loc(op.loc);
    switch (op.kind) {
      case OpKind::input:
        input(op);
        break;
      case OpKind::constant:
        set(op.outs[0], b_.constant(old_.type(op.outs[0]), op.value), Place::rep());
        break;
      case OpKind::call:
        call(op);
        break;
    }
  }
  for (const Output& out : old_.outputs) b_.output(replicated(out.var), out.name);
  b_.add_meta("distribute.ranks", std::to_string(o_.ranks));
  std::string split;
  for (const std::string& name : o_.split) split += (split.empty() ? "" : ",") + name;
  b_.add_meta("distribute.split", split);
  return update_in_arrival_order(b_.finish());
}

void Distributor::input(const Op& op) {
  const Var v = op.outs[0];
  Type type = old_.type(v);
  if (std::find(o_.split.begin(), o_.split.end(), op.name) == o_.split.end()) {
    set(v, b_.input(op.name, type), Place::rep());
    return;
  }
  if (type.rank() == 0 || type.shape.back() % o_.ranks != 0) {
    user_error(
        "input '{}' ({}) has a batch of {}, which {} ranks do not split evenly: trace the "
        "step at a batch that {} divides",
        op.name, type_str(type), type.rank() == 0 ? 1 : type.shape.back(), o_.ranks, o_.ranks);
  }
  type.shape.back() /= o_.ranks;
  set(v, b_.input(op.name, type), Place::along(type.rank()));
}

void Distributor::call(const Op& op) {
  Rule rule = rule_of(op.prim);
  if (rule != nullptr && rule(*this, op)) return;
  fallback(op);
}

// Runs `op` as the one process would, on whole arguments; its results are replicated.
void Distributor::fallback(const Op& op) {
  VarList args;
  bool gathered = false;
  for (Var a : op.args) {
    gathered |= place(a).kind == Place::split;
    args.push_back(replicated(a));
  }
  if (gathered && report_ != nullptr) {
    std::string name(prim_name(op.prim));
    auto& names = report_->replicated;
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  const Op& copy = b_.record(op.prim, args, op.attrs, op.regions);
  for (size_t i = 0; i < copy.outs.size(); ++i) set(op.outs[i], copy.outs[i], Place::rep());
}

void Distributor::set(Var v, Var now, Place p) {
  places_[v.id] = p;
  now_[v.id] = now.id;
  if (p.kind == Place::replicated) replicated_[v.id] = now.id;
}

void Distributor::set_partial(Var v, Var now) {
  places_[v.id] = {Place::partial, 0};
  now_[v.id] = now.id;
  pending_.push_back(v);
  pending_bytes_ += old_.type(v).size() * dtype_size(old_.type(v).dtype);
  if (pending_bytes_ >= o_.bucket_bytes) flush();
}

void Distributor::set_reduced(Var v, Var now, const char* op) {
  places_[v.id] = {Place::partial, 0};
  now_[v.id] = now.id;
  allreduce({v}, op);
}

std::vector<Var> Distributor::sum_over_ranks(const VarList& parts) {
  return reduce_over_ranks(parts, "sum");
}

std::vector<Var> Distributor::reduce_over_ranks(const VarList& parts, const char* op) {
  std::vector<Var> outs = b_.allreduce(parts, {.ranks = o_.ranks, .op = op});
  if (report_ != nullptr) {
    report_->allreduces += 1;
    report_->reduced_values += static_cast<int64_t>(parts.size());
    for (Var v : parts) report_->reduced_bytes += b_.type(v).size() * dtype_size(b_.type(v).dtype);
  }
  return outs;
}

int64_t Distributor::extent(Var v, int d) const {
  const Type& t = old_.type(v);
  return d <= t.rank() ? t.shape[d - 1] : 1;
}

Var Distributor::replicated(Var v) {
  if (replicated_[v.id] != kNone) return Var{replicated_[v.id]};
  const Place p = place(v);
  if (p.kind == Place::partial) {
    flush();
    return Var{replicated_[v.id]};
  }
  const Var all = b_.allgather(Var{now_[v.id]}, {.dim = p.dim, .ranks = o_.ranks});
  replicated_[v.id] = all.id;
  if (report_ != nullptr) {
    report_->gathers += 1;
    const Type& t = old_.type(v);
    report_->gathered_bytes += t.size() * dtype_size(t.dtype) / o_.ranks * (o_.ranks - 1);
  }
  return all;
}

Var Distributor::split(Var v, int dim) {
  const Place p = place(v);
  if (p.kind == Place::split && p.dim == dim) return Var{now_[v.id]};
  const uint64_t key = uint64_t{v.id} << 8 | static_cast<uint64_t>(dim);
  auto it = splits_.find(key);
  if (it != splits_.end()) return it->second;
  const Var s = b_.shard(replicated(v), {.dim = dim, .ranks = o_.ranks});
  splits_.emplace(key, s);
  return s;
}

void Distributor::flush() {
  // One allreduce per dtype, in the order the sums were made.
  std::vector<Var> pending = std::move(pending_);
  pending_.clear();
  pending_bytes_ = 0;
  for (DType dtype : {DType::f32, DType::f64, DType::i64}) {
    std::vector<Var> same;
    for (Var v : pending) {
      if (old_.type(v).dtype == dtype) same.push_back(v);
    }
    if (!same.empty()) allreduce(same, "sum");
  }
}

void Distributor::allreduce(const std::vector<Var>& olds, const char* op) {
  VarList args;
  for (Var v : olds) args.push_back(Var{now_[v.id]});
  std::vector<Var> outs = reduce_over_ranks(args, op);
  for (size_t i = 0; i < olds.size(); ++i) set(olds[i], outs[i], Place::rep());
}

}  // namespace dist

DistributedFor distributed_for(const Tape& t) {
  DistributedFor f;
  for (const auto& [key, value] : t.meta) {
    if (key == "distribute.ranks") {
      const auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), f.ranks);
      if (ec != std::errc() || end != value.data() + value.size() || f.ranks < 1) {
        user_error("the tape's meta distribute.ranks is '{}', not a number of ranks", value);
      }
    }
    if (key != "distribute.split") continue;
    for (size_t at = 0; at <= value.size();) {
      const size_t comma = std::min(value.find(',', at), value.size());
      if (comma > at) f.split.push_back(value.substr(at, comma - at));
      at = comma + 1;
    }
  }
  return f;
}

Tape distribute(const Tape& t, const DistributeOptions& o, DistributeReport* report) {
  if (report != nullptr) *report = {};
  return dist::Distributor(t, o, report).run();
}

}  // namespace ytape
