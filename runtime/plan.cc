#include "runtime/plan.h"

#include <algorithm>
#include <climits>

#include "runtime/fusion.h"
#include "runtime/lower_f16.h"
#include "runtime/plan_buffers.h"
#include "runtime/plan_layouts.h"
#include "tape/error.h"

namespace ytape {

namespace {

void add_step(Plan& p, Kernel k, const Op* op, int entry, const VarList& args,
              const VarList& outs) {
  p.steps.push_back({k, op, entry, p.arg_vars.size(), p.out_vars.size(),
                     static_cast<uint32_t>(args.size()), static_cast<uint32_t>(outs.size()),
                     Plan::kNoLayouts, 0, 0, p.fused_ops.size(), p.fused_ops.size()});
  p.arg_vars.insert(p.arg_vars.end(), args.begin(), args.end());
  p.out_vars.insert(p.out_vars.end(), outs.begin(), outs.end());
}

// The step of fused group `g`, whose op `at` is the one where it runs.
void add_fused_step(Plan& p, FusedGroup& g, const Op& at) {
  const Tape& t = *p.tape;
  int entry = KernelTable::entry(g.kind);
  add_step(p, p.table->kernels[entry], g.op, entry, g.args, g.outs);
  for (size_t o : g.others) {
    if (&t.ops[o] != g.op) p.fused_ops.push_back(&t.ops[o]);
  }
  if (&at != g.op) p.fused_ops.push_back(&at);
  p.steps.back().fused_end = p.fused_ops.size();
  if (g.kind == Fusion::elementwise) {
    p.programs.push_back(std::move(g.program));
    p.steps.back().program = &p.programs.back();
  }
}

// Per op of `t`: whether the outputs or an effect need it, by a backward sweep as DCE's
// (opt/dce.h). A traced program leaves values nothing reads (the attention weights that
// dot_product_attention returns beside the fused primitive's output); they cost no time.
// A fused group (at its op `at`; its other ops are decided with it) is needed when one of
// its outputs is, and then reads all of its arguments: an elementwise group whose last
// result nothing reads may be needed for another it writes.
std::vector<bool> needed_ops(const Tape& t, const std::vector<FusedGroup*>& group_at,
                             const std::vector<bool>& in_group) {
  std::vector<bool> read(t.types.size(), false), needed(t.ops.size(), false);
  for (const Output& o : t.outputs) read[o.var.id] = true;
  for (size_t i = t.ops.size(); i-- > 0;) {
    const Op& op = t.ops[i];
    const FusedGroup* g = group_at[i];
    if (in_group[i] && g == nullptr) continue;
    bool need = op.kind == OpKind::call && prim_info(op.prim).effectful();
    for (Var o : g ? g->outs : op.outs) need = need || read[o.id];
    if (!need) continue;
    needed[i] = true;
    for (Var a : g ? g->args : op.args) read[a.id] = true;
  }
  return needed;
}

// One step per call op that is needed, in tape order, except that a fused group is one
// step, where the op it runs at was (FusedGroup::at).
void plan_steps(Plan& p, bool fusion) {
  const Tape& t = *p.tape;
  std::vector<FusedGroup> groups;
  if (fusion) groups = find_fusions(t, *p.table);
  std::vector<FusedGroup*> group_at(t.ops.size(), nullptr);
  std::vector<bool> in_group(t.ops.size(), false);
  for (FusedGroup& g : groups) {
    group_at[g.at] = &g;
    for (size_t o : g.others) in_group[o] = true;
  }
  std::vector<bool> needed = needed_ops(t, group_at, in_group);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (op.kind != OpKind::call || in_group[i]) continue;
    if (FusedGroup* g = group_at[i]) {
      if (needed[i]) add_fused_step(p, *g, op);
      continue;
    }
    if (!needed[i]) continue;
    Kernel k = p.table->kernels[KernelTable::entry(op.prim)];
    if (k == nullptr) user_error("no kernel for primitive {}", prim_name(op.prim));
    add_step(p, k, &op, KernelTable::entry(op.prim), op.args, op.outs);
  }
}

// Each step whose kernel has a faster variant and whose op leaves the choice to the plan
// (a convolution's algorithm="auto") takes it, in step order, where the plan
// with it (and with those taken before) needs at most `extra_bytes` more than the plan of
// standard kernels. oneDNN's Winograd convolutions need tens of megabytes of work memory
// each: with all of them ResNet-18's batch-1 step would plan 88 MB instead of 27 for 10%
// less time, while a fifth more (the default) gives the batch-8 step 21 of its 30 and keeps
// the batch-1 runs within PyTorch's memory (docs/benchmarks.md, Kernels and threads). Each try
// plans the buffers again, so that a tape with many such steps (a hostile one: 10^5 convolutions
// sharing their weights) is tried in at most kMaxTries runs of steps, taken or left
// together: planning stays linear in the steps. ResNet-18 has 21 (its gradient at batch 1),
// tried one by one.
void plan_variants(Plan& p, std::optional<int64_t> extra_bytes) {
  constexpr size_t kMaxTries = 64;
  // The steps that may take the faster variant: those of an op that chooses it (a
  // convolution's algorithm="winograd") take it; those that leave it to the plan wait.
  std::vector<Plan::Step*> faster;
  for (Plan::Step& step : p.steps) {
    WorkspaceSize size = p.table->workspace[step.entry];
    if (size == nullptr || size(*p.tape, *step.op, p.layouts(step), Variant::faster) < 0) continue;
    const AttrValue* algorithm = step.op->attrs.find("algorithm");
    // Both sides a string_view: a std::string made of "auto" would die with the statement.
    std::string_view chosen =
        algorithm ? std::string_view(std::get<std::string>(*algorithm)) : std::string_view("auto");
    if (chosen == "winograd") step.variant = Variant::faster;
    if (chosen == "auto") faster.push_back(&step);
  }
  assign_buffers(p);
  const int64_t standard = p.planned_bytes();
  const int64_t extra = extra_bytes.value_or(standard / 5);
  if (extra < 0) return;
  const int64_t limit = extra > INT64_MAX - standard ? INT64_MAX : standard + extra;
  const size_t run = (faster.size() + kMaxTries - 1) / kMaxTries;
  for (size_t begin = 0; begin < faster.size(); begin += run) {
    std::span<Plan::Step*> steps(faster.data() + begin, std::min(run, faster.size() - begin));
    for (Plan::Step* step : steps) step->variant = Variant::faster;
    assign_buffers(p);
    if (p.planned_bytes() <= limit) continue;
    for (Plan::Step* step : steps) step->variant = Variant::standard;
  }
  assign_buffers(p);
}

}  // namespace

