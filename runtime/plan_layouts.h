// The plan's layouts: which values stay channel-blocked between the kernels that allow it
// (runtime/layout.h), and the reorders where a step reads a value in the other layout.
#pragma once

#include "runtime/layout.h"
#include "runtime/plan.h"

namespace ytape {

/// Fills `p`'s layout_of, step_layouts, reorders and reorder_bytes, keeping values in
/// `blocked` where the kernels allow it (KernelTable::blocked_args, blocked_out); plain:
/// every value plain, no reorders. `p` must have its steps and none of these yet.
void assign_layouts(Plan& p, Layout blocked);

}  // namespace ytape
