#include "runtime/executor.h"

#include <fmt/format.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <unordered_map>

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
    : tape_(t), table_(kernel_table(options.kernels)) {
  values_.resize(t.types.size());
  slot_of_.assign(t.types.size(), kNoSlot);
  context_.print = print_stdout;
  for (const Op& op : t.ops) {
    if (op.kind == OpKind::constant) {
      values_[op.outs[0].id] = Tensor::of_bytes(t.type(op.outs[0]), op.value);
    }
    if (op.kind != OpKind::call) continue;
    Kernel k = table_.kernels[static_cast<int>(op.prim)];
    if (k == nullptr) user_error("no kernel for primitive {}", prim_name(op.prim));
    steps_.push_back({k, &op, arg_ptrs_.size(), out_ptrs_.size(), kNoLayouts, 0, 0});
    for (Var a : op.args) arg_ptrs_.push_back(&values_[a.id]);
    for (Var o : op.outs) out_ptrs_.push_back(&values_[o.id]);
  }
  plan_layouts(options.blocked_layouts);
  plan_buffers();
}

// The layout a step writes its (first) output in (BlockedOut): never blocked when the value
// is returned to the caller or is not an image that can be blocked. A `follow` kernel
// writes blocked when one of its blocked-readable operands is blocked and every other is of
// the output's shape and type class (so that it can be reordered to match) or is a single
// element: in a residual block the blocked side wins, and a plain operand pays one reorder
// instead of turning the rest of the network plain.
Layout Executor::output_layout(const Op& op, const std::vector<bool>& is_output) const {
  int p = static_cast<int>(op.prim);
  BlockedOut rule = table_.blocked_out[p];
  if (op.outs.empty() || rule == BlockedOut::never || is_output[op.outs[0].id]) {
    return Layout::plain;
  }
  const Type& type = tape_.type(op.outs[0]);
  if (!blockable(type)) return Layout::plain;
  if (rule == BlockedOut::always) return Layout::c16;
  bool any = false;
  for (size_t i = 0; i < op.args.size(); ++i) {
    if ((table_.blocked_args[p] >> i & 1) == 0) continue;
    const Type& at = tape_.type(op.args[i]);
    if (at.size() == 1) continue;
    if (at.shape != type.shape || !blockable(at)) return Layout::plain;
    any = any || layout_of_[op.args[i].id] == Layout::c16;
  }
  return any ? Layout::c16 : Layout::plain;
}

// The layout in which the step of `op`, writing `out`, reads argument i.
Layout Executor::read_layout(const Op& op, size_t i, Layout out) const {
  int p = static_cast<int>(op.prim);
  Layout has = layout_of_[op.args[i].id];
  if ((table_.blocked_args[p] >> i & 1) == 0) return Layout::plain;
  if (table_.blocked_out[p] != BlockedOut::follow) return has;  // reads either
  if (out == Layout::plain || tape_.type(op.args[i]).size() == 1) return Layout::plain;
  return Layout::c16;
}

// One pass in step order: each output gets its layout, and each argument that its step
// must read in another layout than it has gets a reorder into a copy of its own, which the
// step reads instead.
void Executor::plan_layouts(bool blocked) {
  layout_of_.assign(tape_.types.size(), Layout::plain);
  if (!blocked) return;
  std::vector<bool> is_output(tape_.types.size(), false);
  for (const Output& o : tape_.outputs) is_output[o.var.id] = true;
  for (Step& step : steps_) {
    const Op& op = *step.op;
    Layout out = output_layout(op, is_output);
    step.reorders_begin = reorders_.size();
    std::vector<Layout> layouts;
    bool any_blocked = out == Layout::c16;
    int64_t offset = 0;  // into the reorder buffer, which all steps share
    for (size_t i = 0; i < op.args.size(); ++i) {
      Var a = op.args[i];
      Layout l = read_layout(op, i, out);
      if (l != layout_of_[a.id]) {
        reorders_.push_back({a.id, l, offset, {}});
        arg_ptrs_[step.args_begin + i] = &reorders_.back().copy;
        const Type& type = tape_.type(a);
        offset += (type.size() * dtype_size(type.dtype) + 63) / 64 * 64;
      }
      any_blocked = any_blocked || l == Layout::c16;
      layouts.push_back(l);
    }
    step.reorders_end = reorders_.size();
    reorder_bytes_ = std::max(reorder_bytes_, offset);
    if (out == Layout::c16) layout_of_[op.outs[0].id] = out;
    if (!any_blocked) continue;
    for (Var o : op.outs) layouts.push_back(layout_of_[o.id]);
    step.layouts_begin = step_layouts_.size();
    step_layouts_.insert(step_layouts_.end(), layouts.begin(), layouts.end());
  }
}

