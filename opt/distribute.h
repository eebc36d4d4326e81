// Data parallelism as a transformation (docs/distributed.md): the tape every rank of a
// distributed run executes, from a tape written for one process.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace ytape {

struct DistributeOptions {
  int ranks = 2;
  /// The inputs whose last dim (the batch) is split across the ranks: rank r gets block r
  /// of it. Every other input is replicated: each rank holds all of it.
  std::vector<std::string> split;
  /// The most bytes of values that one allreduce of sums carries (a bucket); sums are
  /// held back until a bucket is full or an op needs one of them.
  int64_t bucket_bytes = int64_t{25} << 20;
};

/// What distribute did, for `ytape distribute`'s summary and the tests.
struct DistributeReport {
  int64_t allreduces = 0;      ///< allreduce ops
  int64_t reduced_values = 0;  ///< values they carry
  int64_t reduced_bytes = 0;   ///< bytes they carry, per step and rank
  int64_t gathers = 0;         ///< allgather ops
  int64_t gathered_bytes = 0;  ///< bytes a rank receives through them
  /// The primitives whose split arguments were gathered to run replicated (no rule splits
  /// them, or not this way), each once, in tape order.
  std::vector<std::string> replicated;
};

/// The tape each of `o.ranks` ranks runs so that together they compute what `t` computes
/// on one: the split inputs hold each rank's block of the batch (their last dim divided by
/// the ranks), every value is either replicated or split along one dim, and where `t`
/// reduces across a split dim (a loss's mean, a weight's gradient, a batch's statistics)
/// the ranks' partial results are summed by allreduce ops; ops no rule splits run
/// replicated on gathered arguments. Every output is replicated: each rank returns all of
/// it. One pass, linear in the tape. Throws UserError naming the input when a split input
/// is not an input of `t`, or its last dim is not a multiple of the ranks; or when `t`
/// holds comm ops already. The tape's meta records the ranks (distribute.ranks) and the
/// split inputs (distribute.split, comma-separated), which `run` under mpirun reads.
Tape distribute(const Tape& t, const DistributeOptions& o, DistributeReport* report = nullptr);

/// What distribute recorded in the meta of the tape it made: the ranks (0 for a tape it
/// did not make) and the split inputs.
struct DistributedFor {
  int64_t ranks = 0;
  std::vector<std::string> split;
};
DistributedFor distributed_for(const Tape& t);

}  // namespace ytape
