#include "opt/remat.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <deque>
#include <sstream>

#include "opt/remat_schedule.h"
#include "runtime/plan.h"
#include "tape/cost.h"
#include "tape/error.h"
#include "tape/strings.h"

namespace ytape {

using remat::Analysis;
using remat::Schedule;

namespace {

int64_t planned_peak(const Tape& t) {
  return plan_tape(t).planned_bytes();
}

// What the plan of `t` chooses that rematerialization keeps: per op, "winograd" or
// "direct" for each convolution, as the plan runs it, else ""; and each op's work memory
// (of a fused step, its first op's). A convolution computed again must run the algorithm it
// ran (the two round differently), and the rest too, so that the gradients keep their bits:
// a plan made after rematerialization, with less memory in use, would choose otherwise.
struct PlanChoices {
  int64_t peak = 0;  // the plan's bytes
  std::vector<std::string> algorithms;
  std::vector<int64_t> work_bytes;
};

PlanChoices plan_choices(const Tape& t) {
  Plan p = plan_tape(t);
  PlanChoices c{p.planned_bytes(), std::vector<std::string>(t.ops.size()),
                std::vector<int64_t>(t.ops.size(), 0)};
  if (p.lowered) return c;  // an f16 tape's plan runs other ops
  for (const Plan::Step& step : p.steps) {
    size_t i = step.op - t.ops.data();
    if (step.workspace_slot != Plan::kNoSlot) c.work_bytes[i] = p.slot_bytes[step.workspace_slot];
    if (step.op->attrs.find("algorithm") == nullptr) continue;
    c.algorithms[i] = step.variant == Variant::faster ? "winograd" : "direct";
  }
  return c;
}

// The primitive a policy judges op i by: its own, or for a reshape (a view: keeping it
// holds its source's buffer) that of the op its argument comes from.
Prim judged_prim(const Tape& t, const Analysis& a, size_t i) {
  while (t.ops[i].prim == Prim::reshape) {
    int32_t p = a.producer[t.ops[i].args[0].id];
    if (p < 0) break;
    i = static_cast<size_t>(p);
  }
  return t.ops[i].prim;
}

// Per op: whether it is one of a.boundary (a forward op whose values the backward reads).
std::vector<uint8_t> boundary_flags(const Tape& t, const Analysis& a) {
  std::vector<uint8_t> is(t.ops.size(), 0);
  for (size_t i : a.boundary) is[i] = 1;
  return is;
}

// Per op: whether the backward part reads its value and RematOptions::recompute_elementwise
// recomputes it: an elementwise op (or a reshape) that at most kMaxRecomputedChain
// elementwise ops compute again from what is kept. In forward order, each op's chain is
// its own plus its arguments' (a value read twice counted twice: an upper bound); a value
// that is kept, pinned, an input or a constant costs nothing, one of another op that is
// not kept cannot be had.
std::vector<uint8_t> cheaply_recomputed(const Tape& t, const Analysis& a) {
  constexpr int kNever = kMaxRecomputedChain + 1;
  std::vector<uint8_t> boundary = boundary_flags(t, a), recomputed(t.ops.size(), 0);
  std::vector<int> chain(t.ops.size(), 0);  // 0 where nothing is recomputed
  for (size_t i : a.forward_ops) {
    const Op& op = t.ops[i];
    bool view = op.prim == Prim::reshape, elementwise = prim_info(op.prim).elementwise();
    int c = kNever;
    if ((view || elementwise) && !a.pinned[i]) {
      c = elementwise ? 1 : 0;
      for (Var v : op.args) {
        if (a.producer[v.id] >= 0) c = std::min(c + chain[a.producer[v.id]], kNever);
      }
    }
    recomputed[i] = boundary[i] && c < kNever;
    chain[i] = recomputed[i] || !(boundary[i] || a.pinned[i]) ? c : 0;
  }
  return recomputed;
}

std::string mib(int64_t bytes) {
  return fmt::format("{:.1f} MiB", bytes / 1048576.0);
}

class Search {
 public:
  Search(const Tape& t, const RematOptions& o)
      : t_(t), a_(remat::analyze(t, o.forward_outputs)), plan_(plan_choices(t)) {
    a_.work_bytes = plan_.work_bytes;
    std::vector<uint8_t> recomputed;
    if (o.recompute_elementwise) recomputed = cheaply_recomputed(t, a_);
    for (size_t i : a_.boundary) {
      bool keep = o.recompute_elementwise
                      ? !recomputed[i]
                      : !o.saveable || std::ranges::count(*o.saveable, judged_prim(t, a_, i));
      if (keep) saveable_.push_back(i);
    }
    // A value the backward part does not read, of an op the policy names, is kept for the
    // recomputations that read it (JAX's policies: a matmul under the bias added to it).
    if (o.saveable && !o.recompute_elementwise) {
      std::vector<uint8_t> boundary = boundary_flags(t, a_);
      for (size_t i : a_.forward_ops) {
        if (!boundary[i] && !a_.pinned[i] && std::ranges::count(*o.saveable, t.ops[i].prim)) {
          sources_.push_back(i);
        }
      }
    }
    // Most FLOPs per byte kept first: what is dearest to recompute for the memory it holds
    // (a batch norm whose backward reads only its statistics before all).
    auto density = [&](size_t i) {
      return a_.flops[i] / static_cast<double>(std::max<int64_t>(a_.kept_bytes[i], 1));
    };
    std::ranges::stable_sort(saveable_,
                             [&](size_t x, size_t y) { return density(x) > density(y); });
    op_bytes_.assign(t.ops.size(), 0);
    for (size_t i : a_.forward_ops) {
      for (Var v : t.ops[i].outs) op_bytes_[i] += a_.bytes[v.id];
      forward_bytes_ += op_bytes_[i];
    }
  }

