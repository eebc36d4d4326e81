#include "runtime/profile.h"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "tape/cost.h"
#include "tape/print.h"

namespace ytape {

namespace {

// The tables of `times`, ops of `t` run `trips` times per run, whose locations name the
// files of `root`.
std::string profile_tables(const Tape& t, const Tape& root, const std::vector<OpTime>& times,
                           int runs, int top, double trips = 1) {
  struct Row {
    std::string_view name;  // the primitive, or the fusion
    Prim prim;
    int64_t calls = 0;
    double seconds = 0, flops = 0;
  };
  std::vector<Row> rows;  // in order of first appearance
  double total = 0;
  for (const OpTime& ot : times) {
    auto row =
        std::find_if(rows.begin(), rows.end(), [&](const Row& r) { return r.name == ot.name; });
    if (row == rows.end()) row = rows.insert(rows.end(), Row{ot.name, t.ops[ot.op].prim});
    row->calls += 1;
    row->seconds += ot.seconds;
    row->flops += op_flops(t, t.ops[ot.op]) * trips;
    total += ot.seconds;
  }
  std::stable_sort(rows.begin(), rows.end(),
                   [](const Row& a, const Row& b) { return a.seconds > b.seconds; });
  double per_run = 1.0 / std::max(runs, 1);
  std::string out = fmt::format("{:<32} {:>7} {:>11} {:>7} {:>9}\n", "primitive", "calls", "ms/run",
                                "share", "GFLOP/s");
  for (const Row& r : rows) {
    // A rate only where the cost is arithmetic (tape/cost.h): convolutions and matmul.
    Family f = prim_info(r.prim).family;
    bool arithmetic = f == Family::conv || f == Family::linalg;
    std::string rate = arithmetic && r.seconds > 0
                           ? fmt::format(" {:9.1f}", r.flops / (r.seconds * per_run) * 1e-9)
                           : "";
    out += fmt::format("{:<32} {:>7} {:>11.3f} {:>6.1f}%{}\n", r.name, r.calls,
                       r.seconds * per_run * 1e3, total > 0 ? 100 * r.seconds / total : 0.0, rate);
  }
  out += fmt::format("{:<32} {:>7} {:>11.3f}\n", "total", times.size(), total * per_run * 1e3);

  std::vector<OpTime> costly = times;
  std::stable_sort(costly.begin(), costly.end(),
                   [](const OpTime& a, const OpTime& b) { return a.seconds > b.seconds; });
  costly.resize(std::min<size_t>(costly.size(), static_cast<size_t>(top)));
  out += fmt::format("\ntop {} ops:\n{:>11} {:>7}  {:<24} op\n", costly.size(), "ms/run", "share",
                     "location");
  for (const OpTime& ot : costly) {
    std::string loc = root.loc_str(t.ops[ot.op].loc);
    out += fmt::format("{:>11.3f} {:>6.1f}%  {:<24} {}\n", ot.seconds * per_run * 1e3,
                       total > 0 ? 100 * ot.seconds / total : 0.0, loc.empty() ? "-" : loc,
                       print_op(t, t.ops[ot.op]));
  }
  return out;
}

// The tables of each region of `e`'s ops that ran, after its op, then those of its regions.
std::string region_tables(const Executor& e, const Tape& root, int runs, int top,
                          const std::string& path) {
  std::string out;
  const Tape& t = e.tape();
  for (const Op& op : t.ops) {
    for (const Tape& region : op.regions) {
      const Executor* r = e.region_executor(region);
      if (r == nullptr || r->op_times().empty()) continue;
      // Named as the printer and `ytape diff` name the op: by its first output.
      std::string here = fmt::format("{}{} {} · {}", path, prim_name(op.prim),
                                     op.outs.empty() ? "" : var_str(op.outs[0]), region.name);
      std::string loc = root.loc_str(op.loc);
      double trips = static_cast<double>(r->profiled_runs()) / std::max(runs, 1);
      out += fmt::format("\n{} ({}): {:g} trips per run\n", here, loc.empty() ? "-" : loc, trips);
      out += profile_tables(region, root, r->op_times(), runs, top, trips);
      out += region_tables(*r, root, runs, top, here + " · ");
    }
  }
  return out;
}

}  // namespace

std::string profile_report(const Tape& t, const std::vector<OpTime>& times, int runs, int top) {
  return profile_tables(t, t, times, runs, top);
}

std::string profile_report(const Executor& e, int runs, int top) {
  return profile_tables(e.tape(), e.tape(), e.op_times(), runs, top) +
         region_tables(e, e.tape(), runs, top, "");
}

namespace {

struct LineTime {
  double seconds = 0;
  std::set<const Op*> ops;
  std::map<std::string_view, double> prims;  // seconds per primitive or fusion
};

// Where `op` is counted: its source line, or the innermost layer call it was recorded in.
std::string place(const Tape& root, const Op& op, ProfileBy by) {
  if (by == ProfileBy::layer) {
    const Scope* s = root.scope_of(op.loc);
    return s != nullptr ? s->title() : "(outside layers)";
  }
  std::string loc = root.loc_str(op.loc);
  return loc.empty() ? "-" : loc;
}

// Adds the step times of `e` (and of its regions') to `lines`, by place in `root`.
void add_lines(const Executor& e, const Tape& root, ProfileBy by,
               std::map<std::string, LineTime>& lines) {
  const Tape& t = e.tape();
  for (const OpTime& ot : e.op_times()) {
    const Op& op = t.ops[ot.op];
    double inner = 0;
    for (const Tape& region : op.regions) {
      const Executor* r = e.region_executor(region);
      if (r == nullptr) continue;
      for (const OpTime& it : r->op_times()) inner += it.seconds;
      add_lines(*r, root, by, lines);
    }
    LineTime& line = lines[place(root, op, by)];
    double own = std::max(ot.seconds - inner, 0.0);
    line.seconds += own;
    line.ops.insert(&op);
    line.prims[ot.name] += own;
  }
}

}  // namespace

std::string profile_by_line(const Executor& e, int runs, int top) {
  return profile_by(e, ProfileBy::line, runs, top);
}

std::string profile_by(const Executor& e, ProfileBy by, int runs, int top) {
  std::map<std::string, LineTime> lines;
  add_lines(e, e.tape(), by, lines);
  std::vector<std::pair<const std::string*, const LineTime*>> order;
  double total = 0;
  size_t width = 32;  // the first column: lines fit; a layer's form may take up to 64
  for (const auto& [loc, line] : lines) {
    order.emplace_back(&loc, &line);
    total += line.seconds;
    width = std::max(width, std::min<size_t>(loc.size(), 64));
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    return a.second->seconds > b.second->seconds;
  });
  double per_run = 1e3 / std::max(runs, 1);
  auto share = [&](double s) { return total > 0 ? 100 * s / total : 0.0; };
  auto cut = [&](const std::string& s) {
    return s.size() <= width ? s : s.substr(0, width - 3) + "...";
  };
  std::string out =
      fmt::format("{:<{}} {:>11} {:>7} {:>5}  primitives\n",
                  by == ProfileBy::line ? "line" : "layer", width, "ms/run", "share", "ops");
  double rest = 0;
  for (size_t i = 0; i < order.size(); ++i) {
    const LineTime& line = *order[i].second;
    if (i >= static_cast<size_t>(top)) {
      rest += line.seconds;
      continue;
    }
    std::vector<std::pair<std::string_view, double>> prims(line.prims.begin(), line.prims.end());
    std::stable_sort(prims.begin(), prims.end(),
                     [](const auto& a, const auto& b) { return a.second > b.second; });
    std::string names;
    for (size_t k = 0; k < std::min<size_t>(prims.size(), 3); ++k) {
      names += fmt::format("{}{} {:.0f}%", k == 0 ? "" : ", ", prims[k].first,
                           line.seconds > 0 ? 100 * prims[k].second / line.seconds : 0.0);
    }
    out += fmt::format("{:<{}} {:>11.3f} {:>6.1f}% {:>5}  {}\n", cut(*order[i].first), width,
                       line.seconds * per_run, share(line.seconds), line.ops.size(), names);
  }
  if (rest > 0) {
    std::string more = fmt::format("{} more {}", order.size() - static_cast<size_t>(top),
                                   by == ProfileBy::line ? "lines" : "layers");
    out += fmt::format("{:<{}} {:>11.3f} {:>6.1f}%\n", more, width, rest * per_run, share(rest));
  }
  out += fmt::format("{:<{}} {:>11.3f}\n", "total", width, total * per_run);
  return out;
}

}  // namespace ytape
