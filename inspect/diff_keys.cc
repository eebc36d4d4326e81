#include "inspect/diff_keys.h"

#include <cstring>
#include <type_traits>
#include <variant>

#include "tape/digest.h"

namespace ytape::diff_keys {

namespace {

uint64_t hash_attr(uint64_t h, const AttrValue& v) {
  h = mix(h, v.index());
  std::visit(
      [&h](const auto& x) {
        using T = std::decay_t<decltype(x)>;
        if constexpr (std::is_same_v<T, std::vector<int64_t>>) {
          for (int64_t e : x) h = mix(h, static_cast<uint64_t>(e));
        } else if constexpr (std::is_same_v<T, std::string>) {
          h = hash_string(h, x);
        } else if constexpr (std::is_same_v<T, double>) {
          uint64_t bits;
          std::memcpy(&bits, &x, 8);
          h = mix(h, bits);
        } else {
          h = mix(h, static_cast<uint64_t>(x));
        }
      },
      v);
  return h;
}

bool same_value(const AttrValue& x, const AttrValue& y) {
  if (x.index() != y.index()) return false;
  if (const double* d = std::get_if<double>(&x)) {
    double e = std::get<double>(y);
    return std::memcmp(d, &e, sizeof e) == 0;
  }
  return x == y;
}

}  // namespace

uint64_t hash_bytes(uint64_t h, const uint8_t* p, size_t n) {
  h = mix(h, n);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    uint64_t w;
    std::memcpy(&w, p + i, 8);
    h = mix(h, w);
  }
  uint64_t tail = 0;
  if (i < n) std::memcpy(&tail, p + i, n - i);  // p may be null when n is 0
  return mix(h, tail);
}

uint64_t hash_string(uint64_t h, std::string_view s) {
  return hash_bytes(h, reinterpret_cast<const uint8_t*>(s.data()), s.size());
}

uint64_t hash_attrs(uint64_t h, const Attrs& attrs) {
  for (const Attr& a : attrs) h = hash_attr(h, a.value);
  return h;
}

bool same_attrs(const Attrs& x, const Attrs& y) {
  if (x.size() != y.size()) return false;
  for (auto i = x.begin(), j = y.begin(); i != x.end(); ++i, ++j) {
    if (i->name != j->name || !same_value(i->value, j->value)) return false;
  }
  return true;
}

namespace {

// `r` without its parameters' names, nor those of the regions it holds.
void unname(Tape& r) {
  for (size_t i = 0, n = r.num_inputs(); i < n; ++i) r.ops[i].name.clear();
  for (Op& op : r.ops) {
    for (Tape& inner : op.regions) unname(inner);
  }
}

// A region's digest without its parameters' names, nested regions' included: a region's
// parameters are positional (its op gives them their values), so a renamed one computes
// the same (ONNX export names them after the values it gives them).
std::string positional_digest(const Tape& r) {
  Tape unnamed = r;
  unname(unnamed);
  return tape_digest(unnamed);
}

}  // namespace

bool same_regions(std::span<const Tape> x, std::span<const Tape> y) {
  if (x.size() != y.size()) return false;
  for (size_t i = 0; i < x.size(); ++i) {
    if (x[i].name != y[i].name || positional_digest(x[i]) != positional_digest(y[i])) return false;
  }
  return true;
}

std::vector<uint64_t> structural_hashes(const Tape& t, std::vector<uint64_t>* vars) {
  std::vector<uint64_t> ops(t.ops.size());
  vars->assign(t.types.size(), 0);
  for (size_t i = 0; i < t.ops.size(); ++i) {
    const Op& op = t.ops[i];
    uint64_t h = op.kind == OpKind::input
                     ? hash_string(0, op.name)
                     : op_key_hash(t, op, [vars](Var v) { return (*vars)[v.id]; });
    ops[i] = h;
    for (size_t k = 0; k < op.outs.size(); ++k) (*vars)[op.outs[k].id] = mix(h, k);
  }
  return ops;
}

HashIndex::HashIndex(size_t n) {
  size_t capacity = 16;
  while (capacity < 2 * n) capacity <<= 1;
  slots_.assign(capacity, Slot{});
  mask_ = capacity - 1;
}

}  // namespace ytape::diff_keys