  const Analysis& analysis() const { return a_; }
  const std::vector<std::string>& algorithms() const { return plan_.algorithms; }
  int64_t peak_before() const { return plan_.peak; }
  size_t num_saveable() const { return saveable_.size(); }
  const std::vector<size_t>& sources() const { return sources_; }

  // The ops a choice keeps: the pinned ones, the segment ends, the `densest` saveable ones.
  std::vector<uint8_t> kept(const std::vector<size_t>& ends, size_t densest) const {
    std::vector<uint8_t> kept = a_.pinned;
    for (size_t i : ends) kept[i] = 1;
    for (size_t k = 0; k < densest; ++k) kept[saveable_[k]] = 1;
    for (size_t i : sources_) kept[i] = 1;
    return kept;
  }

  // The ops a search may keep or not: the cut ops and the saveable ones, unpinned.
  std::vector<size_t> movable() const {
    std::vector<uint8_t> is(t_.ops.size(), 0);
    for (size_t i : saveable_) is[i] = 1;
    for (size_t i : a_.forward_ops) is[i] |= a_.cut[i] && !a_.pinned[i];
    std::vector<size_t> ops;
    for (size_t i = 0; i < is.size(); ++i) {
      if (is[i]) ops.push_back(i);
    }
    return ops;
  }

  int64_t peak(const Schedule& s) const { return remat::simulated_peak(t_, a_, s); }

  // What every choice tried keeps: no segments, or segments from the whole forward part
  // down to 2^-14 of it, in steps of sqrt(2), the first 1, 2, 4 or 8 of them long (it is
  // recomputed last, when little else is live); each with the densest 0, 1/16, ..., all of
  // the saveable ops kept: about 2000 choices, fewer for a long tape (a coarser grid: about
  // 2·10^7 ops simulated in all, a few dozen choices at 10^6 ops).
  std::vector<std::vector<uint8_t>> grid() const {
    size_t affordable = 20'000'000 / std::max<size_t>(t_.ops.size(), 1);
    int seg_step = affordable >= 1500 ? 1 : affordable >= 300 ? 2 : 4;
    int first_step = affordable >= 1500 ? 2 : 8;
    size_t steps = affordable >= 1500 ? 16 : 4;
    std::vector<std::vector<uint8_t>> all;
    size_t m = saveable_.size();
    for (int j = 0; j <= 28; j += seg_step) {
      for (int first = 1; first <= (j == 0 ? 1 : 8); first *= first_step) {
        std::vector<size_t> ends;
        if (j > 0) {
          auto bytes = static_cast<int64_t>(forward_bytes_ * std::pow(0.5, j / 2.0));
          ends = segment_ends(std::max<int64_t>(bytes, 1), first);
        }
        for (size_t q = 0; q <= steps; ++q) {
          size_t densest = m * q / steps;
          if (q == 0 || densest != m * (q - 1) / steps) all.push_back(kept(ends, densest));
        }
      }
    }
    return all;
  }

