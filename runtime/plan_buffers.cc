#include "runtime/plan_buffers.h"

#include <algorithm>
#include <iterator>
#include <map>
#include <vector>

namespace ytape {

namespace {

constexpr int kNoSlot = Plan::kNoSlot;
constexpr size_t kNever = ~size_t{0};

// Up to this many values computed by steps, each value has a slot of its own (an output
// written over its argument shares the argument's), and slots are packed into the arena by
// their lifetimes; beyond it, values reuse freed slots, laid one after the other, which
// keeps the packing's quadratic time away from tapes of millions of small values.
constexpr size_t kPackedValues = 8192;

// The slots: their capacities (`bytes`), lifetimes in steps, and which are free for reuse.
class SlotPool {
 public:
  SlotPool(std::vector<int64_t>& bytes, bool reuse) : bytes_(bytes), reuse_(reuse) {}

  void release(int slot, size_t step) {
    if (slot == kNoSlot) return;
    last_[slot] = step;
    if (reuse_) free_.emplace(bytes_[slot], slot);
  }
  // With reuse, the best fit, or the largest grown; else, or with none free, a new slot.
  int take(int64_t bytes, size_t step) {
    auto fit = free_.lower_bound(bytes);
    if (fit == free_.end() && !free_.empty()) fit = std::prev(free_.end());
    if (fit == free_.end()) {
      bytes_.push_back(bytes);
      first_.push_back(step);
      last_.push_back(step);
      return static_cast<int>(bytes_.size() - 1);
    }
    int slot = fit->second;
    bytes_[slot] = std::max(bytes_[slot], bytes);
    free_.erase(fit);
    return slot;
  }
  /// Places every slot in one arena (`offsets`), slots whose lifetimes overlap apart (with
  /// reuse, all apart); returns the arena's size.
  int64_t pack(std::vector<int64_t>& offsets) const;

 private:
  std::vector<int64_t>& bytes_;
  bool reuse_;
  std::vector<size_t> first_, last_;  // per slot: the steps it is taken and last released
  std::multimap<int64_t, int> free_;
};

// Greedy by size (as TensorFlow Lite's arena planner): the largest slot first, each at
// the lowest offset clear of the slots placed so far that are live with it. Near the
// largest live set, where reusing slots as they free (growing one that is too small) wastes
// a third or more on a network's gradient tape.
int64_t SlotPool::pack(std::vector<int64_t>& offsets) const {
  auto aligned = [&](int slot) { return (bytes_[slot] + 63) / 64 * 64; };
  if (reuse_) {  // slots reused all along are live together: one after the other
    offsets.assign(bytes_.size(), 0);
    int64_t end = 0;
    for (size_t k = 0; k < bytes_.size(); ++k)
      offsets[k] = end, end += aligned(static_cast<int>(k));
    return end;
  }
  std::vector<int> order(bytes_.size());
  for (size_t k = 0; k < order.size(); ++k) order[k] = static_cast<int>(k);
  std::ranges::stable_sort(order, [&](int a, int b) { return bytes_[a] > bytes_[b]; });
  offsets.assign(bytes_.size(), 0);
  std::vector<int> placed;  // by offset
  int64_t arena = 0;
  for (int slot : order) {
    int64_t at = 0;
    for (int other : placed) {
      if (last_[other] < first_[slot] || last_[slot] < first_[other]) continue;
      if (offsets[other] >= at + aligned(slot)) break;
      at = std::max(at, offsets[other] + aligned(other));
    }
    offsets[slot] = at;
    arena = std::max(arena, at + aligned(slot));
    auto pos = std::ranges::upper_bound(placed, at, {}, [&](int k) { return offsets[k]; });
    placed.insert(pos, slot);
  }
  return arena;
}

// Whether the step's output is its argument's bytes seen anew (a reshape, stop_gradient),
// which shares its slot whenever it may.
bool is_view(const Plan::Step& step) {
  return step.entry == KernelTable::entry(Prim::reshape) ||
         step.entry == KernelTable::entry(Prim::stop_gradient);
}

class BufferPlanner {
 public:
  explicit BufferPlanner(Plan& p)
      : p_(p),
        t_(*p.tape),
        last_use_(t_.types.size(), kNever),
        is_output_(t_.types.size(), false),
        pool_(p.slot_bytes, p.out_vars.size() > kPackedValues) {}

  void run();

