#include "runtime/plan_layouts.h"

#include <algorithm>
#include <vector>

namespace ytape {

namespace {

class LayoutPlanner {
 public:
  LayoutPlanner(Plan& p, Layout blocked)
      : p_(p), t_(*p.tape), table_(*p.table), blocked_(blocked), read_blocked_(t_.types.size(), 0) {
    for (const Plan::Step& step : p_.steps) {
      std::span<const Var> as = p_.args(step);
      for (size_t i = 0; i < as.size(); ++i) {
        if (table_.reads_blocked(step.entry, i)) read_blocked_[as[i].id] = 1;
      }
    }
  }

  // One pass in step order: each output gets its layout, and each argument that its step
  // must read in another layout than it has gets a reorder into a copy of its own, which
  // the step reads instead.
  void run() {
    for (Plan::Step& step : p_.steps) plan_step(step);
  }

 private:
  void plan_step(Plan::Step& step);
  Layout output_layout(const Plan::Step& step) const;
  Layout read_layout(const Plan::Step& step, size_t i, Layout out) const;
  bool per_channel(const Plan::Step& step, const Type& arg, const Type& out) const;

  Plan& p_;
  const Tape& t_;
  const KernelTable& table_;
  const Layout blocked_;
  std::vector<uint8_t> read_blocked_;  // per var: whether a step may read it blocked
};

void LayoutPlanner::plan_step(Plan::Step& step) {
  Layout out = output_layout(step);
  step.reorders_begin = p_.reorders.size();
  std::vector<Layout> layouts;
  bool any_blocked = is_blocked(out);
  int64_t offset = 0;  // into the reorder buffer, which all steps share
  std::span<const Var> as = p_.args(step);
  for (size_t i = 0; i < as.size(); ++i) {
    Var a = as[i];
    Layout l = read_layout(step, i, out);
    if (l != p_.layout_of[a.id]) {
      p_.reorders.push_back({a.id, step.args_begin + i, l, offset});
      const Type& type = t_.type(a);
      offset += (type.size() * dtype_size(type.dtype) + 63) / 64 * 64;
    }
    any_blocked = any_blocked || is_blocked(l);
    layouts.push_back(l);
  }
  step.reorders_end = p_.reorders.size();
  p_.reorder_bytes = std::max(p_.reorder_bytes, offset);
  if (is_blocked(out)) {
    // An elementwise group writes every output element for element as its first.
    for (Var o : p_.outs(step).first(step.program != nullptr ? step.num_outs : 1)) {
      p_.layout_of[o.id] = out;
    }
  }
  if (!any_blocked) return;
  for (Var o : p_.outs(step)) layouts.push_back(p_.layout_of[o.id]);
  step.layouts_begin = p_.step_layouts.size();
  p_.step_layouts.insert(p_.step_layouts.end(), layouts.begin(), layouts.end());
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
Layout LayoutPlanner::output_layout(const Plan::Step& step) const {
  BlockedOut rule = table_.blocked_out[step.entry];
  std::span<const Var> as = p_.args(step), os = p_.outs(step);
  if (os.empty() || rule == BlockedOut::never) return Layout::plain;
  const Type& type = t_.type(os[0]);
  if (!blockable(type, blocked_)) return Layout::plain;
  // Blocked for a reader that takes it so; for readers that take only plain (a reshape),
  // plain at once rather than blocked and reordered.
  if (rule == BlockedOut::always) return read_blocked_[os[0].id] ? blocked_ : Layout::plain;
  if (rule == BlockedOut::same) return p_.layout_of[as[0].id];
  for (Var o : os.subspan(1)) {
    if (step.program != nullptr && !blockable(t_.type(o), blocked_)) return Layout::plain;
  }
  bool any = false;
  for (size_t i = 0; i < as.size(); ++i) {
    if (!table_.reads_blocked(step.entry, i)) continue;
    const Type& at = t_.type(as[i]);
    if (at.size() == 1 || per_channel(step, at, type)) continue;
    if (at.shape != type.shape || !blockable(at, blocked_)) return Layout::plain;
    any = any || is_blocked(p_.layout_of[as[i].id]);
  }
  return any ? blocked_ : Layout::plain;
}

// The layout in which `step`, writing `out`, reads argument i.
Layout LayoutPlanner::read_layout(const Plan::Step& step, size_t i, Layout out) const {
  Var a = p_.args(step)[i];
  if (!table_.reads_blocked(step.entry, i)) return Layout::plain;
  BlockedOut rule = table_.blocked_out[step.entry];
  if (rule == BlockedOut::always || rule == BlockedOut::never) return p_.layout_of[a.id];  // either
  const Type& type = t_.type(a);
  if (out == Layout::plain || type.size() == 1) return Layout::plain;
  if (per_channel(step, type, t_.type(p_.outs(step)[0]))) return Layout::plain;
  return out;
}

// Whether `step` reads `arg` as a vector of one value per channel of its output `out`, an
// image (KernelTable::channel_args).
bool LayoutPlanner::per_channel(const Plan::Step& step, const Type& arg, const Type& out) const {
  return table_.channel_args[step.entry] && arg.rank() == 4 && out.rank() == 4 &&
         arg.shape[0] == 1 && arg.shape[1] == 1 && arg.shape[3] == 1 &&
         arg.shape[2] == out.shape[2] && out.size() > arg.size();
}

}  // namespace

void assign_layouts(Plan& p, Layout blocked) {
  p.layout_of.assign(p.tape->types.size(), Layout::plain);
  if (!is_blocked(blocked)) return;
  LayoutPlanner(p, blocked).run();
}

}  // namespace ytape