 private:
  // The ends of segments of at most `bytes` of forward values (or of one op, where one is
  // larger; the first, `first_segments` times that), of the least memory kept: the shortest path
  // from the forward part's start to its end over the cut ops, each costing its end_bytes, with
  // hops of at most `bytes`. The stem of a network, large and early, is recomputed whole at the end
  // of the backward part rather than cut where its activations are largest. A sliding-window
  // minimum keeps it linear in the ops.
  std::vector<size_t> segment_ends(int64_t bytes, int first_segments) const {
    const std::vector<size_t>& ops = a_.forward_ops;
    struct Node {
      int64_t at;    // forward bytes up to and including the op
      int64_t cost;  // least total end_bytes of a path ending here
      int64_t from;  // the node before, -1 at the start
      size_t op;
    };
    // The start reaches `first_segments` segments far: as a node that far on.
    std::vector<Node> nodes = {{bytes * (first_segments - 1), 0, -1, 0}};
    std::deque<size_t> window = {0};  // nodes in reach, cost increasing
    int64_t at = 0;
    auto best_before = [&](int64_t reach_from) {
      while (window.size() > 1 && nodes[window.front()].at < reach_from) window.pop_front();
      return window.front();
    };
    for (size_t k = 0; k < ops.size(); ++k) {
      at += op_bytes_[ops[k]];
      if (!a_.cut[ops[k]] || k + 1 == ops.size()) continue;
      size_t from = best_before(at - bytes);
      nodes.push_back(
          {at, nodes[from].cost + a_.end_bytes[ops[k]], static_cast<int64_t>(from), ops[k]});
      while (window.size() > 0 && nodes[window.back()].cost >= nodes.back().cost) window.pop_back();
      window.push_back(nodes.size() - 1);
    }
    std::vector<size_t> ends;
    for (int64_t n = static_cast<int64_t>(best_before(at - bytes)); n > 0; n = nodes[n].from) {
      ends.push_back(nodes[n].op);
    }
    std::ranges::reverse(ends);
    return ends;
  }

