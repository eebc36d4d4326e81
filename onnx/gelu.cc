// The matcher walks from each product back through the ops that made its operands: a
// fixed number of steps per op, so the pass is linear in the tape.
#include "onnx/gelu.h"

#include <optional>

#include "onnx/recognize.h"

namespace ytape::onnx_import {

namespace {

constexpr double kHalf = 0.5, kOne = 1, kBeta = 0.7978845608028654, kKappa = 0.044715;

class GeluMatcher {
 public:
  explicit GeluMatcher(const Tape& t) : t_(t), defs_(t) {}

  // x, if `root` (a product) is gelu(x) written out in one of the recognized forms.
  std::optional<Var> match(const Op& root) const {
    // 0.5 * (x * (1 + tanh(...))): the half and the product in either order.
    for (int i = 0; i < 2; ++i) {
      const Op* p = call(root.args[1 - i], Prim::mul);
      if (!is_const(root.args[i], kHalf) || p == nullptr) continue;
      for (int j = 0; j < 2; ++j) {
        if (tail(p->args[1 - j], p->args[j])) return checked(root, p->args[j]);
      }
    }
    // (0.5 * x) * (1 + tanh(...)).
    for (int i = 0; i < 2; ++i) {
      const Op* h = call(root.args[i], Prim::mul);
      if (h == nullptr) continue;
      for (int j = 0; j < 2; ++j) {
        if (is_const(h->args[j], kHalf) && tail(root.args[1 - i], h->args[1 - j])) {
          return checked(root, h->args[1 - j]);
        }
      }
    }
    return std::nullopt;
  }

 private:
  const Op* call(Var v, Prim p) const { return defs_.call(v, p); }

  // Whether `v` is a constant of one element equal to `value` rounded to its dtype.
  bool is_const(Var v, double value) const {
    std::optional<double> c = defs_.scalar(v);
    if (!c) return false;
    return t_.type(v).dtype == DType::f32 ? *c == static_cast<float>(value) : *c == value;
  }

  // Binary op `op` with `a` as one operand: the other, if `a` is one.
  static std::optional<Var> other(const Op* op, Var a) {
    if (op == nullptr) return std::nullopt;
    if (op->args[0] == a) return op->args[1];
    if (op->args[1] == a) return op->args[0];
    return std::nullopt;
  }

  // The operand of binary `op` besides the constant `value`, if it has one.
  std::optional<Var> beside_const(const Op* op, double value) const {
    if (op == nullptr) return std::nullopt;
    for (int i = 0; i < 2; ++i) {
      if (is_const(op->args[i], value)) return op->args[1 - i];
    }
    return std::nullopt;
  }

  // Whether `s` is 1 + tanh(k * (x + c * x^3)).
  bool tail(Var s, Var x) const {
    std::optional<Var> t = beside_const(call(s, Prim::add), kOne);
    const Op* th = t ? call(*t, Prim::tanh) : nullptr;
    std::optional<Var> sum = th ? beside_const(call(th->args[0], Prim::mul), kBeta) : std::nullopt;
    std::optional<Var> term = sum ? other(call(*sum, Prim::add), x) : std::nullopt;
    std::optional<Var> cube = term ? beside_const(call(*term, Prim::mul), kKappa) : std::nullopt;
    std::optional<Var> square = cube ? other(call(*cube, Prim::mul), x) : std::nullopt;
    const Op* sq = square ? call(*square, Prim::mul) : nullptr;
    return sq != nullptr && sq->args[0] == x && sq->args[1] == x;
  }

  // x, if gelu(x) has the type of the product it replaces.
  std::optional<Var> checked(const Op& root, Var x) const {
    const Type& type = t_.type(x);
    bool floating = type.dtype == DType::f32 || type.dtype == DType::f64;
    if (!floating || t_.type(root.outs[0]) != type) return std::nullopt;
    return x;
  }

  const Tape& t_;
  Defs defs_;
};

}  // namespace

std::optional<Tape> recognize_gelu(const Tape& t) {
  GeluMatcher matcher(t);
  return replace_matches(
      t, Prim::mul, [&](const Op& op) { return matcher.match(op); },
      [](Builder& b, Var x, const VarMap& map) { return b.call1(Prim::gelu, {map[x]}); });
}

}  // namespace ytape::onnx_import
