#include "inspect/diff.h"

#include <algorithm>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "inspect/diff_keys.h"

namespace ytape {

namespace {

using namespace diff_keys;

// Where each var of a tape is defined: the op and which of its outputs.
struct Defs {
  std::vector<uint32_t> op;
  std::vector<uint32_t> index;

  explicit Defs(const Tape& t) : op(t.types.size(), kNone), index(t.types.size(), 0) {
    for (size_t i = 0; i < t.ops.size(); ++i) {
      const VarList& outs = t.ops[i].outs;
      for (size_t k = 0; k < outs.size(); ++k) {
        op[outs[k].id] = static_cast<uint32_t>(i);
        index[outs[k].id] = static_cast<uint32_t>(k);
      }
    }
  }
};

// The alignment. A value class is a var of A: equal ops of A (same primitive, attributes
// or constant, and arguments of the same classes) share the class of the first of them, its
// representative (value numbering), except effects, which are never merged. A var of B gets
// the class of the var of A it is aligned with. Ops are paired one to one, at most once each.
class Aligner {
 public:
  Aligner(const Tape& a, const Tape& b)
      : a_(a),
        b_(b),
        a_defs_(a),
        b_defs_(b),
        a_class_(a.types.size(), kNone),
        b_class_(b.types.size(), kNone),
        a_rep_(a.ops.size(), kNone),
        next_instance_(a.ops.size(), kNone),
        last_instance_(a.ops.size(), kNone),
        cursor_(a.ops.size(), kNone),
        next_rep_(a.ops.size(), kNone),
        first_rep_(a.ops.size()),
        spare_(a.ops.size(), 0),
        b_rep_(b.ops.size(), kNone),
        pair_a_(a.ops.size(), kNone),
        pair_b_(b.ops.size(), kNone) {}

  void align() {
    number_a();
    align_inputs();
    match_bottom_up(false);
    pair_top_down();
    match_bottom_up(true);
    pair_instances();
  }

  TapeDiff report() const;

 private:
  uint64_t class_key_hash(const Op& op) const;
  bool key_equal(const Tape& xt, const Op& x, const std::vector<uint32_t>& x_cls,
                 const Op& r) const;
  bool same_args(const Op& a, const Op& b) const;
  bool same_op(const Op& a, const Op& b) const;
  void number_a();
  void align_inputs();
  void match_bottom_up(bool or_change);
  bool match(uint32_t b, uint64_t hash);
  bool pair_changed(uint32_t b);
  uint64_t args_hash(const Op& op, const std::vector<uint32_t>& cls) const;
  void pair_instances();
  uint32_t first_unpaired(uint32_t rep);
  void pair(uint32_t a, uint32_t b);
  void pair_top_down();
  void outputs_diff(TapeDiff& d) const;
  bool spare(uint32_t a) const { return a_rep_[a] == kNone || spare_[a_rep_[a]] > 0; }
  // Pairs `a`, one of its class's spare ops, with `b`.
  void take(uint32_t a, uint32_t b) {
    if (a_rep_[a] != kNone) --spare_[a_rep_[a]];
    pair(a, b);
  }
  bool aligned(uint32_t b) const {
    const Op& op = b_.ops[b];
    return op.outs.empty() ? pair_b_[b] != kNone : b_class_[op.outs[0].id] != kNone;
  }

