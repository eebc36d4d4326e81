#include "runtime/executor.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_map>
#include <unordered_set>

#include "runtime/file_dtype.h"
#include "runtime/parallel.h"
#include "tape/print.h"

namespace ytape {

namespace {

void print_stdout(std::string_view line) {
  std::fwrite(line.data(), 1, line.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

Executor::Executor(const Tape& t, ExecutorOptions options)
    : plan_(plan_tape(t, options)), options_(options) {
  const Tape& planned = tape();
  values_.resize(planned.types.size());
  context_.print = print_stdout;
  for (const Op& op : planned.ops) {
    if (op.kind == OpKind::constant) {
      values_[op.outs[0].id] = Tensor::of_bytes(planned.type(op.outs[0]), op.value);
    }
  }
  for (Var a : plan_.arg_vars) arg_ptrs_.push_back(&values_[a.id]);
  for (Var o : plan_.out_vars) out_ptrs_.push_back(&values_[o.id]);
  reorder_copies_.resize(plan_.reorders.size());
  for (size_t r = 0; r < plan_.reorders.size(); ++r) {
    arg_ptrs_[plan_.reorders[r].arg] = &reorder_copies_[r];
  }
  plain_copies_.resize(plan_.plain_copies.size());
  donated_.assign(values_.size(), false);
  for (auto [out, in] : plan_.donations) donated_[out] = true;
  start_threads();  // before the first run allocates the plan's buffers
}

void Executor::bind_input(size_t i, const Tensor& value) {
  const Op& op = tape().ops[i];
  const Type& want = tape().type(op.outs[0]);
  if (value.type() != want) {
    user_error("input '{}' is {}, but the tape declares {}{}", op.name, type_str(value.type()),
               type_str(want), reversed_shape_hint(value.shape(), want.shape));
  }
  values_[op.outs[0].id] = value;
}

void Executor::bind_inputs(const TensorMap& inputs) {
  const Tape& t = tape();
  std::unordered_map<std::string_view, const Tensor*> given;
  for (const auto& [name, tensor] : inputs) given.emplace(name, &tensor);
  size_t used = 0;
  const size_t num_inputs = t.num_inputs();  // counted on each call
  for (size_t i = 0; i < num_inputs; ++i) {
    const Op& op = t.ops[i];
    auto it = given.find(op.name);
    if (it == given.end()) {
      user_error("missing input '{}' ({})", op.name, type_str(t.type(op.outs[0])));
    }
    bind_input(i, *it->second);
    ++used;
  }
  if (used != given.size()) {
    std::unordered_set<std::string_view> known;
    for (size_t i = 0; i < num_inputs; ++i) known.insert(t.ops[i].name);
    for (const auto& [name, tensor] : inputs) {
      if (!known.contains(name)) user_error("'{}' is not an input of tape {}", name, t.name);
    }
  }
}

void Executor::fail(const Plan::Step& step, const std::exception& e) const {
  const Tape& t = tape();
  size_t index = static_cast<size_t>(step.op - t.ops.data());
  std::string loc = t.loc_str(step.op->loc);
  if (step.op->prim == Prim::guard) {
    // A guard's message is written for the program's author and often names its source
    // line already; the op's text would only repeat it.
    std::string message = attrs_of<Prim::guard>(step.op->attrs).message;
    bool located = !loc.empty() && message.rfind(loc, 0) == 0;
    user_error("op {}{}: {}", index + 1, loc.empty() || located ? "" : " at " + loc, e.what());
  }
  user_error("op {} ({}){}: {}", index + 1, print_op(t, *step.op), loc.empty() ? "" : " at " + loc,
             e.what());
}

std::vector<Tensor> Executor::run(const TensorMap& inputs) {
  bind_inputs(inputs);
  execute();
  std::vector<Tensor> outs;
  for (const Output& o : tape().outputs) outs.push_back(returned(o.var.id));
  return outs;
}

void Executor::run(std::span<const Tensor> inputs, std::vector<Tensor>& outputs) {
  const Tape& t = tape();
  if (inputs.size() != t.num_inputs()) {
    user_error("{} inputs given, but tape {} has {}", inputs.size(), t.name, t.num_inputs());
  }
  for (size_t i = 0; i < inputs.size(); ++i) bind_input(i, inputs[i]);
  execute();
  outputs.resize(t.outputs.size());
  for (size_t i = 0; i < outputs.size(); ++i) outputs[i] = returned(t.outputs[i].var.id);
}

void Executor::allocate() {
  const Tape& t = tape();
  if (plan_.arena_bytes > 0) arena_ = allocate_buffer(plan_.arena_bytes);
  for (int64_t offset : plan_.slot_offset) {
    slots_.emplace_back(arena_, static_cast<char*>(arena_.get()) + offset);
  }
  for (size_t v = 0; v < plan_.slot_of.size(); ++v) {
    if (plan_.slot_of[v] != Plan::kNoSlot)
      values_[v] = Tensor::view(t.types[v], slots_[plan_.slot_of[v]].get());
  }
  if (!plan_.reorders.empty()) reorder_buffer_ = allocate_buffer(plan_.reorder_bytes);
  for (size_t r = 0; r < plan_.reorders.size(); ++r) {
    const Plan::Reorder& re = plan_.reorders[r];
    char* at = static_cast<char*>(reorder_buffer_.get()) + re.offset;
    reorder_copies_[r] = Tensor::view(t.types[re.var], at);
  }
  allocated_ = true;
}

// An output the caller has let go of since the last run keeps its buffer: a fresh one
// would be faulted in page by page again (the gradients of a training step are as large
// as its weights). One the caller still holds, as a training loop holds the state it
// passes to the next run, alternates with the buffer of the run before, once the caller
// has let that go.
void Executor::recycle_outputs() {
  const std::vector<uint32_t>& fresh = plan_.fresh_outputs;
  for (auto [var, output] : plan_.output_views) values_[var] = Tensor();  // not an owner
  spare_outputs_.resize(fresh.size());
  for (size_t k = 0; k < fresh.size(); ++k) {
    if (donated_[fresh[k]]) continue;
    Tensor& value = returned(fresh[k]);
    if (value.sole_owner()) continue;
    Tensor& spare = spare_outputs_[k];
    if (spare.sole_owner()) {
      std::swap(value, spare);
    } else {
      spare = std::move(value);
      value = Tensor::uninitialized(tape().types[fresh[k]]);
    }
  }
  for (auto [var, output] : plan_.output_views) {
    values_[var] = values_[output].reinterpret(tape().types[var]);
  }
}

// Each donated output is written in its input's buffer, unless that buffer overlaps
// another input's (one tensor given for two inputs): then in a buffer of its own, so that
// the other input reads what the caller gave.
void Executor::bind_donations() {
  if (plan_.donations.empty()) return;
  const size_t n = tape().num_inputs();
  std::vector<std::pair<const char*, const char*>> spans;  // the inputs' bytes, by address
  for (size_t i = 0; i < n; ++i) {
    const Tensor& v = values_[tape().ops[i].outs[0].id];
    const char* at = static_cast<const char*>(v.raw());
    if (v.bytes() > 0) spans.emplace_back(at, at + v.bytes());
  }
  std::ranges::sort(spans);
  auto shared = [&](const Tensor& v) {
    auto it = std::ranges::lower_bound(
        spans, std::pair{static_cast<const char*>(v.raw()), static_cast<const char*>(v.raw())});
    bool after = it + 1 != spans.end() && it[1].first < it->second;
    bool before = it != spans.begin() && it[-1].second > it->first;
    return v.bytes() == 0 || after || before;
  };
  for (auto [out, in] : plan_.donations) {
    const Tensor& given = values_[in];
    Tensor& result = returned(out);
    if (!shared(given)) {
      result = given;
    } else if (result.raw() == nullptr || !result.sole_owner()) {
      result = Tensor::uninitialized(tape().types[out]);
    }
  }
}

void Executor::set_print(std::function<void(std::string_view)> print) {
  for (auto& [region, e] : regions_) e->set_print(print);
  context_.print = std::move(print);
}

void Executor::set_trace(std::vector<StepEvent>* events,
                         std::chrono::steady_clock::time_point origin) {
  for (auto& [region, e] : regions_) e->set_trace(events, origin);
  trace_ = events;
  trace_origin_ = origin;
}

void Executor::set_random_key(uint64_t key) {
  for (auto& [region, e] : regions_) e->set_random_key(key);
  context_.random_key = key;
}

void Executor::set_communicator(Communicator* comm) {
  context_.comm = comm;
  for (auto& [region, e] : regions_) e->set_communicator(comm);
}

void Executor::set_profiling(bool on) {
  for (auto& [region, e] : regions_) e->set_profiling(on);
  profiling_ = on;
}

const Executor* Executor::region_executor(const Tape& region) const {
  auto it = regions_.find(&region);
  return it == regions_.end() ? nullptr : it->second.get();
}

void Executor::run_region(const Tape& region, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) {
  std::unique_ptr<Executor>& e = regions_[&region];
  if (e == nullptr) {  // the run's settings follow it from here (set_print, set_profiling...)
    ExecutorOptions options = options_;
    options.donate.clear();  // the pairs index the tape's inputs and outputs, not the region's
    e = std::make_unique<Executor>(region, options);
    e->context_ = {context_.print, context_.random_key, nullptr, context_.comm};
    e->profiling_ = profiling_;
    e->set_trace(trace_, trace_origin_);
  }
  e->run(inputs, outputs);
}

// Runs the completion of step `i` (KernelTable::complete): an allreduce's wait. Its time
// counts as the step's.
void Executor::complete(uint32_t i) {
  const Plan::Step& s = plan_.steps[i];
  const bool timed = profiling_ || trace_ != nullptr;
  auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
  KernelCall call{*s.op,
                  {arg_ptrs_.data() + s.args_begin, s.num_args},
                  {out_ptrs_.data() + s.outs_begin, s.num_outs},
                  &context_};
  try {
    plan_.table->complete[s.entry](call);
  } catch (const UserError& e) {
    fail(s, e);
  }
  if (timed) record_time(i, start);
}

void Executor::execute() {
  // Set at each run, not once: an executor may have moved since it was made.
  context_.regions = this;
  if (!allocated_) allocate();
  recycle_outputs();
  bind_donations();
  const std::vector<Plan::Step>& steps = plan_.steps;
  if (profiling_) ++profiled_runs_;
  if (profiling_ && times_.empty()) {
    for (const Plan::Step& s : steps) {
      times_.push_back({static_cast<size_t>(s.op - tape().ops.data()), plan_.step_name(s), 0});
    }
  }
  for (size_t i = 0; i < steps.size(); ++i) {
    const Plan::Step& s = steps[i];
    for (uint32_t w : plan_.waits_of(s)) complete(w);
    const bool work = s.workspace_slot != Plan::kNoSlot;
    KernelCall call{*s.op,
                    {arg_ptrs_.data() + s.args_begin, s.num_args},
                    {out_ptrs_.data() + s.outs_begin, s.num_outs},
                    &context_,
                    plan_.layouts(s),
                    s.program,
                    work ? slots_[s.workspace_slot].get() : nullptr,
                    work ? plan_.slot_bytes[s.workspace_slot] : 0,
                    s.variant};
    const bool timed = profiling_ || trace_ != nullptr;
    auto start = timed ? std::chrono::steady_clock::now() : std::chrono::steady_clock::time_point{};
    try {
      for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
        const Plan::Reorder& re = plan_.reorders[r];
        relayout(values_[re.var], plan_.layout_of[re.var], reorder_copies_[r], re.to);
      }
      s.kernel(call);
      if (s.plain_copy >= 0) {
        uint32_t var = plan_.plain_copies[s.plain_copy];
        relayout(values_[var], plan_.layout_of[var], plain_copies_[s.plain_copy], Layout::plain);
      }
    } catch (const UserError& e) {
      fail(s, e);
    }
    if (timed) record_time(i, start);
  }
  for (uint32_t w : plan_.final_waits) complete(w);
}

void Executor::record_time(size_t i, std::chrono::steady_clock::time_point start) {
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (profiling_) times_[i].seconds += seconds;
  if (trace_ != nullptr) {
    double at = std::chrono::duration<double>(start - trace_origin_).count();
    trace_->push_back({this, static_cast<uint32_t>(i), at, seconds});
  }
}

}  // namespace ytape