// A kernel that allows it (elementwise ops, batch norm) writes its output over an argument
// that dies with it, when the two have the same shape and element size. Saves a buffer
// per activation, as in-place ReLU does elsewhere.
int Executor::in_place_slot(const Op& op, Var out, size_t step, const std::vector<size_t>& last_use,
                            const std::vector<bool>& is_output) const {
  if (!table_.in_place[static_cast<int>(op.prim)] || op.outs.size() != 1) return kNoSlot;
  const Type& type = tape_.type(out);
  for (Var a : op.args) {
    const Type& at = tape_.type(a);
    if (slot_of_[a.id] != kNoSlot && last_use[a.id] == step && !is_output[a.id] &&
        layout_of_[a.id] == layout_of_[out.id] &&
        at.shape == type.shape && dtype_size(at.dtype) == dtype_size(type.dtype)) {
      return slot_of_[a.id];
    }
  }
  return kNoSlot;
}

// True if the output of `op` took over the buffer of its argument `a`.
bool Executor::taken_over(const Op& op, Var a) const {
  return !op.outs.empty() && slot_of_[op.outs[0].id] == slot_of_[a.id];
}

// Assigns every value computed by a step, except the tape's outputs (fresh each run, so
// callers may keep them), a slot. A slot is freed after the last step that reads its value
// and reused, best fit by size, by later values. An output shares a slot with an argument
// of its step only where the kernel allows it (in_place_slot): slots are freed after the
// outputs of the step are placed.
void Executor::plan_buffers() {
  constexpr size_t kNever = ~size_t{0};
  std::vector<size_t> last_use(tape_.types.size(), kNever);
  std::vector<bool> is_output(tape_.types.size(), false);
  for (size_t s = 0; s < steps_.size(); ++s) {
    for (Var a : steps_[s].op->args) last_use[a.id] = s;
  }
  for (const Output& o : tape_.outputs) is_output[o.var.id] = true;
  for (const Step& step : steps_) {
    for (Var o : step.op->outs) {
      if (is_output[o.id]) fresh_outputs_.push_back(o.id);
    }
  }

  std::multimap<int64_t, int> free_slots;  // capacity -> slot
  auto release = [&](uint32_t var) {
    int slot = slot_of_[var];
    if (slot != kNoSlot) free_slots.emplace(slot_bytes_[slot], slot);
  };
  for (size_t s = 0; s < steps_.size(); ++s) {
    const Op& op = *steps_[s].op;
    for (Var o : op.outs) {
      if (is_output[o.id]) continue;
      if (int slot = in_place_slot(op, o, s, last_use, is_output); slot != kNoSlot) {
        slot_of_[o.id] = slot;
        continue;
      }
      const Type& type = tape_.type(o);
      int64_t bytes = type.size() * dtype_size(type.dtype);
      auto fit = free_slots.lower_bound(bytes);
      if (fit == free_slots.end() && !free_slots.empty()) fit = std::prev(free_slots.end());
      int slot;
      if (fit != free_slots.end()) {
        slot = fit->second;
        slot_bytes_[slot] = std::max(slot_bytes_[slot], bytes);
        free_slots.erase(fit);
      } else {
        slot = static_cast<int>(slot_bytes_.size());
        slot_bytes_.push_back(bytes);
      }
      slot_of_[o.id] = slot;
    }
    for (Var a : op.args) {
      if (last_use[a.id] == s && !is_output[a.id]) {
        if (!taken_over(op, a)) release(a.id);
        last_use[a.id] = kNever - 1;  // released; a repeated argument must not free it twice
      }
    }
    for (Var o : op.outs) {
      if (last_use[o.id] == kNever) release(o.id);  // never read
    }
  }
}