  const Tape& a_;
  const Tape& b_;
  Defs a_defs_, b_defs_;
  std::vector<uint32_t> a_class_, b_class_;  // per var
  std::vector<uint32_t> a_rep_;              // per op of A: its representative
  std::vector<uint32_t> next_instance_;      // per op of A: the next equal op
  std::vector<uint32_t> last_instance_;      // per representative
  std::vector<uint32_t> cursor_;             // per representative: first instance maybe unpaired
  std::vector<uint32_t> next_rep_;           // per representative: the next one of its hash
  HashIndex first_rep_;                      // key hash -> first representative
  std::vector<uint64_t> a_hash_, a_var_hash_, b_hash_;  // structural, per op and per var
  // Per representative: ops of its class that no op of B has claimed, for top-down pairing
  // and pair_changed to take.
  std::vector<uint32_t> spare_;
  std::vector<uint32_t> b_rep_;  // per op of B: the representative it matched
  // Unpaired calls of A by their arguments' classes, for pair_changed; built on first use.
  struct Candidates {
    std::vector<uint32_t> ops;
    size_t first = 0;  // ops before it are paired
  };
  std::unordered_map<uint64_t, Candidates> by_args_;
  bool by_args_built_ = false;
  std::vector<uint32_t> pair_a_, pair_b_;  // per op: the op of the other tape
};

// The key hash of an op of B from the classes of its arguments: that of the op of A it
// should match (a class's hash is the structural hash of its vars).
uint64_t Aligner::class_key_hash(const Op& op) const {
  return op_key_hash(b_, op, [this](Var v) { return a_var_hash_[b_class_[v.id]]; });
}

// `x` of `xt` (its argument classes in `x_cls`) computes what `r` of A computes.
bool Aligner::key_equal(const Tape& xt, const Op& x, const std::vector<uint32_t>& x_cls,
                        const Op& r) const {
  if (x.kind != r.kind || x.outs.size() != r.outs.size()) return false;
  if (x.kind == OpKind::constant) {
    return xt.type(x.outs[0]) == a_.type(r.outs[0]) && x.value == r.value;
  }
  if (x.prim != r.prim || x.args.size() != r.args.size() || !same_attrs(x.attrs, r.attrs) ||
      !same_regions(x.regions, r.regions)) {
    return false;
  }
  auto arg = [&](const Op& op, const std::vector<uint32_t>& cls, size_t i) {
    return cls[op.args[i].id];
  };
  if (commutative(x)) {
    uint32_t x0 = arg(x, x_cls, 0), x1 = arg(x, x_cls, 1);
    uint32_t r0 = arg(r, a_class_, 0), r1 = arg(r, a_class_, 1);
    return (x0 == r0 && x1 == r1) || (x0 == r1 && x1 == r0);
  }
  for (size_t i = 0; i < x.args.size(); ++i) {
    if (arg(x, x_cls, i) != arg(r, a_class_, i)) return false;
  }
  return true;
}

// Value numbering of A: every op joins the class of the first equal op before it.
void Aligner::number_a() {
  a_hash_ = structural_hashes(a_, &a_var_hash_);
  constexpr size_t kAhead = 16;
  for (size_t i = 0; i < a_.ops.size(); ++i) {
    if (i + kAhead < a_.ops.size()) first_rep_.prefetch(a_hash_[i + kAhead]);
    const Op& op = a_.ops[i];
    auto index = static_cast<uint32_t>(i);
    if (op.kind == OpKind::input) {
      a_class_[op.outs[0].id] = op.outs[0].id;
      continue;
    }
    bool fresh = false;
    uint32_t first = first_rep_.find_or_insert(a_hash_[i], index, &fresh);
    uint32_t rep = kNone;
    for (uint32_t r = first; !fresh; r = next_rep_[r]) {
      if (key_equal(a_, op, a_class_, a_.ops[r])) {
        rep = r;
        break;
      }
      if (next_rep_[r] == kNone) {
        next_rep_[r] = index;  // a new key with the hash of another
        break;
      }
    }
    if (rep == kNone) {
      rep = index;
      cursor_[rep] = index;
    } else {
      next_instance_[last_instance_[rep]] = index;
    }
    last_instance_[rep] = index;
    ++spare_[rep];
    a_rep_[i] = rep;
    // Effects are never merged: each keeps a class of its own.
    const Op& source = effectful(op) ? op : a_.ops[rep];
    for (size_t k = 0; k < op.outs.size(); ++k) a_class_[op.outs[k].id] = source.outs[k].id;
  }
}

void Aligner::align_inputs() {
  std::unordered_map<std::string_view, uint32_t> by_name;
  for (size_t i = 0, n = a_.num_inputs(); i < n; ++i) by_name.emplace(a_.ops[i].name, i);
  for (size_t j = 0, n = b_.num_inputs(); j < n; ++j) {  // num_inputs counts on each call
    auto it = by_name.find(b_.ops[j].name);
    if (it != by_name.end()) pair(it->second, static_cast<uint32_t>(j));
  }
}

uint32_t Aligner::first_unpaired(uint32_t rep) {
  uint32_t& c = cursor_[rep];
  while (c != kNone && pair_a_[c] != kNone) c = next_instance_[c];
  return c;
}

void Aligner::pair(uint32_t a, uint32_t b) {
  pair_a_[a] = b;
  pair_b_[b] = a;
  const Op& x = a_.ops[a];
  const Op& y = b_.ops[b];
  for (size_t k = 0; k < std::min(x.outs.size(), y.outs.size()); ++k) {
    b_class_[y.outs[k].id] = a_class_[x.outs[k].id];
  }
}

// One sweep in B's order; with `or_change`, an op that matches nothing but reads aligned
// values pairs with an op of A that reads the same ones (pair_changed), so that what reads it
// aligns in the same sweep.
// The first sweep's arguments have classes only from exact matches, so the structural hash
// of B's op is its key hash, known ahead.
void Aligner::match_bottom_up(bool or_change) {
  if (!or_change) {
    std::vector<uint64_t> vars;
    b_hash_ = structural_hashes(b_, &vars);
  }
  constexpr size_t kAhead = 16;
  for (size_t j = 0; j < b_.ops.size(); ++j) {
    if (!or_change && j + kAhead < b_.ops.size()) first_rep_.prefetch(b_hash_[j + kAhead]);
    auto b = static_cast<uint32_t>(j);
    const Op& op = b_.ops[j];
    if (op.kind == OpKind::input || aligned(b)) continue;
    bool ready = std::all_of(op.args.begin(), op.args.end(),
                             [this](Var v) { return b_class_[v.id] != kNone; });
    if (ready && match(b, or_change ? class_key_hash(op) : b_hash_[j])) continue;
    if (or_change) pair_changed(b);
  }
}

uint64_t Aligner::args_hash(const Op& op, const std::vector<uint32_t>& cls) const {
  uint64_t h = mix(op.args.size(), op.outs.size());
  for (Var v : op.args) h = mix(h, cls[v.id]);
  return h;
}

// The last resort for an op `b` of B whose arguments are aligned: the first op of A that
// reads the same values and is neither paired nor claimed by ops of B of its class, changed
// (sin(x) for cos(x)). Catches edits that top-down pairing cannot reach, such as in ops no output
// depends on.
bool Aligner::pair_changed(uint32_t b) {
  const Op& op = b_.ops[b];
  if (op.kind != OpKind::call || op.args.empty()) return false;
  for (Var v : op.args) {
    if (b_class_[v.id] == kNone) return false;
  }
  if (!by_args_built_) {
    for (size_t i = 0; i < a_.ops.size(); ++i) {
      const Op& x = a_.ops[i];
      if (x.kind != OpKind::call || x.args.empty() || pair_a_[i] != kNone || !spare(i)) {
        continue;
      }
      by_args_[args_hash(x, a_class_)].ops.push_back(static_cast<uint32_t>(i));
    }
    by_args_built_ = true;
  }
  auto it = by_args_.find(args_hash(op, b_class_));
  if (it == by_args_.end()) return false;
  Candidates& c = it->second;
  while (c.first < c.ops.size() && pair_a_[c.ops[c.first]] != kNone) ++c.first;
  for (size_t k = c.first; k < c.ops.size(); ++k) {
    uint32_t a = c.ops[k];
    const Op& x = a_.ops[a];
    if (pair_a_[a] != kNone || !spare(a) || x.args.size() != op.args.size() ||
        x.outs.size() != op.outs.size()) {
      continue;
    }
    bool same = true;
    for (size_t i = 0; i < x.args.size() && same; ++i) {
      same = a_class_[x.args[i].id] == b_class_[op.args[i].id];
    }
    if (same) {
      take(a, b);
      return true;
    }
  }
  return false;
}

// Gives op `b` of B, whose arguments are aligned, the class of an equal op of A (`hash` is
// its key hash). Effects pair at once with the first unpaired equal effect of A; other ops
// pair later, in pair_instances.
bool Aligner::match(uint32_t b, uint64_t hash) {
  const Op& op = b_.ops[b];
  uint32_t rep = first_rep_.find(hash);
  while (rep != kNone && !key_equal(b_, op, b_class_, a_.ops[rep])) rep = next_rep_[rep];
  if (rep == kNone) return false;
  if (effectful(op)) {
    uint32_t instance = first_unpaired(rep);
    if (instance == kNone) return false;
    pair(instance, b);
    return true;
  }
  for (size_t k = 0; k < op.outs.size(); ++k)
    b_class_[op.outs[k].id] = a_class_[a_.ops[rep].outs[k].id];
  if (spare_[rep] > 0) --spare_[rep];
  b_rep_[b] = rep;
  return true;
}

// Pairs each op of B that has a class with an unpaired op of A of that class: the one its
// first reader's partner reads in the same place, when that reader is paired already (a
// constant of a changed layer), else the first in order; none left means B computes the
// value once more than A, an added op.
void Aligner::pair_instances() {
  std::vector<std::pair<uint32_t, uint32_t>> reader(b_.types.size(), {kNone, 0});
  for (size_t j = b_.ops.size(); j-- > 0;) {
    const VarList& args = b_.ops[j].args;
    for (size_t p = args.size(); p-- > 0;) reader[args[p].id] = {static_cast<uint32_t>(j), p};
  }
  for (size_t j = 0; j < b_.ops.size(); ++j) {
    uint32_t rep = b_rep_[j];
    if (rep == kNone || pair_b_[j] != kNone) continue;
    const Op& op = b_.ops[j];
    uint32_t instance = kNone;
    if (!op.outs.empty()) {
      auto [user, place] = reader[op.outs[0].id];
      if (user != kNone && pair_b_[user] != kNone && place < a_.ops[pair_b_[user]].args.size()) {
        Var v = a_.ops[pair_b_[user]].args[place];
        uint32_t candidate = a_defs_.op[v.id];
        if (a_rep_[candidate] == rep && a_defs_.index[v.id] == 0 && pair_a_[candidate] == kNone) {
          instance = candidate;
        }
      }
    }
    if (instance == kNone) instance = first_unpaired(rep);
    if (instance != kNone) pair(instance, static_cast<uint32_t>(j));
  }
}

// What the bottom-up match left: the op of A and the op of B that produce an output of the
// same name, or the same argument of two paired ops of the same primitive, are the same op,
// changed. Unpaired effects pair up in order by primitive and location.
void Aligner::pair_top_down() {
  std::vector<std::pair<uint32_t, uint32_t>> work;  // (var of A, var of B)
  std::unordered_map<std::string_view, Var> a_outputs;
  for (const Output& o : a_.outputs) a_outputs.emplace(o.name, o.var);
  for (const Output& o : b_.outputs) {
    auto it = a_outputs.find(o.name);
    if (it != a_outputs.end()) work.emplace_back(it->second.id, o.var.id);
  }
  auto push_args = [&](uint32_t a, uint32_t b) {
    const Op& x = a_.ops[a];
    const Op& y = b_.ops[b];
    if (x.kind != OpKind::call || y.kind != OpKind::call || x.prim != y.prim ||
        x.args.size() != y.args.size()) {
      return;
    }
    for (size_t i = 0; i < x.args.size(); ++i) work.emplace_back(x.args[i].id, y.args[i].id);
  };
  std::unordered_map<uint64_t, std::vector<uint32_t>> a_effects;  // by primitive and location
  auto effect_key = [](const Tape& t, const Op& op) {
    return hash_string(mix(static_cast<uint64_t>(op.prim), op.loc.line), t.loc_str(op.loc));
  };
  for (size_t i = a_.ops.size(); i-- > 0;) {
    if (effectful(a_.ops[i]) && pair_a_[i] == kNone) {
      a_effects[effect_key(a_, a_.ops[i])].push_back(static_cast<uint32_t>(i));
    }
  }
  for (size_t j = 0; j < b_.ops.size(); ++j) {
    if (!effectful(b_.ops[j]) || pair_b_[j] != kNone) continue;
    auto it = a_effects.find(effect_key(b_, b_.ops[j]));
    if (it == a_effects.end() || it->second.empty()) continue;
    uint32_t a = it->second.back();
    it->second.pop_back();
    if (a_.ops[a].prim != b_.ops[j].prim) continue;
    pair(a, static_cast<uint32_t>(j));
    push_args(a, static_cast<uint32_t>(j));
  }
  for (size_t next = 0; next < work.size(); ++next) {
    auto [av, bv] = work[next];
    if (b_class_[bv] != kNone || a_defs_.index[av] != b_defs_.index[bv]) continue;
    uint32_t a = a_defs_.op[av], b = b_defs_.op[bv];
    // Ops of A that ops of B of their class claim are left for pair_instances.
    if (pair_a_[a] != kNone || pair_b_[b] != kNone || !spare(a)) continue;
    take(a, b);
    push_args(a, b);
  }
}

bool Aligner::same_args(const Op& a, const Op& b) const {
  if (a.args.size() != b.args.size()) return false;
  auto cls = [&](size_t i) { return b_class_[b.args[i].id]; };
  auto a_cls = [&](size_t i) { return a_class_[a.args[i].id]; };
  if (commutative(a) && cls(0) == a_cls(1) && cls(1) == a_cls(0)) return true;
  for (size_t i = 0; i < a.args.size(); ++i) {
    if (cls(i) != a_cls(i)) return false;
  }
  return true;
}

// Paired ops that compute the same from aligned arguments; outputs types may differ when
// an input's type changed, which the input's own line shows.
bool Aligner::same_op(const Op& a, const Op& b) const {
  if (a.kind != b.kind) return false;
  switch (a.kind) {
    case OpKind::input:
      return a.name == b.name && a_.type(a.outs[0]) == b_.type(b.outs[0]);
    case OpKind::constant:
      return a_.type(a.outs[0]) == b_.type(b.outs[0]) && a.value == b.value;
    case OpKind::call:
      return a.prim == b.prim && same_attrs(a.attrs, b.attrs) &&
             same_regions(a.regions, b.regions) && same_args(a, b);
  }
  return false;
}

void Aligner::outputs_diff(TapeDiff& d) const {
  std::unordered_map<std::string_view, size_t> in_b;
  for (size_t j = 0; j < b_.outputs.size(); ++j) in_b.emplace(b_.outputs[j].name, j);
  std::vector<bool> seen(b_.outputs.size(), false);
  std::vector<size_t> b_order;  // B's indices of common outputs, in A's order
  for (size_t i = 0; i < a_.outputs.size(); ++i) {
    auto it = in_b.find(a_.outputs[i].name);
    if (it == in_b.end()) {
      d.outputs.push_back({Change::removed, i, kNoIndex});
      continue;
    }
    size_t j = it->second;
    seen[j] = true;
    b_order.push_back(j);
    if (b_class_[b_.outputs[j].var.id] != a_class_[a_.outputs[i].var.id]) {
      d.outputs.push_back({Change::changed, i, j});
    }
  }
  for (size_t j = 0; j < b_.outputs.size(); ++j) {
    if (!seen[j]) d.outputs.push_back({Change::added, kNoIndex, j});
  }
  d.outputs_reordered = !std::is_sorted(b_order.begin(), b_order.end());
}

void meta_diff(const Tape& a, const Tape& b, TapeDiff& d) {
  std::unordered_map<std::string_view, std::vector<size_t>> in_b;  // key -> indices, in order
  for (size_t j = 0; j < b.meta.size(); ++j) in_b[b.meta[j].first].push_back(j);
  std::unordered_map<std::string_view, size_t> used;
  std::vector<bool> seen(b.meta.size(), false);
  for (const auto& [key, value] : a.meta) {
    auto it = in_b.find(key);
    size_t n = used[key]++;
    if (it == in_b.end() || n >= it->second.size()) {
      d.meta.push_back({key, value, std::nullopt});
      continue;
    }
    size_t j = it->second[n];
    seen[j] = true;
    if (b.meta[j].second != value) d.meta.push_back({key, value, b.meta[j].second});
  }
  for (size_t j = 0; j < b.meta.size(); ++j) {
    if (!seen[j]) d.meta.push_back({b.meta[j].first, std::nullopt, b.meta[j].second});
  }
}

// Differences in B's order; in each gap between aligned ops, A's removed ops come first.
TapeDiff Aligner::report() const {
  TapeDiff d;
  d.a_of_b.resize(b_.ops.size(), kNoIndex);
  std::vector<OpChange> added;
  size_t next_a = 0;
  auto flush = [&](size_t until) {
    for (; next_a < until; ++next_a) {
      if (pair_a_[next_a] == kNone) d.ops.push_back({Change::removed, next_a, kNoIndex});
    }
    d.ops.insert(d.ops.end(), added.begin(), added.end());
    added.clear();
  };
  for (size_t j = 0; j < b_.ops.size(); ++j) {
    if (pair_b_[j] == kNone) {
      added.push_back({Change::added, kNoIndex, j});
      continue;
    }
    size_t i = pair_b_[j];
    d.a_of_b[j] = i;
    flush(i);
    if (next_a == i) ++next_a;
    if (!same_op(a_.ops[i], b_.ops[j])) d.ops.push_back({Change::changed, i, j});
  }
  flush(a_.ops.size());
  outputs_diff(d);
  d.name_differs = a_.name != b_.name;
  meta_diff(a_, b_, d);
  return d;
}

}  // namespace

TapeDiff diff_tapes(const Tape& a, const Tape& b) {
  Aligner aligner(a, b);
  aligner.align();
  return aligner.report();
}

}  // namespace ytape
