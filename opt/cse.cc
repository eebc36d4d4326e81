#include "opt/cse.h"

#include <algorithm>
#include <bit>
#include <functional>
#include <string_view>
#include <vector>

#include "tape/builder.h"

namespace ytape {

namespace {

uint64_t mix(uint64_t h, uint64_t v) {
  // SplitMix64's finalizer over the running hash: cheap and well spread.
  uint64_t z = h ^ (v + 0x9e3779b97f4a7c15ull + (h << 6) + (h >> 2));
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

uint64_t hash_value(const AttrValue& v) {
  uint64_t h = v.index();
  switch (attr_kind(v)) {
    case AttrKind::int_:
      return mix(h, static_cast<uint64_t>(std::get<int64_t>(v)));
    case AttrKind::ints:
      for (int64_t i : std::get<std::vector<int64_t>>(v)) h = mix(h, static_cast<uint64_t>(i));
      return h;
    case AttrKind::float_:
      return mix(h, std::bit_cast<uint64_t>(std::get<double>(v)));
    case AttrKind::bool_:
      return mix(h, std::get<bool>(v));
    case AttrKind::string:
      return mix(h, std::hash<std::string>{}(std::get<std::string>(v)));
    case AttrKind::dtype:
      return mix(h, static_cast<uint64_t>(std::get<DType>(v)));
  }
  return h;
}

// Attrs' own == compares floats by value, which would merge fill(0.0) with fill(-0.0).
bool same_value(const AttrValue& a, const AttrValue& b) {
  if (a.index() != b.index()) return false;
  if (attr_kind(a) == AttrKind::float_) {
    return std::bit_cast<uint64_t>(std::get<double>(a)) ==
           std::bit_cast<uint64_t>(std::get<double>(b));
  }
  return a == b;
}

bool same_attrs(const Attrs& a, const Attrs& b) {
  if (a.size() != b.size()) return false;
  for (auto i = a.begin(), j = b.begin(); i != a.end(); ++i, ++j) {
    if (i->name != j->name || !same_value(i->value, j->value)) return false;
  }
  return true;
}

std::string_view bytes_of(const Op& op) {
  return {reinterpret_cast<const char*>(op.value.data()), op.value.size()};
}

// Finds, for each op in order, an earlier op computing the same thing. Vars are compared
// through `rep_`: the var of the earliest op computing the same value, so that chains of
// equal expressions merge in one sweep. The ops seen are kept in an open-addressing table
// (linear probing, at most half full): one probe per op, mostly, and no allocation per op.
class Merger {
 public:
  explicit Merger(const Tape& t) : t_(t), rep_(t.types.size()) {
    for (uint32_t v = 0; v < rep_.size(); ++v) rep_[v] = v;
    size_t capacity = 16;
    while (capacity < 2 * t.ops.size()) capacity *= 2;
    slots_.assign(capacity, Slot{});
    mask_ = capacity - 1;
  }

  // Starts loading the slot `ops[i]` will probably probe first: the table is far larger
  // than the caches, so each probe is a miss unless asked for early. (The hash may change
  // before the op is visited, if an argument merges meanwhile; the load is then wasted.)
  void prefetch(size_t i) {
    if (i >= t_.ops.size() || !mergeable(t_.ops[i])) return;
    __builtin_prefetch(&slots_[hash(t_.ops[i]) & mask_]);
  }

  // The earlier op that `ops[i]` merges into, or i itself; records the merge in rep_.
  size_t visit(size_t i) {
    const Op& op = t_.ops[i];
    if (!mergeable(op)) return i;
    uint64_t h = hash(op);
    auto tag = static_cast<uint32_t>(h >> 32);
    for (size_t k = h & mask_;; k = (k + 1) & mask_) {
      Slot& slot = slots_[k];
      if (slot.op == kEmpty) {
        slot = {tag, static_cast<uint32_t>(i)};
        return i;
      }
      if (slot.tag != tag) continue;
      const Op& first = t_.ops[slot.op];
      if (!same(op, first)) continue;
      for (size_t o = 0; o < op.outs.size(); ++o) rep_[op.outs[o].id] = rep_[first.outs[o].id];
      return slot.op;
    }
  }

 private:
  static constexpr uint32_t kEmpty = ~uint32_t{0};
  struct Slot {
    uint32_t tag = 0;  // the high half of the op's hash; the low half chose the slot
    uint32_t op = kEmpty;
  };

  // Region ops are not merged: their hash and equality would have to read their regions.
  static bool mergeable(const Op& op) {
    return op.kind == OpKind::constant ||
           (op.kind == OpKind::call && !prim_info(op.prim).effectful() &&
            !prim_info(op.prim).holds_regions());
  }

  // The arguments through rep_, sorted for commutative primitives.
  void canonical_args(const Op& op, std::vector<uint32_t>& out) const {
    out.clear();
    for (Var a : op.args) out.push_back(rep_[a.id]);
    if (op.kind == OpKind::call && prim_info(op.prim).commutative())
      std::sort(out.begin(), out.end());
  }

  uint64_t hash(const Op& op) {
    uint64_t h = mix(static_cast<uint64_t>(op.kind), static_cast<uint64_t>(op.prim));
    if (op.kind == OpKind::constant) {
      const Type& type = t_.type(op.outs[0]);
      h = mix(h, static_cast<uint64_t>(type.dtype));
      for (int64_t d : type.shape) h = mix(h, static_cast<uint64_t>(d));
      return mix(h, std::hash<std::string_view>{}(bytes_of(op)));
    }
    canonical_args(op, args_);
    for (uint32_t a : args_) h = mix(h, a);
    for (const Attr& a : op.attrs) h = mix(h, hash_value(a.value));
    return h;
  }

  bool same(const Op& op, const Op& first) {
    if (op.kind != first.kind) return false;
    if (op.kind == OpKind::constant) {
      return t_.type(op.outs[0]) == t_.type(first.outs[0]) && op.value == first.value;
    }
    if (op.prim != first.prim || !same_attrs(op.attrs, first.attrs)) return false;
    canonical_args(op, args_);
    canonical_args(first, other_args_);
    return args_ == other_args_;
  }

  const Tape& t_;
  std::vector<uint32_t> rep_;
  std::vector<Slot> slots_;
  size_t mask_ = 0;
  std::vector<uint32_t> args_, other_args_;  // scratch
};

}  // namespace

PassResult eliminate_common_subexpressions(const Tape& t) {
  Merger merger(t);
  // Index of the op each op merges into (itself when it stays); computed before building
  // anything, so that a tape without duplicates is never copied.
  std::vector<uint32_t> into(t.ops.size());
  size_t changed = 0;
  constexpr size_t kAhead = 16;  // ops between a prefetch and its use
  for (size_t i = 0; i < t.ops.size(); ++i) {
    merger.prefetch(i + kAhead);
    into[i] = static_cast<uint32_t>(merger.visit(i));
    if (into[i] != i) ++changed;
  }
  if (changed == 0) return {};

  Builder b = Builder::like(t);
  b.reserve(t.ops.size() - changed, t.types.size());
  VarMap map(t);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    if (into[i] == i) {
      copy_op(b, t, op, map);
      continue;
    }
    const Op& first = t.ops[into[i]];
    for (size_t k = 0; k < op.outs.size(); ++k) map.set(op.outs[k], map[first.outs[k]]);
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

}  // namespace ytape
