#include "runtime/plan_print.h"

#include <fmt/format.h>

#include <algorithm>

#include "runtime/parallel.h"
#include "tape/print.h"
#include "tape/strings.h"

namespace ytape {

namespace {

std::string_view layout_name(Layout l) {
  return l == Layout::c16 ? "c16" : l == Layout::c8 ? "c8" : "plain";
}

std::string vars_str(const VarList& vars) {
  std::string out;
  for (Var v : vars) out += (out.empty() ? "" : ", ") + var_str(v);
  return out;
}

std::string op_str(const Op& op) {
  return fmt::format("{} = {}({})", vars_str(op.outs), prim_name(op.prim), vars_str(op.args));
}

std::string size_str(int64_t bytes) {
  double b = static_cast<double>(bytes);
  return b < 1e5 ? fmt::format("{:.1f} kB", b / 1e3) : fmt::format("{:.1f} MB", b / 1e6);
}

std::string slot_str(const Plan& p, int64_t slot) {
  if (slot <= PlannedStep::kDonated) {
    return "over input " + var_str(Var{static_cast<uint32_t>(PlannedStep::kDonated - slot)});
  }
  return slot < 0 ? "own" : fmt::format("#{} ({})", slot, size_str(p.slot_bytes[slot]));
}

// Each output's buffer, then the kernel's work memory if it has any.
std::string buffers_str(const Plan& p, const PlannedStep& s) {
  std::string out;
  for (int64_t slot : s.buffers) out += (out.empty() ? "" : ", ") + slot_str(p, slot);
  if (s.workspace >= 0) out += "; work " + slot_str(p, s.workspace);
  if (s.copied_plain) out += "; copied plain for the caller";
  return out;
}

// `donor`: per var, the input whose buffer it is written in (Plan::donations), or -1.
PlannedStep planned_step(const Plan& p, const Plan::Step& s, const std::vector<int64_t>& donor) {
  PlannedStep out;
  out.op = s.op;
  out.name = p.step_name(s);
  for (Var a : p.args(s)) out.args.push_back(a);
  for (Var o : p.outs(s)) out.outs.push_back(o);
  out.fused.assign(p.fused_ops.begin() + static_cast<ptrdiff_t>(s.fused_begin),
                   p.fused_ops.begin() + static_cast<ptrdiff_t>(s.fused_end));
  const Layout* layouts = p.layouts(s);
  out.kernel = p.table->describe[s.entry](*p.tape, *s.op, layouts, s.variant);
  for (size_t i = 0; i < s.num_args + s.num_outs; ++i) {
    Layout l = layouts != nullptr ? layouts[i] : Layout::plain;
    (i < s.num_args ? out.reads : out.writes).push_back(l);
  }
  for (size_t r = s.reorders_begin; r < s.reorders_end; ++r) {
    out.reorders.emplace_back(Var{p.reorders[r].var}, p.reorders[r].to);
  }
  for (Var o : p.outs(s)) {
    out.buffers.push_back(donor[o.id] < 0 ? p.slot_of[o.id] : PlannedStep::kDonated - donor[o.id]);
  }
  out.workspace = s.workspace_slot;
  out.variant = s.variant;
  out.copied_plain = s.plain_copy >= 0;
  return out;
}

}  // namespace

std::string layouts_str(const std::vector<Layout>& layouts) {
  std::string out;
  for (Layout l : layouts) out += fmt::format("{}{}", out.empty() ? "" : " ", layout_name(l));
  return out;
}

std::vector<PlannedStep> planned_steps(const Plan& p) {
  std::vector<int64_t> donor(p.tape->types.size(), -1);
  for (auto [out, in] : p.donations) donor[out] = in;
  std::vector<PlannedStep> steps;
  for (const Plan::Step& s : p.steps) steps.push_back(planned_step(p, s, donor));
  return steps;
}

namespace {

// A step's region planned as the executor plans it (once, with the plan's options), its
// lines indented under the step.
std::string region_plan(const Plan& p, const Tape& region) {
  std::string out;
  std::string text = plan_str(plan_tape(region, p.options));
  for (size_t at = 0; at < text.size();) {
    size_t end = std::min(text.find('\n', at), text.size() - 1);
    out += "       " + text.substr(at, end - at + 1);
    at = end + 1;
  }
  return out;
}

// Per step that completes later (an allreduce): what it sends and where the run waits for
// it, the overlap the plan allows; "" for the rest.
std::vector<std::string> wait_notes(const Plan& p) {
  std::vector<std::string> notes(p.steps.size());
  auto note = [&](uint32_t step, std::string where) {
    const Plan::Step& s = p.steps[step];
    int64_t bytes = 0;
    for (Var v : p.args(s)) bytes += p.tape->type(v).size() * dtype_size(p.tape->type(v).dtype);
    notes[step] = fmt::format("issues a bucket of {} values ({}); waited for {}", s.num_args,
                              size_str(bytes), where);
  };
  for (uint32_t i = 0; i < p.steps.size(); ++i) {
    for (uint32_t w : p.waits_of(p.steps[i])) {
      note(w, w + 1 == i ? std::string("by the next step")
                         : fmt::format("at step {}, {} steps later", i + 1, i - w));
    }
  }
  for (uint32_t w : p.final_waits) note(w, "at the end of the run");
  return notes;
}

}  // namespace

std::string plan_str(const Plan& p) {
  std::vector<PlannedStep> steps = planned_steps(p);
  size_t blocked = std::count_if(p.layout_of.begin(), p.layout_of.end(), is_blocked);
  std::string out = fmt::format(
      "plan of tape {}: {} steps, {} threads; buffers {} in all; {} values kept blocked, {} "
      "reorders per run\n",
      p.tape->name, steps.size(), num_threads(), size_str(p.planned_bytes()), blocked,
      p.reorders_per_run());
  if (!p.donations.empty()) {
    out.insert(out.size() - 1, fmt::format("; {} outputs written over the inputs they replace",
                                           p.donations.size()));
  }
  struct Line {
    std::string op, kernel, io;
  };
  std::vector<Line> lines;
  size_t widths[3] = {2, 6, 15};
  for (const PlannedStep& s : steps) {
    Line l{fmt::format("{} = {}({})", vars_str(s.outs), s.name, vars_str(s.args)), s.kernel,
           layouts_str(s.reads) + " -> " + layouts_str(s.writes)};
    widths[0] = std::max(widths[0], std::min<size_t>(l.op.size(), 60));
    widths[1] = std::max(widths[1], l.kernel.size());
    widths[2] = std::max(widths[2], l.io.size());
    lines.push_back(std::move(l));
  }
  auto row = [&](auto step, const Line& l, const std::string& buffers) {
    return fmt::format("{:>5}  {:<{}}  {:<{}}  {:<{}}  {}\n", step, l.op, widths[0], l.kernel,
                       widths[1], l.io, widths[2], buffers);
  };
  out += row("step", {"op", "kernel", "reads -> writes"}, "buffers");
  const std::vector<std::string> waits = wait_notes(p);
  for (size_t i = 0; i < steps.size(); ++i) {
    for (uint32_t w : p.waits_of(p.steps[i])) {
      out += fmt::format("{:>5}  waits for step {}'s allreduce\n", "", w + 1);
    }
    for (auto [v, to] : steps[i].reorders) {
      out += fmt::format("{:>5}  reorder {} to {} for the next step\n", "", var_str(v),
                         layout_name(to));
    }
    out += row(i + 1, lines[i], buffers_str(p, steps[i]));
    if (!steps[i].fused.empty()) {  // the tape's ops the fused step runs, its own first
      std::string ops = op_str(*steps[i].op);
      for (const Op* op : steps[i].fused) ops += "; " + op_str(*op);
      out += fmt::format("{:>5}  fuses {}\n", "", ops);
    }
    if (!waits[i].empty()) out += fmt::format("{:>5}  {}\n", "", waits[i]);
    for (const Tape& r : steps[i].op->regions) out += region_plan(p, r);
  }
  for (uint32_t w : p.final_waits) {
    out += fmt::format("{:>5}  the run ends waiting for step {}'s allreduce\n", "", w + 1);
  }
  return printable_lines(out);  // the tape's name comes from its file
}

}  // namespace ytape
