#include "opt/remat_schedule.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "tape/builder.h"
#include "tape/cost.h"
#include "tape/error.h"
#include "tape/strings.h"

namespace ytape::remat {

namespace {

// Whether running `op` twice gives the same values and does nothing else: no random draw,
// no effect, in it or in its regions.
bool recomputable(const Op& op) {
  if (op.kind != OpKind::call || prim_info(op.prim).effectful()) return false;
  for (const Tape& r : op.regions) {
    for (const Op& inner : r.ops) {
      if (inner.kind == OpKind::call && !recomputable(inner)) return false;
    }
  }
  return true;
}

bool is_derivative_name(const std::string& name) {
  return name.starts_with("grad.") || name.starts_with("tangent.");
}

// Per var: whether an output of the forward part, named or by the default.
std::vector<uint8_t> forward_outputs(const Tape& t, const std::vector<std::string>& names) {
  std::vector<uint8_t> is(t.types.size(), 0);
  std::vector<std::string> all;
  for (const Output& o : t.outputs) all.push_back(o.name);
  for (const std::string& name : names) {
    auto it = std::find(all.begin(), all.end(), name);
    if (it == all.end()) {
      std::string hint = did_you_mean(name, all);
      if (hint.empty()) {
        std::vector<std::string> primal;
        for (const std::string& n : all) {
          if (!is_derivative_name(n)) primal.push_back(printable(n));
        }
        hint = fmt::format(" (its outputs not named grad.* or tangent.*: {})",
                           primal.empty() ? "none" : fmt::format("{}", fmt::join(primal, ", ")));
      }
      user_error("remat: '{}' is not an output of the tape{}", printable(name), hint);
    }
    is[t.outputs[it - all.begin()].var.id] = 1;
  }
  if (names.empty()) {
    for (const Output& o : t.outputs) is[o.var.id] |= !is_derivative_name(o.name);
  }
  return is;
}

// Per op: whether the forward outputs need it.
std::vector<uint8_t> ancestors(const Tape& t, std::vector<uint8_t> needed) {
  std::vector<uint8_t> anc(t.ops.size(), 0);
  for (size_t i = t.ops.size(); i-- > 0;) {
    const Op& op = t.ops[i];
    for (Var o : op.outs) anc[i] |= needed[o.id];
    if (anc[i]) {
      for (Var a : op.args) needed[a.id] = 1;
    }
  }
  return anc;
}

// Marks a.cut: forward ops after which the forward part reads no earlier computed value
// but their one output (a chain's link, a residual block's sum): recomputing from one
// needs nothing before it. Sets a.end_bytes of each: what keeping it holds, that output and
// those the backward part reads (`read_late`, per var).
void find_cuts(const Tape& t, Analysis& a, const std::vector<uint8_t>& read_late) {
  std::vector<size_t> last_read(t.types.size(), 0);
  for (size_t i = 0; i < a.forward_end; ++i) {
    for (Var v : t.ops[i].args) last_read[v.id] = i;
  }
  std::vector<uint8_t> open(t.types.size(), 0);
  int64_t live = 0;
  for (size_t i = 0; i < a.forward_end; ++i) {
    const Op& op = t.ops[i];
    for (Var v : op.args) {
      if (open[v.id] && last_read[v.id] == i) open[v.id] = 0, --live;
    }
    int opened = 0;
    int64_t held = a.kept_bytes[i];
    for (Var o : op.outs) {
      if (a.bytes[o.id] == 0 || last_read[o.id] <= i) continue;
      open[o.id] = 1, ++live, ++opened;
      if (!read_late[o.id]) held += a.bytes[o.id];
    }
    a.cut[i] = op.kind == OpKind::call && opened == 1 && live == 1;
    if (a.cut[i]) a.end_bytes[i] = held;
  }
}

}  // namespace

Analysis analyze(const Tape& t, const std::vector<std::string>& names) {
  Analysis a;
  size_t n = t.ops.size();
  std::vector<uint8_t> anc = ancestors(t, forward_outputs(t, names));
  for (size_t i = 0; i < n; ++i) {
    if (anc[i]) a.forward_end = i + 1;
  }
  if (a.forward_end == 0 || a.forward_end == n) {
    user_error("remat: the tape has no {} part: {}", a.forward_end == 0 ? "forward" : "backward",
               a.forward_end == 0 ? "no output is a forward output (name them with --forward)"
                                  : "every op comes before or is needed by its forward outputs "
                                    "(name them with --forward, or differentiate it with grad)");
  }
  a.producer.assign(t.types.size(), -1);
  a.bytes.assign(t.types.size(), 0);
  a.pinned.assign(n, 0);
  a.cut.assign(n, 0);
  a.end_bytes.assign(n, 0);
  a.flops.assign(n, 0);
  std::vector<uint8_t> is_output(t.types.size(), 0);
  for (const Output& o : t.outputs) is_output[o.var.id] = 1;
  for (size_t i = 0; i < n; ++i) {
    const Op& op = t.ops[i];
    if (op.kind != OpKind::call) continue;
    a.flops[i] = op_flops(t, op);
    bool pinned = !anc[i] || !recomputable(op);
    for (Var o : op.outs) {
      a.producer[o.id] = static_cast<int32_t>(i);
      const Type& type = t.type(o);
      if (!is_output[o.id]) a.bytes[o.id] = type.size() * dtype_size(type.dtype);
      pinned = pinned || is_output[o.id];
    }
    a.pinned[i] = pinned;
    if (anc[i] && i < a.forward_end) a.forward_ops.push_back(i);
  }
  a.kept_bytes.assign(n, 0);
  std::vector<uint8_t> read_late(t.types.size(), 0);
  for (size_t i = a.forward_end; i < n; ++i) {
    for (Var v : t.ops[i].args) {
      if (a.producer[v.id] >= 0 && !read_late[v.id]) {
        read_late[v.id] = 1;
        a.kept_bytes[a.producer[v.id]] += a.bytes[v.id];
      }
    }
  }
  for (size_t i = 0; i < a.forward_end; ++i) {
    bool late = false;
    for (Var o : t.ops[i].outs) late = late || read_late[o.id];
    if (late && !a.pinned[i]) a.boundary.push_back(i);
  }
  find_cuts(t, a, read_late);
  return a;
}

namespace {

// Builds a schedule: the forward part as it is, then each backward op after the
// recomputations its arguments need.
class Scheduler {
 public:
  Scheduler(const Tape& t, const Analysis& a, const std::vector<uint8_t>& kept)
      : t_(t), a_(a), kept_(kept), again_(t.ops.size(), 0), vars_(t.types.size()) {}