std::vector<PlannedStep> Executor::plan() const {
  std::vector<PlannedStep> plan;
  for (const Step& s : steps_) {
    const Op& op = *s.op;
    PlannedStep p;
    p.op = &op;
    const Layout* layouts =
        s.layouts_begin == kNoLayouts ? nullptr : &step_layouts_[s.layouts_begin];
    p.kernel = table_.describe[static_cast<int>(op.prim)](tape_, op, layouts);
    for (size_t i = 0; i < op.args.size() + op.outs.size(); ++i) {
      Layout l = layouts != nullptr ? layouts[i] : Layout::plain;
      (i < op.args.size() ? p.reads : p.writes).push_back(l);
    }
    for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
      p.reorders.emplace_back(Var{reorders_[r].var}, reorders_[r].to);
    }
    for (Var o : op.outs) p.buffers.push_back(slot_of_[o.id]);
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

void Executor::bind_inputs(const TensorMap& inputs) {
  std::unordered_map<std::string_view, const Tensor*> given;
  for (const auto& [name, tensor] : inputs) given.emplace(name, &tensor);
  size_t used = 0;
  for (size_t i = 0; i < tape_.num_inputs(); ++i) {
    const Op& op = tape_.ops[i];
    const Type& want = tape_.type(op.outs[0]);
    auto it = given.find(op.name);
    if (it == given.end()) user_error("missing input '{}' ({})", op.name, type_str(want));
    if (it->second->type() != want) {
      user_error("input '{}' is {}, but the tape declares {}", op.name,
                 type_str(it->second->type()), type_str(want));
    }
    values_[op.outs[0].id] = *it->second;
    ++used;
  }
  if (used != given.size()) {
    for (const auto& [name, tensor] : inputs) {
      bool known = false;
      for (size_t i = 0; i < tape_.num_inputs() && !known; ++i) known = tape_.ops[i].name == name;
      if (!known) user_error("'{}' is not an input of tape {}", name, tape_.name);
    }
  }
}

void Executor::fail(const Step& step, const std::exception& e) const {
  size_t index = static_cast<size_t>(step.op - tape_.ops.data());
  std::string loc = tape_.loc_str(step.op->loc);
  if (step.op->prim == Prim::guard) {
    // A guard's message is written for the program's author and often names its source
    // line already; the op's text would only repeat it.
    std::string message = step.op->attrs.get_string("message");
    bool located = !loc.empty() && message.rfind(loc, 0) == 0;
    user_error("op {}{}: {}", index + 1, loc.empty() || located ? "" : " at " + loc, e.what());
  }
  user_error("op {} ({}){}: {}", index + 1, print_op(tape_, *step.op), loc.empty() ? "" : " at " + loc,
             e.what());
}

std::vector<Tensor> Executor::run(const TensorMap& inputs) {
  bind_inputs(inputs);
  if (!allocated_) {
    for (int64_t bytes : slot_bytes_) slots_.push_back(allocate_buffer(bytes));
    for (size_t v = 0; v < slot_of_.size(); ++v) {
      if (slot_of_[v] != kNoSlot) values_[v] = Tensor::view(tape_.types[v], slots_[slot_of_[v]].get());
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
  // as its weights).
  for (uint32_t v : fresh_outputs_) {
    if (!values_[v].sole_owner()) values_[v] = Tensor::uninitialized(tape_.types[v]);
  }
  if (profiling_ && times_.empty()) {
    for (const Step& s : steps_) times_.push_back({static_cast<size_t>(s.op - tape_.ops.data()), 0});
  }
  for (size_t i = 0; i < steps_.size(); ++i) {
    const Step& s = steps_[i];
    const Layout* layouts =
        s.layouts_begin == kNoLayouts ? nullptr : step_layouts_.data() + s.layouts_begin;
    KernelCall call{*s.op, {arg_ptrs_.data() + s.args_begin, s.op->args.size()},
                    {out_ptrs_.data() + s.outs_begin, s.op->outs.size()}, &context_, layouts};
    auto start = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
        Reorder& re = reorders_[r];
        relayout(values_[re.var], layout_of_[re.var], re.copy, re.to);
      }
      s.kernel(call);
    } catch (const UserError& e) {
      fail(s, e);
    }
    if (profiling_) {
      times_[i].seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    }
  }
  std::vector<Tensor> outs;
  for (const Output& o : tape_.outputs) outs.push_back(values_[o.var.id]);
  return outs;
}

}  // namespace ytape
