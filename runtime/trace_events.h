// Profiles a trace viewer opens: the Chrome trace event format (the JSON object form,
// {"traceEvents": [...]}, as chrome://tracing, Perfetto's UI and its trace_processor read
// it), written from the steps an executor timed (Executor::set_trace).
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "runtime/executor.h"

namespace ytape {

/// One run of a traced executor: when it began (seconds from the trace's origin) and how
/// long it took, as its caller timed it.
struct TracedRun {
  double start = 0, seconds = 0;
};

/// The trace of `runs` of `e` whose steps are `events` (in any order), as JSON text:
/// - a complete event ("ph": "X") per run, named "run N", and per step, named as the
///   primitive or the fusion, on thread lane 1 of process 1 (a region's steps nest inside
///   their op's step: a scan body's trips under the scan); a step's category ("cat") is its
///   op's source location (`model.jl:12`, or "tape" for an op without one), and its "args"
///   hold the op as `ytape show` prints it, the kernel and layouts as `ytape plan` names
///   them, the bytes it reads and writes and its FLOPs (tape/cost.h);
/// - a counter track ("ph": "C") "memory" of the bytes the plan's buffers hold while each
///   step of the tape runs (the arena's slots then live, work memory included);
/// - metadata naming the process (`process`: "ytape run model.json") and the lane.
/// Times are microseconds from the first run's start. Deterministic for given events.
std::string chrome_trace(const Executor& e, std::span<const StepEvent> events,
                         std::span<const TracedRun> runs, std::string_view process);

/// One phase of a command that transforms a tape (`--stats-out`: reading, tracing, an opt
/// pass, writing): when it began (seconds from the command's start), how long it took, and
/// counts it reports (ops before and after).
struct TracePhase {
  std::string name;
  double start = 0, seconds = 0;
  std::vector<std::pair<std::string, int64_t>> counts;
};

/// The phases as a Chrome trace (the format of chrome_trace): a complete event per phase on
/// one lane of the process named `process`, its counts as its args; a phase within another's
/// time (an opt pass within "opt") nests under it in a viewer.
std::string phases_trace(std::span<const TracePhase> phases, std::string_view process);

}  // namespace ytape
