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

}  // namespace

void register_linalg_infer(InferTable& t) {
  t.set(Prim::matmul, matmul);
}

}  // namespace ytape
