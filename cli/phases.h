// The phases of a command that transforms a tape, for `--stats-out`: each phase runs from the
// end of the one before (or the command's start) to when it is marked, and the log is
// written as a Chrome trace (runtime/trace_events.h) that Perfetto opens.
#pragma once

#include <CLI/CLI.hpp>
#include <chrono>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "runtime/trace_events.h"

namespace ytape::cli {

class PhaseLog {
 public:
  using Counts = std::vector<std::pair<std::string, int64_t>>;
  /// Ends the phase in hand now, naming it; returns its index.
  size_t mark(std::string name, Counts counts = {});
  /// A phase inside phase `outer` (an opt pass in "opt"): `seconds` long, starting where the
  /// last one added inside it ended (or where `outer` began).
  void add_inside(size_t outer, std::string name, double seconds, Counts counts = {});
  /// Writes the trace to `path` (nothing when `path` is empty); `process` names the command.
  void write(const std::string& path, const std::string& process) const;

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
  double last_end_ = 0;
  std::vector<TracePhase> phases_;
  std::vector<double> inner_end_;  // per phase: where the next phase added inside it starts
};

/// Declares `--stats-out FILE` on `sub`.
void add_stats_out(CLI::App& sub, std::string& path);

}  // namespace ytape::cli
