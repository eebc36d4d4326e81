#include "opt/simplify.h"

#include <cstring>
#include <optional>
#include <span>
#include <vector>

#include "opt/splat.h"
#include "tape/builder.h"

namespace ytape {

namespace {

// What the rules know of a tape, old or being built: the op defining each var, and
// whether a var is a splat, remembered so that a large constant is scanned once.
class Facts {
 public:
  // `vars` is how many vars the tape will have, about: room is made for them.
  Facts(const Tape& t, size_t vars) : t_(t) {
    def_.reserve(vars);
    splat_.reserve(vars);
    sync();
  }

  // Takes in the ops appended to the tape since the last call.
  void sync() {
    for (; seen_ < t_.ops.size(); ++seen_) {
      for (Var o : t_.ops[seen_].outs) {
        if (def_.size() <= o.id) def_.resize(o.id + 1);
        def_[o.id] = static_cast<uint32_t>(seen_);
      }
    }
    splat_.resize(def_.size());
  }

  const Type& type(Var v) const { return t_.type(v); }
  const Op& def(Var v) const { return t_.ops[def_[v.id]]; }
  // The op defining `v` when it is a call of `p`, else null.
  const Op* def_call(Var v, Prim p) const {
    const Op& op = def(v);
    return op.kind == OpKind::call && op.prim == p ? &op : nullptr;
  }

  // The value of every element of `v` when it is a splat (see splat_value).
  std::optional<double> splat(Var v) const {
    const Op& op = def(v);
    if (op.kind == OpKind::call && op.prim == Prim::fill)
      return attrs_of<Prim::fill>(op.attrs).value;
    if (op.kind != OpKind::constant) return std::nullopt;
    Splat& s = splat_[v.id];
    if (!s.known) s = {true, splat_value(op.value, type(v).dtype)};
    return s.value;
  }
  bool is(Var v, double value) const {
    std::optional<double> s = splat(v);
    return s && *s == value;
  }

 private:
  struct Splat {
    bool known = false;
    std::optional<double> value;
  };

  const Tape& t_;
  size_t seen_ = 0;
  std::vector<uint32_t> def_;         // var id -> index of its op
  mutable std::vector<Splat> splat_;  // var id -> its splat value, once asked
};

// What becomes of an op: nothing, an existing var, or another op.
struct Rewrite {
  enum Kind { none, var, op } kind = none;
  Var to;
  Prim prim{};
  std::vector<Var> args;
  Attrs attrs;

