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

}  // namespace ytape