 private:
  void mark_outputs();
  void mark_donations();
  bool may_donate(uint32_t out, uint32_t in, const std::vector<size_t>& step_of) const;
  void mark_output_views();
  void place_step(size_t s);
  int take(int64_t bytes, size_t s);
  void leave(int slot, size_t s);
  int shared_slot(const Plan::Step& step, Var out, size_t index) const;

  Plan& p_;
  const Tape& t_;
  std::vector<size_t> last_use_;  // per var: the last step that reads it
  std::vector<bool> is_output_;   // per var: a tape output written plain, so fresh each run
  SlotPool pool_;
  std::vector<int> users_;  // per slot: the values in it not yet past their last reader
};

// Assigns every value computed by a step, except the tape's outputs written plain (fresh
// each run, so callers may keep them; a blocked one has a slot and a fresh plain copy), a
// slot, which lives from that step until the last reader of every value in it has run. An
// output shares a slot with an argument of its step where shared_slot allows it: slots are
// left after the outputs of the step are placed. A kernel's work memory
// (KernelTable::workspace) is a slot too, for its step alone: so it lies where values that
// died before the step lay (oneDNN's Winograd convolutions need tens of megabytes, which a
// batch's first activations have freed by then). The slots are then packed into the arena.
void BufferPlanner::run() {
  p_.slot_of.assign(t_.types.size(), kNoSlot);
  p_.slot_bytes.clear();
  p_.slot_offset.clear();
  p_.fresh_outputs.clear();
  p_.plain_copies.clear();
  for (size_t s = 0; s < p_.steps.size(); ++s) {
    for (Var a : p_.args(p_.steps[s])) last_use_[a.id] = s;
  }
  mark_outputs();
  mark_donations();
  mark_output_views();
  for (size_t s = 0; s < p_.steps.size(); ++s) place_step(s);
  p_.arena_bytes = pool_.pack(p_.slot_offset);
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

// Keeps the donations (ExecutorOptions::donate) that may_donate allows, each input and
// output once.
void BufferPlanner::mark_donations() {
  p_.donations.clear();
  if (p_.options.donate.empty()) return;
  std::vector<size_t> step_of(t_.types.size(), kNever);  // per var: the step that writes it
  for (size_t s = 0; s < p_.steps.size(); ++s) {
    for (Var o : p_.outs(p_.steps[s])) step_of[o.id] = s;
  }
  std::vector<bool> taken(t_.types.size(), false);
  const size_t inputs = t_.num_inputs();
  for (auto [output, input] : p_.options.donate) {
    if (output >= t_.outputs.size() || input >= inputs) continue;
    uint32_t out = t_.outputs[output].var.id, in = t_.ops[input].outs[0].id;
    if (taken[out] || taken[in] || !may_donate(out, in, step_of)) continue;
    taken[out] = taken[in] = true;
    p_.donations.emplace_back(out, in);
  }
}

// Whether tape output `out` may be written in the buffer of input `in`: they have one
// type, a step computes `out`, the input is no tape output (is_output_ holds for every
// input that is one), and no step reads it after that step; the step itself only when
// its kernel may write its first output over an argument (KernelTable::in_place) and that
// output is `out` (or an elementwise group's other output that its program allows), or
// when `out` is the plain copy made after it. A reshape's output is a
// view: the copy it makes when its output has a buffer of its own must not read its own
// result.
bool BufferPlanner::may_donate(uint32_t out, uint32_t in,
                               const std::vector<size_t>& step_of) const {
  const size_t s = step_of[out];
  if (s == kNever || t_.types[out] != t_.types[in] || is_output_[in]) return false;
  const size_t last = last_use_[in];
  if (last == kNever || last < s) return true;
  if (last > s) return false;
  const Plan::Step& step = p_.steps[s];
  if (p_.copy_of[out] >= 0) return true;
  if (!p_.table->in_place[step.entry] || is_view(step)) return false;
  std::span<const Var> outs = p_.outs(step), args = p_.args(step);
  if (outs[0].id == out) return true;
  // An elementwise group's other outputs (an optimizer's new moments) as its program allows.
  for (size_t k = 1; step.program != nullptr && k < outs.size(); ++k) {
    for (size_t a = 0; outs[k].id == out && a < args.size(); ++a) {
      if (args[a].id == in) return step.program->may_write_over(k, a);
    }
  }
  return false;
}

// A value read only by a reshape that makes it a tape output (or a value so written) is
// written in the output's fresh buffer, of which it is a view: a per-example weight
// gradient, reshaped from the grouped convolution's filter, is not copied.
void BufferPlanner::mark_output_views() {
  p_.output_views.clear();
  std::vector<int> readers(t_.types.size(), 0);
  std::vector<bool> computed(t_.types.size(), false);
  for (const Plan::Step& step : p_.steps) {
    for (Var a : p_.args(step)) ++readers[a.id];
    for (Var o : p_.outs(step)) computed[o.id] = true;
  }
  std::vector<int64_t> root(t_.types.size(), -1);  // per var: the output it is written in
  for (uint32_t o : p_.fresh_outputs) {
    if (is_output_[o]) root[o] = o;
  }
  for (auto [out, in] : p_.donations) root[out] = -1;  // written in the input, at its step
  const int reshape = KernelTable::entry(Prim::reshape);
  for (auto step = p_.steps.rbegin(); step != p_.steps.rend(); ++step) {
    if (step->entry != reshape) continue;
    Var out = p_.outs(*step)[0], a = p_.args(*step)[0];
    if (root[out.id] < 0 || root[a.id] >= 0 || is_output_[a.id] || !computed[a.id] ||
        readers[a.id] != 1 || is_blocked(p_.layout_of[a.id])) {
      continue;
    }
    root[a.id] = root[out.id];
    is_output_[a.id] = true;  // no slot: the executor gives it the output's buffer
    p_.output_views.emplace_back(a.id, static_cast<uint32_t>(root[out.id]));
  }
}

void BufferPlanner::place_step(size_t s) {
  Plan::Step& step = p_.steps[s];
  step.workspace_slot = kNoSlot;
  if (WorkspaceSize size = p_.table->workspace[step.entry]) {
    if (int64_t bytes = size(t_, *step.op, p_.layouts(step), step.variant); bytes > 0) {
      step.workspace_slot = take(bytes, s);
    }
  }
  for (Var o : p_.outs(step)) {
    if (is_output_[o.id]) continue;
    if (int slot = shared_slot(step, o, s); slot != kNoSlot) {
      p_.slot_of[o.id] = slot;
      ++users_[slot];
      continue;
    }
    const Type& type = t_.type(o);
    p_.slot_of[o.id] = take(type.size() * dtype_size(type.dtype), s);
  }
  leave(step.workspace_slot, s);
  for (Var a : p_.args(step)) {
    if (last_use_[a.id] == s && !is_output_[a.id]) {
      leave(p_.slot_of[a.id], s);
      last_use_[a.id] = kNever - 1;  // released; a repeated argument must not free it twice
    }
  }
  for (Var o : p_.outs(step)) {
    if (last_use_[o.id] == kNever && !is_output_[o.id]) leave(p_.slot_of[o.id], s);  // never read
  }
}

int BufferPlanner::take(int64_t bytes, size_t s) {
  int slot = pool_.take(bytes, s);
  if (static_cast<size_t>(slot) >= users_.size()) users_.resize(slot + 1, 0);
  users_[slot] = 1;
  return slot;
}

// One value in `slot` is done with it; the last frees it.
void BufferPlanner::leave(int slot, size_t s) {
  if (slot != kNoSlot && --users_[slot] == 0) pool_.release(slot, s);
}

// The slot of an argument that `out` may share: a reshape's (the same bytes: the two are
// views of one buffer, which lives while either does), or, where the kernel allows it
// (elementwise ops, batch norm and its gradient), one of an argument that dies with it and
// that nothing else shares, when the two have as many elements of the same size. Saves a
// buffer per activation, as in-place ReLU does elsewhere, and a reshape's copy.
int BufferPlanner::shared_slot(const Plan::Step& step, Var out, size_t index) const {
  if (!p_.table->in_place[step.entry] || out != p_.outs(step)[0]) return kNoSlot;
  const bool view = is_view(step);
  const Type& type = t_.type(out);
  for (Var a : p_.args(step)) {
    const Type& at = t_.type(a);
    int slot = p_.slot_of[a.id];
    if (slot != kNoSlot && !is_output_[a.id] && p_.layout_of[a.id] == p_.layout_of[out.id] &&
        at.size() == type.size() && dtype_size(at.dtype) == dtype_size(type.dtype) &&
        (view || (last_use_[a.id] == index && users_[slot] == 1))) {
      return slot;
    }
  }
  return kNoSlot;
}

}  // namespace

void assign_buffers(Plan& p) {
  BufferPlanner(p).run();
}

}  // namespace ytape
