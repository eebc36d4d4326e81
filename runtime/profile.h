// Reports of where a run's time goes.
#pragma once

#include <string>
#include <vector>

#include "runtime/executor.h"
#include "tape/tape.h"

namespace ytape {

/// A table per primitive (calls per run, total time, share), then the `top` most costly
/// ops with their source locations, from times accumulated over `runs` runs.
std::string profile_report(const Tape& t, const std::vector<OpTime>& times, int runs, int top = 10);
/// profile_report of `e`'s tape and times, then the same of each region that ran (a
/// scan's body), headed by its op and its trips per run: its ms/run are per run of the
/// whole tape, its time counted in its op's too.
std::string profile_report(const Executor& e, int runs, int top = 10);

/// The time of `e`'s runs by source line, most first: each step's time at its op's
/// location, and a region op's (a scan) at the lines of its regions' steps, what is left of
/// it (the loop's own work) at its own line; per line its ms/run, share, how many ops of
/// the tape it has, and its costliest primitives. The `top` lines, then the rest summed.
std::string profile_by_line(const Executor& e, int runs, int top = 30);

/// What profile_by sums by: source lines (profile_by_line), or layers, the innermost layer
/// call each op was recorded in (Tape::scopes), "(outside layers)" for the others.
enum class ProfileBy { line, layer };
std::string profile_by(const Executor& e, ProfileBy by, int runs, int top = 30);

}  // namespace ytape
