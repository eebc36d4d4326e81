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

std::string layouts_str(const std::vector<Layout>& layouts) {
  std::string out;
  for (Layout l : layouts) out += fmt::format("{}{}", out.empty() ? "" : " ", layout_name(l));
  return out;
}

std::string size_str(int64_t bytes) {
  double b = static_cast<double>(bytes);
  return b < 1e5 ? fmt::format("{:.1f} kB", b / 1e3) : fmt::format("{:.1f} MB", b / 1e6);
}

std::string slot_str(const Executor& e, int64_t slot) {
  return slot < 0 ? "own" : fmt::format("#{} ({})", slot, size_str(e.slot_bytes(slot)));
}

// Each output's buffer, then the kernel's work memory if it has any.
std::string buffers_str(const Executor& e, const PlannedStep& p) {
  std::string out;
  for (int64_t slot : p.buffers) out += (out.empty() ? "" : ", ") + slot_str(e, slot);
  if (p.workspace >= 0) out += "; work " + slot_str(e, p.workspace);
  if (p.copied_plain) out += "; copied plain for the caller";
  return out;
}

}  // namespace

std::string plan_str(const Tape& t, const Executor& e) {
  std::vector<PlannedStep> plan = e.plan();
  size_t blocked = std::count_if(e.layouts().begin(), e.layouts().end(), is_blocked);
  std::string out = fmt::format(
      "plan of tape {}: {} steps, {} threads; buffers {} in all; {} values kept blocked, {} "
      "reorders per run\n",
      t.name, plan.size(), num_threads(), size_str(e.planned_bytes()), blocked,
      e.reorders_per_run());
  struct Line {
    std::string op, kernel, io;
  };
  std::vector<Line> lines;
  size_t widths[3] = {2, 6, 15};
  for (const PlannedStep& p : plan) {
    Line l{fmt::format("{} = {}({})", vars_str(p.outs), p.name, vars_str(p.args)), p.kernel,
           layouts_str(p.reads) + " -> " + layouts_str(p.writes)};
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
  for (size_t i = 0; i < plan.size(); ++i) {
    for (auto [v, to] : plan[i].reorders) {
      out += fmt::format("{:>5}  reorder {} to {} for the next step\n", "", var_str(v),
                         layout_name(to));
    }
    out += row(i + 1, lines[i], buffers_str(e, plan[i]));
    if (!plan[i].fused.empty()) {  // the tape's ops the fused step runs, its own first
      std::string ops = op_str(*plan[i].op);
      for (const Op* op : plan[i].fused) ops += "; " + op_str(*op);
      out += fmt::format("{:>5}  fuses {}\n", "", ops);
    }
  }
  return printable_lines(out);  // the tape's name comes from its file
}

}  // namespace ytape
