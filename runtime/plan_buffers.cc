#include "runtime/plan_buffers.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

namespace ytape {

namespace {

constexpr int kNoSlot = Plan::kNoSlot;
constexpr size_t kNever = ~size_t{0};

// The slots free for reuse, by capacity; `bytes` holds every slot's capacity.
class SlotPool {
 public:
  explicit SlotPool(std::vector<int64_t>& bytes) : bytes_(bytes) {}

  void release(int slot) {
    if (slot != kNoSlot) free_.emplace(bytes_[slot], slot);
  }
  // The best fit, or the largest grown, or a new slot.
  int take(int64_t bytes) {
    auto fit = free_.lower_bound(bytes);
    if (fit == free_.end() && !free_.empty()) fit = std::prev(free_.end());
    if (fit == free_.end()) {
      bytes_.push_back(bytes);
      return static_cast<int>(bytes_.size() - 1);
    }
    int slot = fit->second;
    bytes_[slot] = std::max(bytes_[slot], bytes);
    free_.erase(fit);
    return slot;
  }

 private:
  std::vector<int64_t>& bytes_;
  std::multimap<int64_t, int> free_;
};

class BufferPlanner {
 public:
  explicit BufferPlanner(Plan& p)
      : p_(p),
        t_(*p.tape),
        last_use_(t_.types.size(), kNever),
        is_output_(t_.types.size(), false),
        pool_(p.slot_bytes) {}

  void run();

 private:
  void mark_outputs();
  void place_step(size_t s);
  int in_place_slot(const Plan::Step& step, Var out, size_t index) const;
  bool taken_over(const Plan::Step& step, Var a) const;

  Plan& p_;
  const Tape& t_;
  std::vector<size_t> last_use_;  // per var: the last step that reads it
  std::vector<bool> is_output_;   // per var: a tape output written plain, so fresh each run
  SlotPool pool_;
};

// Assigns every value computed by a step, except the tape's outputs written plain (fresh
// each run, so callers may keep them; a blocked one has a slot and a fresh plain copy), a
// slot. A slot is freed after the last step that reads its value
// and reused, best fit by size, by later values. An output shares a slot with an argument
// of its step only where the kernel allows it (in_place_slot): slots are freed after the
// outputs of the step are placed. A kernel's work memory (KernelTable::workspace) is a
// slot too, taken before the outputs (it is the larger: the best fit for each) and freed
// with the step: so it lies where values that died before the step lay (oneDNN's Winograd
// convolutions need tens of megabytes, which a batch's first activations have freed by then).
void BufferPlanner::run() {
  p_.slot_of.assign(t_.types.size(), kNoSlot);
  p_.slot_bytes.clear();
  p_.fresh_outputs.clear();
  p_.plain_copies.clear();
  for (size_t s = 0; s < p_.steps.size(); ++s) {
    for (Var a : p_.args(p_.steps[s])) last_use_[a.id] = s;
  }
  mark_outputs();
  for (size_t s = 0; s < p_.steps.size(); ++s) place_step(s);
}

// The tape's outputs are fresh each run; one its step writes blocked is planned from here
// on as any other value, and copied plain for the caller.
void BufferPlanner::mark_outputs() {
  for (const Output& o : t_.outputs) is_output_[o.var.id] = true;
  p_.copy_of.assign(t_.types.size(), -1);
  for (Plan::Step& step : p_.steps) {
    for (Var o : p_.outs(step)) {
      if (!is_output_[o.id]) continue;
      p_.fresh_outputs.push_back(o.id);
      if (is_blocked(p_.layout_of[o.id])) {
        p_.copy_of[o.id] = step.plain_copy = static_cast<int>(p_.plain_copies.size());
        p_.plain_copies.push_back(o.id);
        is_output_[o.id] = false;
      }
    }
  }
}

void BufferPlanner::place_step(size_t s) {
  Plan::Step& step = p_.steps[s];
  step.workspace_slot = kNoSlot;
  if (WorkspaceSize size = p_.table->workspace[step.entry]) {
    if (int64_t bytes = size(t_, *step.op, p_.layouts(step), step.variant); bytes > 0) {
      step.workspace_slot = pool_.take(bytes);
    }
  }
  for (Var o : p_.outs(step)) {
    if (is_output_[o.id]) continue;
    if (int slot = in_place_slot(step, o, s); slot != kNoSlot) {
      p_.slot_of[o.id] = slot;
      continue;
    }
    const Type& type = t_.type(o);
    p_.slot_of[o.id] = pool_.take(type.size() * dtype_size(type.dtype));
  }
  pool_.release(step.workspace_slot);
  for (Var a : p_.args(step)) {
    if (last_use_[a.id] == s && !is_output_[a.id]) {
      if (!taken_over(step, a)) pool_.release(p_.slot_of[a.id]);
      last_use_[a.id] = kNever - 1;  // released; a repeated argument must not free it twice
    }
  }
  for (Var o : p_.outs(step)) {
    if (last_use_[o.id] == kNever) pool_.release(p_.slot_of[o.id]);  // never read
  }
}

// A kernel that allows it (elementwise ops, batch norm, reshape) writes its output over an
// argument that dies with it, when the two have as many elements of the same size (the
// same shape, but for a reshape or trailing dims of 1). Saves a buffer per activation, as
// in-place ReLU does elsewhere, and a reshape's copy.
int BufferPlanner::in_place_slot(const Plan::Step& step, Var out, size_t index) const {
  if (!p_.table->in_place[step.entry] || step.num_outs != 1) return kNoSlot;
  const Type& type = t_.type(out);
  for (Var a : p_.args(step)) {
    const Type& at = t_.type(a);
    if (p_.slot_of[a.id] != kNoSlot && last_use_[a.id] == index && !is_output_[a.id] &&
        p_.layout_of[a.id] == p_.layout_of[out.id] && at.size() == type.size() &&
        dtype_size(at.dtype) == dtype_size(type.dtype)) {
      return p_.slot_of[a.id];
    }
  }
  return kNoSlot;
}

// True if the output of `step` took over the buffer of its argument `a`.
bool BufferPlanner::taken_over(const Plan::Step& step, Var a) const {
  return step.num_outs > 0 && p_.slot_of[p_.outs(step)[0].id] == p_.slot_of[a.id];
}

}  // namespace

void assign_buffers(Plan& p) {
  BufferPlanner(p).run();
}

}  // namespace ytape
