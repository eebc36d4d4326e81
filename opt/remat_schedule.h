// The parts of rematerialization (opt/remat.h) that one choice of what to keep goes
// through: the tape's analysis, made once; the schedule of a choice (which ops run, in
// which order, reading which copy of each value); its peak, simulated; the tape it writes.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "tape/tape.h"

namespace ytape::remat {

/// What every choice reads, per op of the tape (by index) or per var (by id).
struct Analysis {
  size_t forward_end = 0;           ///< ops [0, forward_end) are the forward part
  std::vector<int32_t> producer;    ///< per var: the op computing it; -1 for inputs, constants
  std::vector<uint8_t> pinned;      ///< per op: kept whatever is chosen
  std::vector<uint8_t> cut;         ///< per op: only its output is live in the forward after it
  std::vector<int64_t> end_bytes;   ///< per cut op: what keeping it as a segment end holds
  std::vector<size_t> boundary;     ///< forward ops, unpinned, whose outputs the backward reads
  std::vector<size_t> forward_ops;  ///< the calls of the forward part that it needs, in order
  std::vector<int64_t> bytes;       ///< per var: bytes of a computed value; 0 for the others
  std::vector<int64_t> kept_bytes;  ///< per op: bytes of its outputs the backward part reads
  std::vector<double> flops;        ///< per op: op_flops
  std::vector<int64_t> work_bytes;  ///< per op: its kernel's work memory, if known (else empty)
};

/// The analysis of `t` with `forward_outputs` (empty: the outputs not named grad.* or
/// tangent.*). UserError when a name is not an output or the tape has no backward part.
Analysis analyze(const Tape& t, const std::vector<std::string>& forward_outputs);

/// The rewritten tape's ops, in order: each an op of the tape, run again (a recomputation
/// in the backward part) or as it is. A value id below the tape's var count is the tape's
/// var; id + var count is its recomputed copy.
struct Schedule {
  struct Entry {
    uint32_t op;
    bool again;
    uint32_t args_begin;  ///< into args, op's argument count long
  };
  std::vector<Entry> entries;
  std::vector<uint32_t> args;
  double recomputed_flops = 0;
  size_t recomputed_ops = 0;
};

/// The schedule that keeps the ops marked in `kept` (per op; pinned ones must be marked)
/// and recomputes the rest of what the backward part reads, each op once, just before the
/// first backward op that needs it.
Schedule schedule(const Tape& t, const Analysis& a, const std::vector<uint8_t>& kept);

/// The most bytes of computed values live at once when `s` runs, each value live from its
/// op to its last reader (the tape's outputs not counted: the runtime gives them fresh
/// tensors), with the work memory of the op running. A proxy of the runtime plan's buffers, fast
/// enough to try many choices.
int64_t simulated_peak(const Tape& t, const Analysis& a, const Schedule& s);

/// The tape `s` describes; `algorithms` (per op of `t`, "" to keep the op's) sets the
/// algorithm attribute of convolutions, run again or not.
Tape emit(const Tape& t, const Schedule& s, const std::vector<std::string>& algorithms);

}  // namespace ytape::remat
