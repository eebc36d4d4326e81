#include "grad/backprop.h"

#include <string>

#include "tape/error.h"

namespace ytape::grad {

namespace {
constexpr uint32_t kNone = ~uint32_t{0};
}  // namespace

Backprop::Backprop(Builder& b, const Tape& src)
    : b_(b),
      src_(src),
      rules_(rules()),
      map_(src),
      active_(src.types.size(), false),
      cot_(src.types.size(), kNone) {}

void Backprop::bind_input(Var v, Var now, bool active) {
  map_.set(v, now);
  active_[v.id] = active && is_float(src_.type(v).dtype);
}

void Backprop::forward() {
  for (size_t i = 0; i < src_.ops.size(); ++i) {
    const Op& op = src_.ops[i];
    b_.set_loc(fixed_loc_ ? *fixed_loc_ : op.loc);
    switch (op.kind) {
      case OpKind::input:
        if (!map_.has(op.outs[0])) internal_error("input '{}' was not bound", op.name);
        break;
      case OpKind::constant:
        map_.set(op.outs[0], b_.constant(src_.type(op.outs[0]), op.value));
        break;
      case OpKind::call:
        copy_call(i, op);
        break;
    }
  }
}

void Backprop::copy_call(size_t index, const Op& op) {
  bool active = false;
  for (Var a : op.args) active = active || active_[a.id];
  if (active) refuse_comm(src_, op);
  active = active && prim_info(op.prim).differentiable();
  if (active && (op.prim == Prim::scan || op.prim == Prim::while_loop)) {
    VarList args = map_.map(op.args);
    VarList outs = op.prim == Prim::while_loop ? while_keeping_steps(b_, op, args, remat_)
                   : remat_                    ? scan_keeping_carries(b_, op, args)
                                               : scan_keeping_residuals(b_, op, args);
    for (size_t k = 0; k < op.outs.size(); ++k) {
      map_.set(op.outs[k], outs[k]);
      active_[op.outs[k].id] = is_float(src_.type(op.outs[k]).dtype);
    }
    variants_.emplace(index, std::move(outs));
    return;
  }
  std::optional<Prim> variant = active ? variant_of(op.prim) : std::nullopt;
  const Op& copy = b_.record(variant ? *variant : op.prim, map_.map(op.args), op.attrs, op.regions);
  for (size_t k = 0; k < op.outs.size(); ++k) {
    map_.set(op.outs[k], copy.outs[k]);
    active_[op.outs[k].id] = active && is_float(src_.type(op.outs[k]).dtype);
  }
  if (variant) variants_.emplace(index, copy.outs);
}

void Backprop::seed(Var v, Var cot) {
  if (active_[v.id]) accumulate(v, cot);
}

void Backprop::backward() {
  for (size_t i = src_.ops.size(); i-- > 0;) {
    // Only active vars ever get cotangents, so inactive ops return at once.
    if (src_.ops[i].kind == OpKind::call) differentiate(i, src_.ops[i]);
  }
}

void Backprop::differentiate(size_t index, const Op& op) {
  // Most ops are inactive or have no cotangent: decide before building anything.
  bool any = false;
  for (Var o : op.outs) any = any || cot_[o.id] != kNone;
  if (!any) return;
  auto variant = variants_.find(index);
  y_.clear();
  if (variant != variants_.end()) {
    y_.assign(variant->second.begin(), variant->second.end());
  } else {
    for (Var o : op.outs) y_.push_back(map_[o]);
  }
  dy_.assign(y_.size(), std::nullopt);
  for (size_t k = 0; k < op.outs.size(); ++k) {
    if (cot_[op.outs[k].id] != kNone) dy_[k] = Var{cot_[op.outs[k].id]};
  }
  x_.clear();
  need_.clear();
  for (Var a : op.args) {
    x_.push_back(map_[a]);
    need_.push_back(active_[a.id]);
  }
  std::optional<Prim> variant_prim = variant_of(op.prim);
  Prim rule_prim = variant != variants_.end() && variant_prim ? *variant_prim : op.prim;
  VjpRule rule = rules_.rule(rule_prim);
  if (rule == nullptr) internal_error("no gradient rule for '{}'", prim_name(rule_prim));
  b_.set_loc(fixed_loc_ ? *fixed_loc_ : op.loc);
  std::vector<Cotangent> dx = rule(b_, RuleArgs{op, x_, y_, dy_, need_, remat_});
  ++rules_applied_;
  for (size_t k = 0; k < op.args.size() && k < dx.size(); ++k) {
    if (need_[k] && dx[k])
      accumulate(op.args[k], unbroadcast(b_, *dx[k], src_.type(op.args[k]), op));
  }
}

void Backprop::accumulate(Var arg, Var cot) {
  uint32_t& slot = cot_[arg.id];
  slot = slot == kNone ? cot.id : b_.add(Var{slot}, cot).id;
}

Var unbroadcast(Builder& b, Var cot, const Type& to, const Op& op) {
  const Type from = b.type(cot);  // a copy: the builder grows below
  auto mismatch = [&] {
    internal_error("the gradient rule of '{}' gave {} for an argument of type {}",
                   prim_name(op.prim), type_str(from), type_str(to));
  };
  if (from.dtype != to.dtype) mismatch();
  if (from.shape == to.shape) return cot;
  std::vector<int64_t> dims;
  for (int d = 1; d <= from.rank(); ++d) {
    int64_t n = from.shape[d - 1];
    int64_t m = d <= to.rank() ? to.shape[d - 1] : 1;
    if (n == m) continue;
    if (m != 1) mismatch();
    dims.push_back(d);
  }
  Var summed = dims.empty() ? cot : b.sum(cot, {.dims = std::move(dims)});
  return b.type(summed).shape == to.shape ? summed : b.reshape(summed, {.shape = to.shape});
}

Cotangent Backprop::cotangent(Var v) const {
  if (cot_[v.id] == kNone) return std::nullopt;
  return Var{cot_[v.id]};
}

}  // namespace ytape::grad
