// Inference rules of the index family: gather and its transpose scatter_add. Index tensors
// are i64 of the data's rank and broadcast (size 1) along every dim but `dim`.
#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

// Checks idx against `data` (gather's x, scatter_add's y): i64, one rank, and at each dim
// but `dim` of size 1 or data's size.
void require_index(const Type& data, const Type& idx, int64_t dim) {
  if (idx.dtype != DType::i64) user_error("idx must be i64, got {}", type_str(idx));
  if (idx.rank() != data.rank()) {
    user_error("idx {} must have the rank of {}", type_str(idx), type_str(data));
  }
  require_dim(dim, data.rank(), "dim");
  for (int i = 0; i < data.rank(); ++i) {
    if (i != dim - 1 && idx.shape[i] != 1 && idx.shape[i] != data.shape[i]) {
      user_error("idx {} does not fit {} at dim {} ({} is neither 1 nor {})", type_str(idx),
                 type_str(data), i + 1, idx.shape[i], data.shape[i]);
    }
  }
}

// out has x's shape except at `dim`, where it has idx's size.
std::vector<Type> gather(Prim, std::span<const Type> a, const Attrs& attrs) {
  int64_t dim = attrs_of<Prim::gather>(attrs).dim;
  require_index(a[0], a[1], dim);
  Shape out = a[0].shape;
  out[dim - 1] = a[1].shape[dim - 1];
  return one(a[0].dtype, out);
}

// out has y's shape except at `dim`, where it has `size`.
std::vector<Type> scatter_add(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Type& y = a[0];
  const Type& idx = a[1];
  const auto at = attrs_of<Prim::scatter_add>(attrs);
  const int64_t dim = at.dim;
  require_numeric(y, "y");
  require_index(y, idx, dim);
  if (idx.shape[dim - 1] != y.shape[dim - 1]) {
    user_error("idx {} and y {} differ at dim={} ({} vs {})", type_str(idx), type_str(y), dim,
               idx.shape[dim - 1], y.shape[dim - 1]);
  }
  Shape out = y.shape;
  out[dim - 1] = at.size;
  require_sane(out, "size");
  return one(y.dtype, out);
}

}  // namespace

void register_index_infer(InferTable& t) {
  t.set(Prim::gather, gather);
  t.set(Prim::scatter_add, scatter_add);
}

}  // namespace ytape
