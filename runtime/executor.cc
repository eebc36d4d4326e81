#include "runtime/executor.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <unordered_map>
#include <unordered_set>

#include "runtime/fusion.h"
#include "runtime/lower_f16.h"
#include "runtime/parallel.h"
#include "tape/print.h"

namespace ytape {

namespace {

constexpr int kNoSlot = -1;

void print_stdout(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

Executor::Executor(const Tape& t, ExecutorOptions options)
    : lowered_(has_f16(t) ? std::make_unique<const Tape>(lower_f16(t)) : nullptr),
      tape_(lowered_ ? *lowered_ : t),
      table_(kernel_table(options.kernels)) {
  values_.resize(tape_.types.size());
  context_.print = print_stdout;
  for (const Op& op : tape_.ops) {
    if (op.kind == OpKind::constant) {
      values_[op.outs[0].id] = Tensor::of_bytes(tape_.type(op.outs[0]), op.value);
    }
  }
  plan_steps(options.fusion);
  plan_layouts(!options.blocked_layouts    ? Layout::plain
               : is_blocked(options.block) ? options.block
                                           : native_blocked_layout());
  plan_variants(options.extra_work_bytes);
  start_threads();  // before the first run allocates the plan's buffers
}

void Executor::add_step(Kernel k, const Op* op, int entry, const VarList& args,
                        const VarList& outs) {
  steps_.push_back({k, op, entry, arg_vars_.size(), out_vars_.size(),
                    static_cast<uint32_t>(args.size()), static_cast<uint32_t>(outs.size()),
                    kNoLayouts, 0, 0, fused_ops_.size(), fused_ops_.size()});
  for (Var a : args) arg_vars_.push_back(a), arg_ptrs_.push_back(&values_[a.id]);
  for (Var o : outs) out_vars_.push_back(o), out_ptrs_.push_back(&values_[o.id]);
}

// One step per call op, in tape order, except that a fused group is one step, where the
// op it runs at was (FusedGroup::at).
void Executor::plan_steps(bool fusion) {
  std::vector<FusedGroup> groups;
  if (fusion) groups = find_fusions(tape_, table_);
  std::vector<FusedGroup*> group_at(tape_.ops.size(), nullptr);
  std::vector<bool> in_group(tape_.ops.size(), false);
  for (FusedGroup& g : groups) {
    group_at[g.at] = &g;
    for (size_t o : g.others) in_group[o] = true;
  }
  for (size_t i = 0; i < tape_.ops.size(); ++i) {
    const Op& op = tape_.ops[i];
    if (op.kind != OpKind::call || in_group[i]) continue;
    if (FusedGroup* g = group_at[i]) {
      int entry = KernelTable::entry(g->kind);
      add_step(table_.kernels[entry], g->op, entry, g->args, g->outs);
      for (size_t o : g->others) {
        if (&tape_.ops[o] != g->op) fused_ops_.push_back(&tape_.ops[o]);
      }
      if (&op != g->op) fused_ops_.push_back(&op);
      steps_.back().fused_end = fused_ops_.size();
      if (g->kind == Fusion::elementwise) {
        programs_.push_back(std::move(g->program));
        steps_.back().program = &programs_.back();
      }
      continue;
    }
    Kernel k = table_.kernels[KernelTable::entry(op.prim)];
    if (k == nullptr) user_error("no kernel for primitive {}", prim_name(op.prim));
    add_step(k, &op, KernelTable::entry(op.prim), op.args, op.outs);
  }
}

std::string_view Executor::step_name(const Step& s) const {
  return s.entry < kNumPrims ? prim_name(s.op->prim)
                             : fusion_name(static_cast<Fusion>(s.entry - kNumPrims));
}

// The layout a step writes its (first) output in (BlockedOut): never blocked when the value
// is not an image that can be blocked. A tape output may be blocked too (the caller gets a
// plain copy), so that asking for a value never changes how it or others are computed.
// A `follow` kernel
// writes blocked when one of its blocked-readable operands is blocked and every other is of
// the output's shape and type class (so that it can be reordered to match) or is a single
// element: in a residual block the blocked side wins, and a plain operand pays one reorder
// instead of turning the rest of the network plain. A `same` kernel (pooling) writes the
// layout of its first argument.
Layout Executor::output_layout(const Step& step) const {
  BlockedOut rule = table_.blocked_out[step.entry];
  std::span<const Var> as = args(step), os = outs(step);
  if (os.empty() || rule == BlockedOut::never) return Layout::plain;
  const Type& type = tape_.type(os[0]);
  if (!blockable(type, blocked_)) return Layout::plain;
  if (rule == BlockedOut::always) return blocked_;
  if (rule == BlockedOut::same) return layout_of_[as[0].id];
  bool any = false;
  for (size_t i = 0; i < as.size(); ++i) {
    if ((table_.blocked_args[step.entry] >> i & 1) == 0) continue;
    const Type& at = tape_.type(as[i]);
    if (at.size() == 1 || per_channel(step, at, type)) continue;
    if (at.shape != type.shape || !blockable(at, blocked_)) return Layout::plain;
    any = any || is_blocked(layout_of_[as[i].id]);
  }
  return any ? blocked_ : Layout::plain;
}

// The layout in which `step`, writing `out`, reads argument i.
Layout Executor::read_layout(const Step& step, size_t i, Layout out) const {
  Var a = args(step)[i];
  if ((table_.blocked_args[step.entry] >> i & 1) == 0) return Layout::plain;
  BlockedOut rule = table_.blocked_out[step.entry];
  if (rule == BlockedOut::always || rule == BlockedOut::never) return layout_of_[a.id];  // either
  const Type& type = tape_.type(a);
  if (out == Layout::plain || type.size() == 1) return Layout::plain;
  if (per_channel(step, type, tape_.type(outs(step)[0]))) return Layout::plain;
  return out;
}

// Whether `step` reads `arg` as a vector of one value per channel of its output `out`, an
// image (KernelTable::channel_args).
bool Executor::per_channel(const Step& step, const Type& arg, const Type& out) const {
  return table_.channel_args[step.entry] && arg.rank() == 4 && out.rank() == 4 &&
         arg.shape[0] == 1 && arg.shape[1] == 1 && arg.shape[3] == 1 &&
         arg.shape[2] == out.shape[2] && out.size() > arg.size();
}

// One pass in step order: each output gets its layout, and each argument that its step
// must read in another layout than it has gets a reorder into a copy of its own, which the
// step reads instead.
void Executor::plan_layouts(Layout blocked) {
  blocked_ = blocked;
  layout_of_.assign(tape_.types.size(), Layout::plain);
  if (!is_blocked(blocked)) return;
  for (Step& step : steps_) {
    Layout out = output_layout(step);
    step.reorders_begin = reorders_.size();
    std::vector<Layout> layouts;
    bool any_blocked = is_blocked(out);
    int64_t offset = 0;  // into the reorder buffer, which all steps share
    std::span<const Var> as = args(step);
    for (size_t i = 0; i < as.size(); ++i) {
      Var a = as[i];
      Layout l = read_layout(step, i, out);
      if (l != layout_of_[a.id]) {
        reorders_.push_back({a.id, l, offset, {}});
        arg_ptrs_[step.args_begin + i] = &reorders_.back().copy;
        const Type& type = tape_.type(a);
        offset += (type.size() * dtype_size(type.dtype) + 63) / 64 * 64;
      }
      any_blocked = any_blocked || is_blocked(l);
      layouts.push_back(l);
    }
    step.reorders_end = reorders_.size();
    reorder_bytes_ = std::max(reorder_bytes_, offset);
    if (is_blocked(out)) layout_of_[outs(step)[0].id] = out;
    if (!any_blocked) continue;
    for (Var o : outs(step)) layouts.push_back(layout_of_[o.id]);
    step.layouts_begin = step_layouts_.size();
    step_layouts_.insert(step_layouts_.end(), layouts.begin(), layouts.end());
  }
}

// A kernel that allows it (elementwise ops, batch norm, reshape) writes its output over an
// argument that dies with it, when the two have as many elements of the same size (the
// same shape, but for a reshape or trailing dims of 1). Saves a buffer per activation, as
// in-place ReLU does elsewhere, and a reshape's copy.
int Executor::in_place_slot(const Step& step, Var out, size_t index,
                            const std::vector<size_t>& last_use,
                            const std::vector<bool>& is_output) const {
  if (!table_.in_place[step.entry] || step.num_outs != 1) return kNoSlot;
  const Type& type = tape_.type(out);
  for (Var a : args(step)) {
    const Type& at = tape_.type(a);
    if (slot_of_[a.id] != kNoSlot && last_use[a.id] == index && !is_output[a.id] &&
        layout_of_[a.id] == layout_of_[out.id] && at.size() == type.size() &&
        dtype_size(at.dtype) == dtype_size(type.dtype)) {
      return slot_of_[a.id];
    }
  }
  return kNoSlot;
}

// True if the output of `step` took over the buffer of its argument `a`.
bool Executor::taken_over(const Step& step, Var a) const {
  return step.num_outs > 0 && slot_of_[outs(step)[0].id] == slot_of_[a.id];
}

// Assigns every value computed by a step, except the tape's outputs written plain (fresh
// each run, so callers may keep them; a blocked one has a slot and a fresh plain copy), a
// slot. A slot is freed after the last step that reads its value
// and reused, best fit by size, by later values. An output shares a slot with an argument
// of its step only where the kernel allows it (in_place_slot): slots are freed after the
// outputs of the step are placed. A kernel's work memory (KernelTable::workspace) is a
// slot too, taken before the outputs (it is the larger: the best fit for each) and freed
// with the step: so it lies where values that died before the step lay (oneDNN's Winograd
// convolutions need tens of megabytes, which a batch's first activations have freed by then).
void Executor::plan_buffers() {
  constexpr size_t kNever = ~size_t{0};
  slot_of_.assign(tape_.types.size(), kNoSlot);
  slot_bytes_.clear();
  fresh_outputs_.clear();
  plain_copies_.clear();
  std::vector<size_t> last_use(tape_.types.size(), kNever);
  std::vector<bool> is_output(tape_.types.size(), false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (Var a : args(steps_[s])) last_use[a.id] = s;
  }
  for (const Output& o : tape_.outputs) is_output[o.var.id] = true;
  copy_of_.assign(tape_.types.size(), -1);
  for (Step& step : steps_) {
    for (Var o : outs(step)) {
      if (!is_output[o.id]) continue;
      fresh_outputs_.push_back(o.id);
      if (is_blocked(layout_of_[o.id])) {  // planned from here on as any other value
        copy_of_[o.id] = step.plain_copy = static_cast<int>(plain_copies_.size());
        plain_copies_.push_back({o.id, {}});
        is_output[o.id] = false;
      }
    }
  }

  std::multimap<int64_t, int> free_slots;  // capacity -> slot
  auto release = [&](uint32_t var) {
    int slot = slot_of_[var];
    if (slot != kNoSlot) free_slots.emplace(slot_bytes_[slot], slot);
  };
  auto take = [&](int64_t bytes) {  // the best fit, or the largest grown, or a new slot
    auto fit = free_slots.lower_bound(bytes);
    if (fit == free_slots.end() && !free_slots.empty()) fit = std::prev(free_slots.end());
    if (fit == free_slots.end()) {
      slot_bytes_.push_back(bytes);
      return static_cast<int>(slot_bytes_.size() - 1);
    }
    int slot = fit->second;
    slot_bytes_[slot] = std::max(slot_bytes_[slot], bytes);
    free_slots.erase(fit);
    return slot;
  };
  for (size_t s = 0; s < steps_.size(); ++s) {
    Step& step = steps_[s];
    step.workspace_slot = kNoSlot;
    if (WorkspaceSize size = table_.workspace[step.entry]) {
      if (int64_t bytes = size(tape_, *step.op, layouts(step), step.variant); bytes > 0) {
        step.workspace_slot = take(bytes);
      }
    }
    for (Var o : outs(step)) {
      if (is_output[o.id]) continue;
      if (int slot = in_place_slot(step, o, s, last_use, is_output); slot != kNoSlot) {
        slot_of_[o.id] = slot;
        continue;
      }
      const Type& type = tape_.type(o);
      slot_of_[o.id] = take(type.size() * dtype_size(type.dtype));
    }
    if (step.workspace_slot != kNoSlot) {
      free_slots.emplace(slot_bytes_[step.workspace_slot], step.workspace_slot);
    }
    for (Var a : args(step)) {
      if (last_use[a.id] == s && !is_output[a.id]) {
        if (!taken_over(step, a)) release(a.id);
        last_use[a.id] = kNever - 1;  // released; a repeated argument must not free it twice
      }
    }
    for (Var o : outs(step)) {
      if (last_use[o.id] == kNever) release(o.id);  // never read
    }
  }
}

// Each step whose kernel has a faster variant takes it, in step order, where the plan
// with it (and with those taken before) needs at most `extra_bytes` more than the plan of
// standard kernels. oneDNN's Winograd convolutions need tens of megabytes of work memory
// each: with all of them ResNet-18's batch-1 step would plan 88 MB instead of 27 for 10%
// less time, while a fifth more (the default) gives the batch-8 step 21 of its 30 and keeps
// the batch-1 runs within PyTorch's memory (docs/benchmarks.md, Kernels and threads). Each try
// plans the buffers again, so that a tape with many such steps (a hostile one: 10^5 convolutions
// sharing their weights) is tried in at most kMaxTries runs of steps, taken or left
// together: planning stays linear in the steps. ResNet-18 has 21 (its gradient at batch 1),
// tried one by one.
void Executor::plan_variants(std::optional<int64_t> extra_bytes) {
  constexpr size_t kMaxTries = 64;
  plan_buffers();
  const int64_t standard = planned_bytes();
  const int64_t extra = extra_bytes.value_or(standard / 5);
  if (extra < 0) return;
  const int64_t limit = extra > INT64_MAX - standard ? INT64_MAX : standard + extra;
  std::vector<Step*> faster;
  for (Step& step : steps_) {
    WorkspaceSize size = table_.workspace[step.entry];
    if (size != nullptr && size(tape_, *step.op, layouts(step), Variant::faster) >= 0) {
      faster.push_back(&step);
    }
  }
  const size_t run = (faster.size() + kMaxTries - 1) / kMaxTries;
  for (size_t begin = 0; begin < faster.size(); begin += run) {
    std::span<Step*> steps(faster.data() + begin, std::min(run, faster.size() - begin));
    for (Step* step : steps) step->variant = Variant::faster;
    plan_buffers();
    if (planned_bytes() <= limit) continue;
    for (Step* step : steps) step->variant = Variant::standard;
  }
  plan_buffers();
}

std::vector<PlannedStep> Executor::plan() const {
  std::vector<PlannedStep> plan;
  for (const Step& s : steps_) {
    PlannedStep p;
    p.op = s.op;
    p.name = step_name(s);
    for (Var a : args(s)) p.args.push_back(a);
    for (Var o : outs(s)) p.outs.push_back(o);
    p.fused.assign(fused_ops_.begin() + static_cast<ptrdiff_t>(s.fused_begin),
                   fused_ops_.begin() + static_cast<ptrdiff_t>(s.fused_end));
    const Layout* layouts = this->layouts(s);
    p.kernel = table_.describe[s.entry](tape_, *s.op, layouts, s.variant);
    for (size_t i = 0; i < s.num_args + s.num_outs; ++i) {
      Layout l = layouts != nullptr ? layouts[i] : Layout::plain;
      (i < s.num_args ? p.reads : p.writes).push_back(l);
    }
    for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
      p.reorders.emplace_back(Var{reorders_[r].var}, reorders_[r].to);
    }
    for (Var o : outs(s)) p.buffers.push_back(slot_of_[o.id]);
    p.workspace = s.workspace_slot;
    p.variant = s.variant;
    p.copied_plain = s.plain_copy >= 0;
    plan.push_back(std::move(p));
  }
  return plan;
}

int64_t Executor::planned_bytes() const {
  int64_t total = 0;
  for (int64_t b : slot_bytes_) total += b;
  total += reorder_bytes_;
  return total;
}

void Executor::bind_input(size_t i, const Tensor& value) {
  const Op& op = tape_.ops[i];
  const Type& want = tape_.type(op.outs[0]);
  if (value.type() != want) {
    user_error("input '{}' is {}, but the tape declares {}", op.name, type_str(value.type()),
               type_str(want));
  }
  values_[op.outs[0].id] = value;
}

void Executor::bind_inputs(const TensorMap& inputs) {
  std::unordered_map<std::string_view, const Tensor*> given;
  for (const auto& [name, tensor] : inputs) given.emplace(name, &tensor);
  size_t used = 0;
  const size_t num_inputs = tape_.num_inputs();  // counted on each call
  for (size_t i = 0; i < num_inputs; ++i) {
    const Op& op = tape_.ops[i];
    auto it = given.find(op.name);
    if (it == given.end()) {
      user_error("missing input '{}' ({})", op.name, type_str(tape_.type(op.outs[0])));
    }
    bind_input(i, *it->second);
    ++used;
  }
  if (used != given.size()) {
    std::unordered_set<std::string_view> known;
    for (size_t i = 0; i < num_inputs; ++i) known.insert(tape_.ops[i].name);
    for (const auto& [name, tensor] : inputs) {
      if (!known.contains(name)) user_error("'{}' is not an input of tape {}", name, tape_.name);
    }
  }
}

void Executor::fail(const Step& step, const std::exception& e) const {
  size_t index = static_cast<size_t>(step.op - tape_.ops.data());
  std::string loc = tape_.loc_str(step.op->loc);
  if (step.op->prim == Prim::guard) {
    // A guard's message is written for the program's author and often names its source
    // line already; the op's text would only repeat it.
    std::string message = attrs_of<Prim::guard>(step.op->attrs).message;
    bool located = !loc.empty() && message.rfind(loc, 0) == 0;
    user_error("op {}{}: {}", index + 1, loc.empty() || located ? "" : " at " + loc, e.what());
  }
  user_error("op {} ({}){}: {}", index + 1, print_op(tape_, *step.op),
             loc.empty() ? "" : " at " + loc, e.what());
}

std::vector<Tensor> Executor::run(const TensorMap& inputs) {
  bind_inputs(inputs);
  execute();
  std::vector<Tensor> outs;
  for (const Output& o : tape_.outputs) outs.push_back(returned(o.var.id));
  return outs;
}

void Executor::run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  if (inputs.size() != tape_.num_inputs()) {
    user_error("{} inputs given, but tape {} has {}", inputs.size(), tape_.name,
               tape_.num_inputs());
  }
  for (size_t i = 0; i < inputs.size(); ++i) bind_input(i, inputs[i]);
  execute();
  outputs.resize(tape_.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = returned(tape_.outputs[i].var.id);
}

void Executor::execute() {
  if (!allocated_) {
    for (int64_t bytes : slot_bytes_) slots_.push_back(allocate_buffer(bytes));
    for (size_t v = 0; v < slot_of_.size(); ++v) {
      if (slot_of_[v] != kNoSlot)
        values_[v] = Tensor::view(tape_.types[v], slots_[slot_of_[v]].get());
    }
    if (!reorders_.empty()) reorder_buffer_ = allocate_buffer(reorder_bytes_);
    for (Reorder& r : reorders_) {
      char* at = static_cast<char*>(reorder_buffer_.get()) + r.offset;
      r.copy = Tensor::view(tape_.types[r.var], at);
    }
    allocated_ = true;
  }
  // An output the caller has let go of since the last run keeps its buffer: a fresh one
  // would be faulted in page by page again (the gradients of a training step are as large
  // as its weights). One the caller still holds, as a training loop holds the state it
  // passes to the next run, alternates with the buffer of the run before, once the caller
  // has let that go.
  spare_outputs_.resize(fresh_outputs_.size());
  for (size_t k = 0; k < fresh_outputs_.size(); ++k) {
    Tensor& value = returned(fresh_outputs_[k]);
    if (value.sole_owner()) continue;
    Tensor& spare = spare_outputs_[k];
    if (spare.sole_owner()) {
      std::swap(value, spare);
    } else {
      spare = std::move(value);
      value = Tensor::uninitialized(tape_.types[fresh_outputs_[k]]);
    }
  }
  if (profiling_ && times_.empty()) {
    for (const Step& s : steps_) {
      times_.push_back({static_cast<size_t>(s.op - tape_.ops.data()), step_name(s), 0});
    }
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    KernelCall call{*s.op,
                    {arg_ptrs_.data() + s.args_begin, s.num_args},
                    {out_ptrs_.data() + s.outs_begin, s.num_outs},
                    &context_,
                    layouts(s),
                    s.program,
                    s.workspace_slot == kNoSlot ? nullptr : slots_[s.workspace_slot].get(),
                    s.workspace_slot == kNoSlot ? 0 : slot_bytes_[s.workspace_slot],
                    s.variant};
    auto start =
        profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
        Reorder& re = reorders_[r];
        relayout(values_[re.var], layout_of_[re.var], re.copy, re.to);
      }
      s.kernel(call);
      if (s.plain_copy >= 0) {
        PlainCopy& c = plain_copies_[s.plain_copy];
        relayout(values_[c.var], layout_of_[c.var], c.plain, Layout::plain);
      }
    } catch (const UserError& e) {
      fail(s, e);
    }
    if (profiling_) {
      times_[i].seconds +=
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
}

}  // namespace ytape
