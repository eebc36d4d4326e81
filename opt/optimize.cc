#include "opt/optimize.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>

#include "opt/cse.h"
#include "opt/dce.h"
#include "opt/fold.h"
#include "opt/hoist.h"
#include "opt/simplify.h"
#include "opt/unroll.h"
#include "tape/error.h"
#include "tape/strings.h"
#include "tape/validate.h"

namespace ytape {

std::span<const PassInfo> all_passes() {
  static const PassInfo table[] = {
      {"fold", "evaluate ops on small constants with the runtime's kernels", fold_constants, true},
      // A rewrite may make a new op that another rule would rewrite (a broadcast of a splat).
      {"simplify", "rewrite algebraic identities (x*1, reshape chains, ...) exactly", simplify,
       false},
      {"cse", "merge ops that compute the same thing", eliminate_common_subexpressions, true},
      {"dce", "remove ops no output depends on", eliminate_dead_code, true},
      {"inline", "replace a cond on a constant by its branch, a scan of length 1 by its body",
       inline_regions, true},
      {"hoist", "compute a loop's invariant ops once, before it", hoist_invariants, true},
  };
  return table;
}

const PassInfo& find_pass(std::string_view name) {
  std::vector<std::string> names;
  for (const PassInfo& p : all_passes()) {
    if (p.name == name) return p;
    names.emplace_back(p.name);
  }
  user_error("unknown pass '{}' (the passes: {}){}", name, fmt::join(names, ", "),
             did_you_mean(name, names));
}

namespace {

// The passes to a fixpoint on `t`; `region`: t is a region (Op::regions), which is checked
// with the tape that holds it rather than as a tape of its own.
Tape run_passes(Tape t, const OptimizeOptions& options, std::vector<PassRun>* log, bool region) {
  // Bodies first, each optimized as a tape: what a pass does to a tape it does to a region.
  bool regions = false;
  for (Op& op : t.ops) {
    for (Tape& r : op.regions) {
      r = run_passes(std::move(r), options, nullptr, true);
      regions = true;
    }
  }
  if (regions && !region) check_made(t, "optimizing regions");
  std::vector<const PassInfo*> passes;
  for (const std::string& name : options.passes) passes.push_back(&find_pass(name));
  if (options.passes.empty()) {
    for (const PassInfo& p : all_passes()) passes.push_back(&p);
  }
  // version counts the changes so far; clean[k] is the version passes[k] is known to
  // leave as it is.
  constexpr size_t kNever = ~size_t{0};
  std::vector<size_t> clean(passes.size(), kNever);
  size_t version = 0;
  size_t budget = passes.size() * static_cast<size_t>(std::max(options.max_rounds, 0));
  auto all_clean = [&] {
    return std::all_of(clean.begin(), clean.end(), [&](size_t v) { return v == version; });
  };
  for (size_t k = 0, runs = 0; runs < budget && !all_clean(); k = (k + 1) % passes.size()) {
    if (clean[k] == version) continue;
    const PassInfo& pass = *passes[k];
    size_t before = log ? t.num_ops() : 0;
    auto start = std::chrono::steady_clock::now();
    PassResult r = pass.run(t);
    double seconds =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    ++runs;
    if (r.tape) {
      t = std::move(*r.tape);
      if (!region) check_made(t, pass.name);
      ++version;
    }
    if (!r.tape || pass.idempotent) clean[k] = version;
    if (log) log->push_back({pass.name, before, t.num_ops(), r.changed, seconds});
  }
  return t;
}

}  // namespace

Tape optimize(Tape t, const OptimizeOptions& options, std::vector<PassRun>* log) {
  return run_passes(std::move(t), options, log, false);
}

}  // namespace ytape
