// `ytape diff` at scale: two scalar chains of 10^4, 10^5 and 10^6 ops (samples::scalar_chain),
// the second with one op inserted at the top and one op changed in the middle. Times the
// alignment (diff_tapes), the text report, and the whole command's work (reading both
// tapes from JSON, then diffing); goal: under 2 s at 10^6 ops, linear.
//
// usage: bench_diff [max_ops]   (default 1000000)
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <string>
#include <vector>

#include "inspect/diff.h"
#include "io/json.h"
#include "samples/cpp/models.h"
#include "tape/allocator.h"
#include "tape/builder.h"

using namespace ytape;

namespace {

struct Timing {
  double wall = 0, cpu = 0;  // seconds
};

double cpu_now() {
  timespec ts;
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

// Wall and CPU time, the least of three runs: on a shared machine the CPU time is the
// figure that depends least on the other jobs.
Timing time_of(const std::function<void()>& f) {
  Timing best{1e300, 1e300};
  for (int run = 0; run < 3; ++run) {
    double cpu = cpu_now();
    auto start = std::chrono::steady_clock::now();
    f();
    best.wall = std::min(
        best.wall, std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count());
    best.cpu = std::min(best.cpu, cpu_now() - cpu);
  }
  return best;
}

std::string ms(Timing t) {
  return fmt::format("{:.0f}/{:.0f}", t.wall * 1e3, t.cpu * 1e3);
}

// `t` with cos(first input) inserted before its first op and the first sin at or after
// the middle turned into a cos.
Tape edited(const Tape& t) {
  Builder b = Builder::like(t);
  b.reserve(t.ops.size() + 1, t.types.size() + 1);
  VarMap map(t);
  size_t middle = t.ops.size() / 2;
  bool changed = false;
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (i == t.num_inputs()) b.output(b.cos(map[t.ops[0].outs[0]]), "inserted");
    if (!changed && i >= middle && op.kind == OpKind::call && op.prim == Prim::sin) {
      b.set_loc(op.loc);
      map.set(op.outs[0], b.cos(map[op.args[0]]));
      changed = true;
      continue;
    }
    copy_op(b, t, op, map);
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace

int main(int argc, char** argv) {
  keep_freed_memory();  // as the CLI does
  int64_t max_ops = argc > 1 ? std::atoll(argv[1]) : 1000000;
  fmt::print("{:>9} {:>12} {:>12} {:>12} {:>12}   (ms wall/cpu; differences found)\n", "ops",
             "same", "diff", "text", "read+diff");
  std::vector<double> per_op_diff;
  for (int64_t n = 10000; n <= max_ops; n *= 10) {
    Tape a = samples::scalar_chain(n);
    Tape a2 = copy_tape(a);
    Tape b = edited(a);
    std::string json_a = write_tape_json(a), json_b = write_tape_json(b);
    TapeDiff same, d;
    std::string text;
    Timing t_same = time_of([&] { same = diff_tapes(a, a2); });
    Timing t_diff = time_of([&] { d = diff_tapes(a, b); });
    Timing t_text = time_of([&] { text = diff_str(a, b, d, {"a.json", "b.json"}); });
    Timing t_all = time_of([&] {
      Tape ra = read_tape_json(json_a, "a.json");
      Tape rb = read_tape_json(json_b, "b.json");
      TapeDiff rd = diff_tapes(ra, rb);
      text = diff_str(ra, rb, rd, {"a.json", "b.json"});
    });
    if (!same.same() || d.ops.size() != 2 || d.outputs.size() != 1) {
      fmt::print(stderr, "unexpected diff at {} ops: {} op and {} output differences\n", n,
                 d.ops.size(), d.outputs.size());
      return 1;
    }
    fmt::print("{:>9} {:>12} {:>12} {:>12} {:>12}   {} ops, {} output\n", n, ms(t_same), ms(t_diff),
               ms(t_text), ms(t_all), d.ops.size(), d.outputs.size());
    per_op_diff.push_back(t_diff.cpu / static_cast<double>(n));
  }
  if (per_op_diff.size() >= 2) {
    fmt::print(
        "\nlinearity of diff (CPU time per op at the largest size / at a tenth of it; "
        "goal <= 1.3): {:.2f}\n",
        per_op_diff.back() / per_op_diff[per_op_diff.size() - 2]);
  }
  return 0;
}
