// The plan's buffers: which slot of memory holds each value computed by a step, and each
// kernel's work memory, by liveness.
#pragma once

#include "runtime/plan.h"

namespace ytape {

/// Fills `p`'s slot_of, slot_bytes, slot_offset, arena_bytes, fresh_outputs, plain_copies and
/// copy_of, and each step's workspace_slot and plain_copy, for the steps' layouts and variants as
/// they are; planning again after a variant changed replaces them. `p` must have its steps and
/// layouts (runtime/plan_layouts.h).
///
/// A value gets a slot when computed, live until its last reader has run; slots lie in one
/// arena, each clear of those live with it, the largest placed first (for tapes of more
/// than a few thousand values, later values reuse freed slots instead, best fit by size,
/// and the arena holds those slots). A reshape's output is a view of its argument's slot, which
/// lives while either does. An output shares a slot with an argument of its step
/// where the kernel allows it (KernelTable::in_place). A kernel's work memory
/// (KernelTable::workspace) is a slot that lives for its step alone.
void assign_buffers(Plan& p);

}  // namespace ytape
