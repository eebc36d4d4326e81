// The matcher walks back from each product a fixed number of steps, so the pass is
// linear in the tape.
#include "onnx/attention.h"

#include <cmath>
#include <numeric>
#include <vector>

#include "onnx/recognize.h"
#include "tape/op_attrs.h"

namespace ytape::onnx_import {

namespace {

// What a match found, as vars of the input tape.
struct Match {
  Var q, k, v, mask;
  bool q_stored_transposed = false, k_stored_transposed = false, v_stored_transposed = false;
  bool mask_hides = false, no_mask = false;
  std::optional<std::pair<Prim, Var>> scale;  // div or mul of the scores by a constant
};

class AttentionMatcher {
 public:
  explicit AttentionMatcher(const Tape& t) : t_(t), defs_(t), reads_(t.types.size(), 0) {
    for (const Op& op : t.ops) {
      for (Var a : op.args) ++reads_[a.id];
    }
    for (const Output& o : t.outputs) ++reads_[o.var.id];
  }

  // The match, if `root` (a matmul) is v · softmax(scores) in a recognized form.
  std::optional<Match> match(const Op& root) const {
    const auto mm = attrs_of<Prim::matmul>(root.attrs);
    if (mm.transpose_b) return std::nullopt;
    const Op* softmax = call(root.args[1], Prim::softmax);
    if (softmax == nullptr || reads_[root.args[1].id] != 1) return std::nullopt;
    if (attrs_of<Prim::softmax>(softmax->attrs).dims != std::vector<int64_t>{1})
      return std::nullopt;
    Match m;
    m.v = root.args[0];
    m.v_stored_transposed = mm.transpose_a;
    Var s = softmax->args[0];
    if (const Op* sel = call(s, Prim::select)) {
      if (is_minus_inf(sel->args[2])) {
        s = sel->args[1];
      } else if (is_minus_inf(sel->args[1])) {
        s = sel->args[2];
        m.mask_hides = true;
      } else {
        return std::nullopt;
      }
      m.mask = sel->args[0];
    } else {
      m.no_mask = true;
    }
    return scores(s, m) ? checked(root, m) : std::nullopt;
  }

 private:
  const Op* call(Var v, Prim p) const { return defs_.call(v, p); }

  bool is_minus_inf(Var v) const {
    std::optional<double> c = defs_.scalar(v);
    return c && std::isinf(*c) && *c < 0;
  }

  // Whether `s` is a matmul of k and q, optionally scaled by a one-element constant.
  bool scores(Var s, Match& m) const {
    for (Prim p : {Prim::div, Prim::mul}) {
      const Op* op = call(s, p);
      if (op == nullptr) continue;
      for (int i = p == Prim::div ? 1 : 0; i < 2; ++i) {
        if (defs_.scalar(op->args[i]) && call(op->args[1 - i], Prim::matmul)) {
          m.scale = {p, op->args[i]};
          s = op->args[1 - i];
          break;
        }
      }
      if (!m.scale) return false;
    }
    const Op* product = call(s, Prim::matmul);
    if (product == nullptr) return false;
    const auto mm = attrs_of<Prim::matmul>(product->attrs);
    m.k = product->args[0];
    m.k_stored_transposed = !mm.transpose_a;  // kᵀ (Tk, d) is the product's left side
    m.q = product->args[1];
    m.q_stored_transposed = mm.transpose_b;
    return true;
  }

  // The match, if the types fit the primitive: q and k float, the mask (Tk, Tq).
  std::optional<Match> checked(const Op& root, const Match& m) const {
    const Type& out = t_.type(root.outs[0]);
    if (out.dtype != DType::f32 && out.dtype != DType::f64) return std::nullopt;
    const Type& p = t_.type(root.args[1]);
    if (p.rank() < 2 || p.shape[0] == 0) return std::nullopt;
    if (!m.no_mask && t_.type(m.mask) != Type{DType::boolean, {p.shape[0], p.shape[1]}})
      return std::nullopt;
    if (m.scale && t_.type(m.scale->second).dtype != out.dtype) return std::nullopt;
    return m;
  }

  const Tape& t_;
  Defs defs_;
  std::vector<int> reads_;  // by var id: its readers, tape outputs included
};

// `x` (rank >= 2) with its first two dims swapped where `swap`.
Var in_layout(Builder& b, Var x, bool swap) {
  if (!swap) return x;
  std::vector<int64_t> perm(static_cast<size_t>(b.type(x).rank()));
  std::iota(perm.begin(), perm.end(), 1);
  std::swap(perm[0], perm[1]);
  return b.permutedims(x, {.perm = perm});
}

Var fused(Builder& b, const Match& m, const VarMap& map) {
  Var q = in_layout(b, map[m.q], m.q_stored_transposed);
  if (m.scale) q = b.call1(m.scale->first, {q, map[m.scale->second]});
  Var k = in_layout(b, map[m.k], m.k_stored_transposed);
  Var v = in_layout(b, map[m.v], m.v_stored_transposed);
  const Shape& qs = b.type(q).shape;
  const Shape& ks = b.type(k).shape;
  Var mask;
  if (m.no_mask) {
    mask = b.fill({.value = 1, .dtype = DType::boolean, .shape = {ks[1], qs[1]}});
  } else if (m.mask_hides) {
    mask = b.eq(map[m.mask], b.constant(DType::boolean, 0));
  } else {
    mask = map[m.mask];
  }
  return b.attention(q, k, v, mask)[0];
}

}  // namespace

std::optional<Tape> recognize_attention(const Tape& t) {
  AttentionMatcher matcher(t);
  return replace_matches(
      t, Prim::matmul, [&](const Op& op) { return matcher.match(op); }, fused);
}

}  // namespace ytape::onnx_import
