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

Executor::Executor(const Tape& t, KernelSet kernels) : tape_(t), table_(kernel_table(kernels)) {
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
    steps_.push_back({k, &op, arg_ptrs_.size(), out_ptrs_.size()});
    for (Var a : op.args) arg_ptrs_.push_back(&values_[a.id]);
    for (Var o : op.outs) out_ptrs_.push_back(&values_[o.id]);
  }
  plan_buffers();
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

int64_t Executor::planned_bytes() const {
  int64_t total = 0;
  for (int64_t b : slot_bytes_) total += b;
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
    KernelCall call{*s.op, {arg_ptrs_.data() + s.args_begin, s.op->args.size()},
                    {out_ptrs_.data() + s.outs_begin, s.op->outs.size()}, &context_};
    auto start = profiling_ ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
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
