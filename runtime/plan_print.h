// The executor's plan in text form: what `ytape plan` prints, as EXPLAIN does for a query.
#pragma once

#include <string>

#include "runtime/executor.h"
#include "tape/tape.h"

namespace ytape {

/// A summary (steps, buffers, blocked values, reorders), then one line per step: the op,
/// the kernel chosen, the layout each argument is read in and each output written in
/// (`plain`, or `c8`/`c16` for channel-blocked), the reorders before the step, and the buffer
/// each output lives in. `e` must have been built from `t`.
std::string plan_str(const Tape& t, const Executor& e);

}  // namespace ytape