std::string_view Plan::step_name(const Step& s) const {
  return s.entry < kNumPrims ? prim_name(s.op->prim)
                             : fusion_name(static_cast<Fusion>(s.entry - kNumPrims));
}

int64_t Plan::planned_bytes() const {
  return arena_bytes + reorder_bytes;
}

// Where each step with a completion (an allreduce) is waited for: before the first later
// step that reads one of its results, else at the end. One pass over the steps.
void plan_waits(Plan& p) {
  constexpr uint32_t kNone = ~uint32_t{0};
  std::vector<uint32_t> writer(p.tape->types.size(), kNone);  // per var: its pending step
  std::vector<std::vector<uint32_t>> before(p.steps.size());
  std::vector<bool> waited(p.steps.size(), false);
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    const Plan::Step& s = p.steps[i];
    for (Var a : p.args(s)) {
      const uint32_t w = writer[a.id];
      if (w != kNone && !waited[w]) {
        before[i].push_back(w);
        waited[w] = true;
      }
    }
    if (p.table->complete[s.entry] != nullptr) {
      for (Var o : p.outs(s)) writer[o.id] = i;
    }
  }
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    p.steps[i].waits_begin = static_cast<uint32_t>(p.waits.size());
    p.waits.insert(p.waits.end(), before[i].begin(), before[i].end());
    p.steps[i].waits_end = static_cast<uint32_t>(p.waits.size());
    if (p.table->complete[p.steps[i].entry] != nullptr && !waited[i]) p.final_waits.push_back(i);
  }
}

Plan plan_tape(const Tape& t, const ExecutorOptions& options) {
  Plan p;
  if (has_f16(t)) p.lowered = std::make_unique<const Tape>(lower_f16(t));
  p.tape = p.lowered ? p.lowered.get() : &t;
  p.table = &kernel_table(options.kernels);
  p.options = options;
  plan_steps(p, options.fusion);
  assign_layouts(p, !options.blocked_layouts    ? Layout::plain
                    : is_blocked(options.block) ? options.block
                                                : native_blocked_layout());
  plan_variants(p, options.extra_work_bytes);
  plan_waits(p);
  return p;
}

}  // namespace ytape