  Schedule run() {
    s_.entries.reserve(t_.ops.size());
    for (size_t i = 0; i < a_.forward_end; ++i) append(i, false);
    for (size_t i = a_.forward_end; i < t_.ops.size(); ++i) {
      for (Var v : t_.ops[i].args) recompute(v);
      append(i, false);
    }
    return std::move(s_);
  }

 private:
  // Whether the value `v` is to be recomputed before a backward op reads it.
  bool wanted(Var v) const {
    int32_t p = a_.producer[v.id];
    return p >= 0 && static_cast<size_t>(p) < a_.forward_end && !kept_[p] && !again_[p];
  }

  // Schedules the recomputation of v's op after those of its arguments, depth first
  // without recursion (a chain of 10^6 ops is no deeper a stack).
  void recompute(Var v) {
    if (!wanted(v)) return;
    stack_.push_back({static_cast<uint32_t>(a_.producer[v.id]), 0});
    while (!stack_.empty()) {
      auto& [op, next] = stack_.back();
      const VarList& args = t_.ops[op].args;
      if (next < args.size()) {
        Var w = args[next++];
        if (wanted(w)) stack_.push_back({static_cast<uint32_t>(a_.producer[w.id]), 0});
        continue;
      }
      uint32_t done = op;
      stack_.pop_back();
      again_[done] = 1;
      s_.recomputed_flops += a_.flops[done];
      ++s_.recomputed_ops;
      append(done, true);
    }
  }

