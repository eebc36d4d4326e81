// Batching: `ytape vmap` (docs/vmap.md). A tape of one example becomes a tape of B, each
// op mapped by a batching rule of its family (grad/vmap_rules.cc), batched matmuls and
// convolutions as one kernel each.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "tape/builder.h"
#include "tape/tape.h"

namespace ytape::grad {

struct VmapOptions {
  /// The inputs that get the batch dim: names, or prefixes that end at a dot (as --wrt).
  std::vector<std::string> over;
  int64_t size = 0;  ///< B, at least 1
};

/// Returns `t` over a batch of `size`: each chosen input gets a new last dim of `size` (the
/// batch dim, column-major: example b is the slice [..., b]), and so does every value and
/// output that depends on one; element [..., b] of each is what `t` computes on the inputs'
/// slices [..., b]. Values that depend on no chosen input are computed once, as in `t`.
/// UserError naming the op (and its source line) for an op with no batching rule: custom
/// rules, effects, and a scan that stops per example.
Tape vmap(const Tape& t, const VmapOptions& options);

/// vmap's sweep, for callers that bind the inputs themselves (the model language's `vmap`):
/// copies the ops of `src` onto `b` (which shares its files, Builder::like), batching each
/// op that reads a batched value.
class BatchedCopy {
 public:
  BatchedCopy(Builder& b, const Tape& src, int64_t size);
  /// Binds input `v` of `src` to `now` on the builder, which has the batch dim (last) if
  /// `batched`.
  void bind_input(Var v, Var now, bool batched);
  /// Copies every op of `src` but its inputs (after they are bound).
  void forward();
  /// The builder's var for `src`'s var `v`, and whether it has the batch dim.
  Var operator[](Var v) const { return map_[v]; }
  bool batched(Var v) const { return batched_[v.id]; }

 private:
  const Tape& src_;
  Builder& b_;
  int64_t size_;
  VarMap map_;
  std::vector<bool> batched_;
};

/// `t` batched onto `b` (empty, or Builder::like(t)): its inputs declared again, with the
/// batch dim where `params` says (per input); its outputs, named as `t`'s, broadcast to
/// the batch where `want` says (per output; empty: none). Returns, per output, whether it
/// has the batch dim. vmap is this on a whole tape, the region ops' rules on their regions.
std::vector<bool> batch_onto(Builder& b, const Tape& t, const std::vector<bool>& params,
                             int64_t size, const std::vector<bool>& want = {});

/// `v` (on `b`) with a batch dim of `size` appended: the same value for every example.
Var broadcast_batch(Builder& b, Var v, int64_t size);

/// Per example b, `yes[..., b]` where `pick[b]` (bool[B]) holds, else `no[..., b]`.
Var select_each(Builder& b, Var pick, Var yes, Var no, int64_t size);

/// One op's batching: reads the op's arguments as mapped so far and appends the batched op.
class Batcher {
 public:
  Batcher(Builder& b, int64_t size) : b_(b), size_(size) {}

  /// The new var of argument k of the op being mapped, and whether it is batched.
  Var arg(size_t k) const { return args_[k]; }
  bool batched(size_t k) const { return batched_[k]; }
  size_t num_args() const { return args_.size(); }
  /// Its rank without the batch dim.
  int rank(size_t k) const;
  int64_t size() const { return size_; }
  Builder& b() { return b_; }
  const Type& type(Var v) const { return b_.type(v); }

  /// Argument k with the batch dim, broadcast (copied B times) if it has none.
  Var with_batch(size_t k);
  /// Argument k with the batch dim where `batched`, else as it is.
  Var arg_as(size_t k, bool batched) { return batched ? with_batch(k) : args_[k]; }
  /// Argument k, if batched, with dims of 1 inserted before its batch dim up to `rank`
  /// dims besides it, so that it broadcasts against others of that rank.
  Var padded(size_t k, int rank);
  /// `v` (batched: [dims..., B]) as [dims[0..at), dims[at] * B, ...]: the batch dim merged
  /// into dim `at` (1-based) after moving it there.
  Var merge_into(Var v, int at);
  /// The inverse of merge_into for a value [dims..., dims[at] * B, ...]: its batch dim
  /// split off dim `at` and put last.
  Var split_from(Var v, int at);

  /// Maps one op: `args`/`batched` its arguments; returns its outputs, which out_batched
  /// then says have the batch dim (all of them, but for some of a region op).
  std::vector<Var> map(const Op& op, VarList args, std::vector<bool> batched);
  bool out_batched(size_t k) const { return out_batched_.empty() || out_batched_[k]; }

 private:
  // The region ops' rules (grad/vmap_regions.cc).
  std::vector<Var> scan(const Op& op);
  std::vector<Var> cond(const Op& op);
  std::vector<Var> while_loop(const Op& op);
  std::vector<Var> custom_rule(const Op& op);
  Var permuted(Var v, const std::vector<int64_t>& perm);

  Builder& b_;
  int64_t size_;
  VarList args_;
  std::vector<bool> batched_;
  std::vector<bool> out_batched_;  // empty: all
};

}  // namespace ytape::grad
