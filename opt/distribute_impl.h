// The state of one `distribute` pass, shared by its driver (opt/distribute.cc) and its
// rules per primitive (opt/distribute_rules.cc). Not part of the library's interface.
#pragma once

#include <array>
#include <unordered_map>
#include <vector>

#include "opt/distribute.h"
#include "tape/builder.h"

namespace ytape::dist {

/// How a value of the old tape lies across the ranks in the new one.
struct Place {
  enum Kind : uint8_t { replicated, split, partial } kind = replicated;
  int dim = 0;  ///< split: the 1-based dim, of which each rank holds a block
  static Place rep() { return {}; }
  static Place along(int d) { return {split, d}; }
};

class Distributor {
 public:
  Distributor(const Tape& t, const DistributeOptions& o, DistributeReport* report);
  Tape run();

  // ---- for the rules --------------------------------------------------------------------
  const Tape& old() const { return old_; }
  Builder& b() { return b_; }
  int ranks() const { return o_.ranks; }
  Place place(Var v) const { return places_[v.id]; }
  /// The value of `v` replicated: gathered, or summed, as needed (each made once).
  Var replicated(Var v);
  /// The value of `v` split along `dim` (its global extent a multiple of the ranks):
  /// sharded where it is replicated.
  Var split(Var v, int dim);
  /// Records the new value of old `v`.
  void set(Var v, Var now, Place p);
  /// Records that `now` is this rank's part of a sum over the ranks, old `v`'s value.
  void set_partial(Var v, Var now);
  /// Records `now`, replicated, reduced over the ranks by allreduce(op) (max, min) now.
  void set_reduced(Var v, Var now, const char* op);
  /// Sums `parts` (new vars, each this rank's part) over the ranks now, in one allreduce.
  std::vector<Var> sum_over_ranks(const VarList& parts);
  /// The global extent of dim `d` of old `v` (1 past its rank).
  int64_t extent(Var v, int d) const;
  /// Whether the ranks divide dim `d` of old `v`.
  bool divisible(Var v, int d) const { return extent(v, d) % o_.ranks == 0; }

 private:
  void input(const Op& op);
  void call(const Op& op);
  void fallback(const Op& op);
  void flush();  // the held-back sums, as allreduce ops of at most a bucket each
  void allreduce(const std::vector<Var>& olds, const char* op);
  // One allreduce(op) of `parts` (new vars), counted in the report.
  std::vector<Var> reduce_over_ranks(const VarList& parts, const char* op);

  const Tape& old_;
  DistributeOptions o_;
  DistributeReport* report_;
  Builder b_;
  std::vector<Place> places_;                 // per old var
  std::vector<uint32_t> now_;                 // per old var: its value as places_ says
  std::vector<uint32_t> replicated_;          // per old var: its replicated value, once made
  std::unordered_map<uint64_t, Var> splits_;  // (old var, dim): a sharded copy
  std::vector<Var> pending_;                  // partial sums held back, in order
  int64_t pending_bytes_ = 0;
};

/// A rule: emits the ops of `op` on b() and records its outputs, or returns false (having
/// emitted nothing) so that the op runs replicated.
using Rule = bool (*)(Distributor& d, const Op& op);

/// The rule of `p`, or null.
Rule rule_of(Prim p);
/// Sets the rules of batch normalization (opt/distribute_norm.cc).
void register_norm_rules(std::array<Rule, kNumPrims>& rules);

}  // namespace ytape::dist