  static Rewrite to_var(Var v) { return {var, v, {}, {}, {}}; }
  template <Prim P>
  static Rewrite to_op(std::vector<Var> args, const AttrsOf<P>& attrs) {
    return {op, {}, P, std::move(args), attrs.to_attrs()};
  }
};

// x reshaped to `shape`, or x itself when it has that shape.
Rewrite reshaped(const Facts& f, Var x, const Shape& shape) {
  if (f.type(x).shape == shape) return Rewrite::to_var(x);
  return Rewrite::to_op<Prim::reshape>({x}, {.shape = shape});
}

// x as a value of type `z`, which x broadcasts to (an elementwise op's result type).
Rewrite same_as(const Facts& f, Var x, const Type& z) {
  const Type& tx = f.type(x);
  if (tx.dtype != z.dtype) return {};
  if (tx.size() == z.size()) return reshaped(f, x, z.shape);
  return Rewrite::to_op<Prim::broadcast_to>({x}, {.shape = z.shape});
}

Rewrite fill_like(double value, const Type& z) {
  return Rewrite::to_op<Prim::fill>({}, {.value = value, .dtype = z.dtype, .shape = z.shape});
}

// x + 0, 0 + x, x - 0: x (the sign of -0.0 + 0.0 aside, see simplify.h).
Rewrite additive(const Facts& f, const Op& op, std::span<const Var> a, const Type& z) {
  if (f.is(a[1], 0)) return same_as(f, a[0], z);
  if (op.prim == Prim::add && f.is(a[0], 0)) return same_as(f, a[1], z);
  return {};
}

// x * 1, 1 * x, x / 1: x; x * 0, 0 * x: 0 for integers only.
Rewrite multiplicative(const Facts& f, const Op& op, std::span<const Var> a, const Type& z) {
  if (f.is(a[1], 1)) return same_as(f, a[0], z);
  if (op.prim == Prim::div) return {};
  if (f.is(a[0], 1)) return same_as(f, a[1], z);
  if (z.dtype == DType::i64 && (f.is(a[0], 0) || f.is(a[1], 0))) return fill_like(0, z);
  return {};
}

// neg(neg(x)): x
Rewrite negation(const Facts& f, std::span<const Var> a) {
  if (const Op* inner = f.def_call(a[0], Prim::neg)) return Rewrite::to_var(inner->args[0]);
  return {};
}

// stop_gradient(stop_gradient(x)): the inner one (`dropgrad` of a non-differentiable
// function's result); of a splat, the fill, which has no gradient anyway.
Rewrite stop_gradient_rule(const Facts& f, std::span<const Var> a, const Type& z) {
  if (f.def_call(a[0], Prim::stop_gradient)) return Rewrite::to_var(a[0]);
  if (std::optional<double> v = f.splat(a[0])) return fill_like(*v, z);
  return {};
}

// Ops that only move or repeat elements: of a splat, a fill of the new shape.
Rewrite of_splat(const Facts& f, Var x, const Type& z) {
  if (std::optional<double> v = f.splat(x)) return fill_like(*v, z);
  return {};
}

Rewrite reshape_rule(const Facts& f, std::span<const Var> a, const Type& z) {
  if (f.type(a[0]).shape == z.shape) return Rewrite::to_var(a[0]);
  if (const Op* inner = f.def_call(a[0], Prim::reshape))
    return reshaped(f, inner->args[0], z.shape);
  return of_splat(f, a[0], z);
}

bool is_identity(const std::vector<int64_t>& perm) {
  for (size_t i = 0; i < perm.size(); ++i) {
    if (perm[i] != static_cast<int64_t>(i) + 1) return false;
  }
  return true;
}

// permutedims(permutedims(x, p), q) = permutedims(x, r) with r[i] = p[q[i]]; one that only
// moves dims of size 1 is a reshape (as vmap's batch moved past a dim of 1).
Rewrite permutedims_rule(const Facts& f, const Op& op, std::span<const Var> a, const Type& z) {
  const std::vector<int64_t> q = attrs_of<Prim::permutedims>(op.attrs).perm;
  if (is_identity(q)) return Rewrite::to_var(a[0]);
  if (moves_only_ones(q, f.type(a[0]).shape)) return reshaped(f, a[0], z.shape);
  if (const Op* inner = f.def_call(a[0], Prim::permutedims)) {
    const std::vector<int64_t> p = attrs_of<Prim::permutedims>(inner->attrs).perm;
    std::vector<int64_t> r(q.size());
    for (size_t i = 0; i < q.size(); ++i) r[i] = p[q[i] - 1];
    if (is_identity(r)) return Rewrite::to_var(inner->args[0]);
    return Rewrite::to_op<Prim::permutedims>({inner->args[0]}, {.perm = std::move(r)});
  }
  return of_splat(f, a[0], z);
}

// Whether two shapes differ only in trailing dims of size 1 ([3] and [3,1,1]).
bool same_but_trailing_ones(const Shape& a, const Shape& b) {
  const Shape& shorter = a.size() <= b.size() ? a : b;
  const Shape& longer = a.size() <= b.size() ? b : a;
  for (size_t d = 0; d < longer.size(); ++d) {
    if (longer[d] != (d < shorter.size() ? shorter[d] : 1)) return false;
  }
  return true;
}

// broadcast_to of x itself when x's shape broadcasts to z's as the argument's does: for
// an argument that broadcasts x already, or reshapes it only in trailing dims of size 1
// (a cotangent's reshape before it is broadcast back).
Rewrite broadcast_to_rule(const Facts& f, std::span<const Var> a, const Type& z) {
  if (f.type(a[0]).size() == z.size()) return reshaped(f, a[0], z.shape);
  if (const Op* inner = f.def_call(a[0], Prim::broadcast_to)) {
    return same_as(f, inner->args[0], z);
  }
  if (const Op* inner = f.def_call(a[0], Prim::reshape)) {
    const Shape& x = f.type(inner->args[0]).shape;
    if (x.size() <= z.shape.size() && same_but_trailing_ones(x, f.type(a[0]).shape)) {
      return same_as(f, inner->args[0], z);
    }
  }
  return of_splat(f, a[0], z);
}

// A reduction over no dims is the identity; over dims of size 1 a reshape.
Rewrite reduction(const Facts& f, const Op& op, std::span<const Var> a, const Type& z) {
  const std::vector<int64_t> dims = reduce_dims(op.prim, op.attrs);
  if (dims.empty()) return Rewrite::to_var(a[0]);
  const Shape& shape = f.type(a[0]).shape;
  for (int64_t d : dims) {
    if (shape[d - 1] != 1) return {};
  }
  return reshaped(f, a[0], z.shape);
}

// select(c, x, y) with c a splat: x or y; select(c, x, x): x.
Rewrite select_rule(const Facts& f, std::span<const Var> a, const Type& z) {
  if (a[1] == a[2]) return same_as(f, a[1], z);
  std::optional<double> c = f.splat(a[0]);
  if (!c) return {};
  return same_as(f, *c != 0 ? a[1] : a[2], z);
}

// Whether constant `idx` varies along `dim` only and is a permutation of 1..size there that
// is its own inverse (a reverse, or swaps).
bool self_inverse_along(const Facts& f, Var idx, int64_t dim, int64_t size) {
  const Op& op = f.def(idx);
  const Type& t = f.type(idx);
  if (op.kind != OpKind::constant || t.dtype != DType::i64) return false;
  for (int64_t d = 1; d <= t.rank(); ++d) {
    if (t.shape[d - 1] != (d == dim ? size : 1)) return false;
  }
  std::vector<int64_t> v(static_cast<size_t>(size));
  std::memcpy(v.data(), op.value.data(), v.size() * sizeof(int64_t));
  for (size_t j = 0; j < v.size(); ++j) {
    if (v[j] < 1 || v[j] > size || v[static_cast<size_t>(v[j] - 1)] != static_cast<int64_t>(j) + 1)
      return false;
  }
  return true;
}

// scatter_add(y, idx) with idx a permutation along dim that is its own inverse: the same
// gather. Each element lands on a place of its own, so nothing is added (but to the zero
// the output starts from); the gather reads in parallel what the scatter zero-fills and
// accumulates. The gradient of Flux's Conv, which reverses its kernel, scatters so.
Rewrite scatter_add_rule(const Facts& f, const Op& op, std::span<const Var> a) {
  auto attrs = attrs_of<Prim::scatter_add>(op.attrs);
  if (!self_inverse_along(f, a[1], attrs.dim, attrs.size)) return {};
  return Rewrite::to_op<Prim::gather>({a[0], a[1]}, {.dim = attrs.dim});
}

// The rewrite of a call `op` whose arguments are `a` on the tape of `f`; `z` is the type
// of its (first) output.
Rewrite rewrite(const Facts& f, const Op& op, std::span<const Var> a, const Type& z) {
  switch (op.prim) {
    case Prim::add:
    case Prim::sub:
      return additive(f, op, a, z);
    case Prim::mul:
    case Prim::div:
      return multiplicative(f, op, a, z);
    case Prim::neg:
      return negation(f, a);
    case Prim::convert:
      return f.type(a[0]).dtype == z.dtype ? Rewrite::to_var(a[0]) : Rewrite{};
    case Prim::reshape:
      return reshape_rule(f, a, z);
    case Prim::stop_gradient:
      return stop_gradient_rule(f, a, z);
    case Prim::permutedims:
      return permutedims_rule(f, op, a, z);
    case Prim::broadcast_to:
      return broadcast_to_rule(f, a, z);
    case Prim::sum:
    case Prim::maximum:
    case Prim::minimum:
      return reduction(f, op, a, z);
    case Prim::select:
      return select_rule(f, a, z);
    case Prim::scatter_add:
      return scatter_add_rule(f, op, a);
    default:
      return {};
  }
}

// Whether any op of `t` would be rewritten, without building anything.
bool any_rewrite(const Tape& t) {
  Facts f(t, t.types.size());
  for (const Op& op : t.ops) {
    if (op.kind != OpKind::call || op.outs.size() != 1) continue;
    if (rewrite(f, op, op.args, t.type(op.outs[0])).kind != Rewrite::none) return true;
  }
  return false;
}

}  // namespace

PassResult simplify(const Tape& t) {
  if (!any_rewrite(t)) return {};
  Builder b = Builder::like(t);
  b.reserve(t.ops.size(), t.types.size());
  VarMap map(t);
  Facts f(b.tape(), t.types.size());
  size_t changed = 0;
  std::vector<Var> args;
  for (const Op& op : t.ops) {
    Rewrite r;
    if (op.kind == OpKind::call && op.outs.size() == 1) {
      args.clear();
      for (Var a : op.args) args.push_back(map[a]);
      r = rewrite(f, op, args, t.type(op.outs[0]));
    }
    switch (r.kind) {
      case Rewrite::none:
        copy_op(b, t, op, map);
        break;
      case Rewrite::var:
        map.set(op.outs[0], r.to);
        break;
      case Rewrite::op:
        b.set_loc(op.loc);
        map.set(op.outs[0], b.call1(r.prim, std::move(r.args), r.attrs));
        break;
    }
    if (r.kind != Rewrite::none) ++changed;
    f.sync();
  }
  for (const Output& o : t.outputs) b.output(map[o.var], o.name);
  return {b.finish(), changed};
}

}  // namespace ytape
