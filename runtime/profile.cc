#include "runtime/profile.h"

#include <fmt/format.h>

#include <algorithm>

#include "tape/cost.h"
#include "tape/print.h"

namespace ytape {

std::string profile_report(const Tape& t, const std::vector<OpTime>& times, int runs, int top) {
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
    row->flops += op_flops(t, t.ops[ot.op]);
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
    std::string loc = t.loc_str(t.ops[ot.op].loc);
    out += fmt::format("{:>11.3f} {:>6.1f}%  {:<24} {}\n", ot.seconds * per_run * 1e3,
                       total > 0 ? 100 * ot.seconds / total : 0.0, loc.empty() ? "-" : loc,
                       print_op(t, t.ops[ot.op]));
  }
  return out;
}

}  // namespace ytape