  const Tape& t_;
  Analysis a_;
  PlanChoices plan_;
  std::vector<size_t> saveable_;   // boundary ops the policy may keep, densest first
  std::vector<size_t> sources_;    // other forward ops the policy names: kept
  std::vector<int64_t> op_bytes_;  // per forward op: the bytes of its outputs
  int64_t forward_bytes_ = 0;
};

// A choice simulated: what it keeps (per op), its peak and what it recomputes.
struct Tried {
  std::vector<uint8_t> kept;
  int64_t peak = 0;
  double flops = 0;
};

// Better for a budget of `target` simulated bytes: less over it, then less recomputed, then
// a lower peak.
bool better(const Tried& x, const Tried& y, int64_t target) {
  int64_t over_x = std::max<int64_t>(x.peak - target, 0),
          over_y = std::max<int64_t>(y.peak - target, 0);
  if (over_x != over_y) return over_x < over_y;
  if (x.flops != y.flops) return x.flops < y.flops;
  return x.peak < y.peak;
}

Tried simulate(const Tape& t, const Search& search, std::vector<uint8_t> kept) {
  Schedule s = remat::schedule(t, search.analysis(), kept);
  return {std::move(kept), search.peak(s), s.recomputed_flops};
}

// The best of the grid's choices for `target`, then bettered one op at a time (keep it or
// not, end a segment there or not) while a change helps, within `simulations` (shared by
// every search for one tape, so that they stay linear in it).
Tried search_for(const Tape& t, const Search& search, const std::vector<Tried>& grid,
                 int64_t target, int64_t& simulations) {
  Tried best = *std::ranges::min_element(
      grid, [&](const Tried& x, const Tried& y) { return better(x, y, target); });
  std::vector<size_t> moves = search.movable();
  for (bool improved = true; improved && simulations > 0;) {
    improved = false;
    for (size_t i : moves) {
      if (simulations-- <= 0) break;
      std::vector<uint8_t> kept = best.kept;
      kept[i] ^= 1;
      Tried tried = simulate(t, search, std::move(kept));
      if (better(tried, best, target)) best = std::move(tried), improved = true;
    }
  }
  return best;
}

RematResult result_of(const Tape& t, const Search& search, const std::vector<uint8_t>& kept) {
  RematResult r;
  Schedule s = remat::schedule(t, search.analysis(), kept);
  r.tape = remat::emit(t, s, search.algorithms());
  r.peak_before = search.peak_before();
  r.peak_after = planned_peak(r.tape);
  r.flops_before = tape_flops(t);
  r.recomputed_flops = s.recomputed_flops;
  r.recomputed_ops = s.recomputed_ops;
  for (size_t i : search.analysis().boundary) r.kept += kept[i];
  r.kept += search.sources().size();
  for (size_t i : search.analysis().forward_ops) r.segments += kept[i] && search.analysis().cut[i];
  return r;
}

// The choice that fits `budget` (runtime plan bytes) at the least recomputation. The
// simulation is scaled to the plan by the tape's own two figures, and the target tightened
// while the plan of the result exceeds the budget.
RematResult fit(const Tape& t, const Search& search, int64_t budget) {
  int64_t before = search.peak_before();
  std::vector<Tried> grid;
  for (std::vector<uint8_t>& kept : search.grid())
    grid.push_back(simulate(t, search, std::move(kept)));
  int64_t as_is = simulate(t, search, std::vector<uint8_t>(t.ops.size(), 1)).peak;
  double target = budget * (static_cast<double>(as_is) / static_cast<double>(before));
  std::optional<RematResult> least;
  // Thousands for a network, a few dozen at 10^6 ops: about 2·10^7 ops simulated.
  int64_t simulations =
      std::clamp<int64_t>(20'000'000 / std::max<size_t>(t.ops.size(), 1), 16, 3000);
  for (int attempt = 0; attempt < 6; ++attempt) {
    if (attempt == 5) target = 0;  // the last: the least peak, to fit or to name
    Tried best = search_for(t, search, grid, static_cast<int64_t>(target), simulations);
    RematResult r = result_of(t, search, best.kept);
    if (r.peak_after <= budget) return r;
    if (!least || r.peak_after < least->peak_after) least = std::move(r);
    target = std::min(target * 0.97, target * budget / static_cast<double>(least->peak_after));
  }
  user_error(
      "remat: the budget of {} is below the least peak found, {} ({:.0f}% of the present {}); "
      "give a budget of at least that",
      mib(budget), mib(least->peak_after), 100.0 * least->peak_after / before, mib(before));
}

}  // namespace

RematResult rematerialize(const Tape& t, const RematOptions& o) {
  if (!o.budget_bytes && !o.budget_share && !o.saveable && !o.recompute_elementwise) {
    user_error("remat: give a budget (--budget 50%, --budget 200MB) or a policy (--policy dots)");
  }
  Search search(t, o);
  if (!o.budget_bytes && !o.budget_share) {
    RematResult r = result_of(t, search, search.kept({}, search.num_saveable()));
    // Elementwise values are recomputed for memory alone: where the plan finds none saved
    // (ResNet-18's relus, whose batch norm's outputs are kept anyway), the tape stays.
    if (o.recompute_elementwise && r.peak_after >= r.peak_before) {
      return result_of(t, search, std::vector<uint8_t>(t.ops.size(), 1));
    }
    return r;
  }
  int64_t budget = o.budget_bytes ? *o.budget_bytes
                                  : static_cast<int64_t>(*o.budget_share * search.peak_before());
  return fit(t, search, budget);
}

void set_remat_policy(RematOptions& o, const std::string& name) {
  if (name == "all-but-elementwise") {
    o.recompute_elementwise = true;
  } else {
    o.saveable = remat_policy(name);
  }
}

std::vector<Prim> remat_policy(const std::string& name) {
  if (name == "everything") return std::vector<Prim>(all_prims().begin(), all_prims().end());
  if (name == "nothing") return std::vector<Prim>{};
  if (name == "dots") return std::vector<Prim>{Prim::matmul, Prim::conv2d};
  std::vector<Prim> prims;
  std::stringstream words(name);
  for (std::string word; std::getline(words, word, ',');) {
    std::optional<Prim> p = find_prim(word);
    if (!p) {
      std::vector<std::string> known = {"dots", "nothing", "everything", "all-but-elementwise"};
      for (Prim q : all_prims()) known.emplace_back(prim_info(q).name);
      user_error(
          "remat: unknown policy or primitive '{}'{} (policies: dots, nothing, everything, "
          "all-but-elementwise, or primitives separated by commas)",
          printable(word), did_you_mean(word, known));
    }
    prims.push_back(*p);
  }
  return prims;
}

}  // namespace ytape