  // The id the schedule reads for `v` now.
  uint32_t resolve(Var v) const {
    int32_t p = a_.producer[v.id];
    return p >= 0 && again_[p] ? v.id + vars_ : v.id;
  }

  void append(size_t i, bool again) {
    s_.entries.push_back({static_cast<uint32_t>(i), again, static_cast<uint32_t>(s_.args.size())});
    for (Var v : t_.ops[i].args) s_.args.push_back(resolve(v));
  }

  const Tape& t_;
  const Analysis& a_;
  const std::vector<uint8_t>& kept_;
  std::vector<uint8_t> again_;  // per op: recomputed already
  uint32_t vars_;
  std::vector<std::pair<uint32_t, size_t>> stack_;
  Schedule s_;
};

}  // namespace

Schedule schedule(const Tape& t, const Analysis& a, const std::vector<uint8_t>& kept) {
  return Scheduler(t, a, kept).run();
}

int64_t simulated_peak(const Tape& t, const Analysis& a, const Schedule& s) {
  uint32_t vars = static_cast<uint32_t>(t.types.size());
  auto bytes = [&](uint32_t id) { return a.bytes[id < vars ? id : id - vars]; };
  std::vector<int64_t> last(2 * size_t{vars}, -1);
  for (size_t j = 0; j < s.entries.size(); ++j) {
    const Schedule::Entry& e = s.entries[j];
    for (size_t k = 0; k < t.ops[e.op].args.size(); ++k) last[s.args[e.args_begin + k]] = j;
  }
  int64_t live = 0, peak = 0;
  for (size_t j = 0; j < s.entries.size(); ++j) {
    const Schedule::Entry& e = s.entries[j];
    const Op& op = t.ops[e.op];
    for (Var o : op.outs) live += bytes(o.id);
    peak = std::max(peak, live + (a.work_bytes.empty() ? 0 : a.work_bytes[e.op]));
    for (size_t k = 0; k < op.args.size(); ++k) {
      uint32_t id = s.args[e.args_begin + k];
      if (last[id] == static_cast<int64_t>(j)) live -= bytes(id), last[id] = -2;
    }
    for (Var o : op.outs) {
      uint32_t id = e.again ? o.id + vars : o.id;
      if (last[id] == -1) live -= bytes(id);
    }
  }
  return peak;
}

Tape emit(const Tape& t, const Schedule& s, const std::vector<std::string>& algorithms) {
  uint32_t vars = static_cast<uint32_t>(t.types.size());
  Builder b = Builder::like(t);
  b.reserve(s.entries.size(), t.types.size() + s.recomputed_ops * 2);
  VarMap map(t);
  std::vector<Var> again(vars);
  for (const Schedule::Entry& e : s.entries) {
    const Op& op = t.ops[e.op];
    if (op.kind != OpKind::call) {
      copy_op(b, t, op, map);
      continue;
    }
    VarList args;
    args.reserve(op.args.size());
    for (size_t k = 0; k < op.args.size(); ++k) {
      uint32_t id = s.args[e.args_begin + k];
      args.push_back(id < vars ? map[Var{id}] : again[id - vars]);
    }
    b.set_loc(op.loc);
    Attrs attrs = op.attrs;
    if (!algorithms[e.op].empty()) attrs.set("algorithm", algorithms[e.op]);
    const Op& now = b.record(op.prim, std::move(args), attrs, op.regions);
    for (size_t k = 0; k < op.outs.size(); ++k) {
      if (e.again) {
        again[op.outs[k].id] = now.outs[k];
      } else {
        map.set(op.outs[k], now.outs[k]);
      }
    }
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return b.finish();
}

}  // namespace ytape::remat
