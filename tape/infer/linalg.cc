// Inference rule of the linalg family: batched matmul. The first two dims are the matrix,
// the rest are batch dims that must match exactly (no broadcasting).
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

std::vector<Type> matmul(Prim, std::span<const Type> a, const Attrs& attrs) {
  require_same_dtype(a);
  require_float(a[0], "the arguments");
  for (int i = 0; i < 2; ++i) {
    if (a[i].rank() < 2) {
      user_error("{} must be a matrix or a batch of matrices (rank >= 2), got {}",
                 i == 0 ? "a" : "b", type_str(a[i]));
    }
  }
  const auto at = attrs_of<Prim::matmul>(attrs);
  bool ta = at.transpose_a;
  bool tb = at.transpose_b;
  int64_t m = a[0].shape[ta ? 1 : 0], k = a[0].shape[ta ? 0 : 1];
  int64_t kb = a[1].shape[tb ? 1 : 0], n = a[1].shape[tb ? 0 : 1];
  if (k != kb) {
    user_error("a {} gives A {}x{} and b {} gives B {}x{}; their inner dims differ ({} vs {})",
               type_str(a[0]), m, k, type_str(a[1]), kb, n, k, kb);
  }
  Shape batch_a(a[0].shape.begin() + 2, a[0].shape.end());
  Shape batch_b(a[1].shape.begin() + 2, a[1].shape.end());
  if (batch_a != batch_b) {
    user_error("batch dims of a {} and b {} differ ({} vs {})", type_str(a[0]), type_str(a[1]),
               shape_str(batch_a), shape_str(batch_b));
  }
  Shape out{m, n};
  out.insert(out.end(), batch_a.begin(), batch_a.end());
  return one(a[0].dtype, out);
}

// The slices' dims (batch...) of an attention argument: its dims after the first two.
Shape slices_of(const Type& t) {
  return Shape(t.shape.begin() + 2, t.shape.end());
}

// attention(q, k, v, mask) -> (out, lse): q (d, tq, batch...), k (d, tk, batch...),
// v (dv, tk, batch...), mask bool (tk, tq); out (dv, tq, batch...), lse (tq, batch...).
std::vector<Type> attention(Prim, std::span<const Type> a, const Attrs&) {
  require_same_dtype(a.first(3));
  require_float(a[0], "q, k and v");
  const char* names[] = {"q", "k", "v"};
  for (int i = 0; i < 3; ++i) {
    if (a[i].rank() < 2) {
      user_error("{} must have a feature dim and a length dim (rank >= 2), got {}", names[i],
                 type_str(a[i]));
    }
  }
  const Type &q = a[0], &k = a[1], &v = a[2], &mask = a[3];
  if (k.shape[0] != q.shape[0]) {
    user_error("q {} and k {} must have the same feature dim", type_str(q), type_str(k));
  }
  if (v.shape[1] != k.shape[1]) {
    user_error("k {} and v {} must have the same length", type_str(k), type_str(v));
  }
  if (slices_of(k) != slices_of(q) || slices_of(v) != slices_of(q)) {
    user_error("the dims after the first two of q {}, k {} and v {} must match", type_str(q),
               type_str(k), type_str(v));
  }
  if (q.shape[0] == 0 || v.shape[0] == 0 || k.shape[1] == 0) {
    user_error("q {}, k {} and v {} must have a feature and a key at least", type_str(q),
               type_str(k), type_str(v));
  }
  Shape keys_by_queries{k.shape[1], q.shape[1]};
  if (mask.dtype != DType::boolean || mask.shape != keys_by_queries) {
    user_error("mask must be bool{} (keys by queries), got {}", shape_str(keys_by_queries),
               type_str(mask));
  }
  Shape out{v.shape[0], q.shape[1]}, lse{q.shape[1]};
  for (int64_t s : slices_of(q)) {
    out.push_back(s);
    lse.push_back(s);
  }
  return {Type{q.dtype, out}, Type{q.dtype, lse}};
}

// attention_backward(q, k, v, mask, out, lse, dout) -> (dq, dk, dv).
std::vector<Type> attention_backward(Prim p, std::span<const Type> a, const Attrs& attrs) {
  std::vector<Type> forward = attention(p, a.first(4), attrs);
  const char* names[] = {"out", "lse", "dout"};
  for (int i = 0; i < 3; ++i) {
    const Type& want = forward[i == 1 ? 1 : 0];
    if (a[4 + i] != want) {
      user_error("{} must be {} as attention gives it, got {}", names[i], type_str(want),
                 type_str(a[4 + i]));
    }
  }
  return {a[0], a[1], a[2]};
}

}  // namespace

void register_linalg_infer(InferTable& t) {
  t.set(Prim::matmul, matmul);
  t.set(Prim::attention, attention);
  t.set(Prim::attention_backward, attention_backward);
}

}  // namespace ytape
