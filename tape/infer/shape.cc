// Inference rules of the shape family: reshape, permutedims, broadcast_to, slice, concat
// and pad. They move elements around without arithmetic, so any dtype is fine.
#include <algorithm>

#include "tape/infer.h"
#include "tape/infer/common.h"

namespace ytape {

namespace {

using namespace shapes;

std::vector<Type> reshape(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Shape shape = attrs_of<Prim::reshape>(attrs).shape;
  require_sane(shape, "shape");
  if (num_elements(shape) != a[0].size()) {
    user_error("shape={} has {} elements, but {} has {}", shape_str(shape), num_elements(shape),
               type_str(a[0]), a[0].size());
  }
  return one(a[0].dtype, shape);
}

bool is_permutation(const std::vector<int64_t>& perm, int rank) {
  if (perm.size() != static_cast<size_t>(rank)) return false;
  std::vector<bool> seen(rank, false);
  for (int64_t d : perm) {
    if (d < 1 || d > rank || seen[d - 1]) return false;
    seen[d - 1] = true;
  }
  return true;
}

std::vector<Type> permutedims(Prim, std::span<const Type> a, const Attrs& attrs) {
  const std::vector<int64_t> perm = attrs_of<Prim::permutedims>(attrs).perm;
  if (!is_permutation(perm, a[0].rank())) {
    user_error("perm={} is not a permutation of 1..{}", shape_str(perm), a[0].rank());
  }
  Shape out;
  for (int64_t d : perm) out.push_back(a[0].shape[d - 1]);
  return one(a[0].dtype, out);
}

std::vector<Type> broadcast_to(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Shape shape = attrs_of<Prim::broadcast_to>(attrs).shape;
  require_sane(shape, "shape");
  const Type& x = a[0];
  if (x.shape.size() > shape.size()) {
    user_error("shape={} has rank {}, less than the rank {} of {}", shape_str(shape), shape.size(),
               x.rank(), type_str(x));
  }
  for (size_t i = 0; i < x.shape.size(); ++i) {
    if (x.shape[i] != 1 && x.shape[i] != shape[i]) {
      user_error("{} does not broadcast to shape={} (dim {}: {} vs {})", type_str(x),
                 shape_str(shape), i + 1, x.shape[i], shape[i]);
    }
  }
  return one(x.dtype, shape);
}

// Julia's x[start:step:stop, ...]; an empty range is written stop = start - 1.
std::vector<Type> slice(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Type& x = a[0];
  const auto [start, stop, step] = attrs_of<Prim::slice>(attrs);
  require_length(start, x.rank(), "start");
  require_length(stop, x.rank(), "stop");
  require_length(step, x.rank(), "step");
  require_each_at_least(start, 1, "start");
  require_each_at_least(step, 1, "step");
  Shape out(x.rank());
  for (int i = 0; i < x.rank(); ++i) {
    if (stop[i] > x.shape[i]) {
      user_error("stop={} exceeds {} at dim {} ({} > {})", shape_str(stop), type_str(x), i + 1,
                 stop[i], x.shape[i]);
    }
    if (stop[i] < start[i] - 1) {
      user_error(
          "start={} and stop={} give a negative length at dim {} (write an empty range "
          "as stop = start - 1)",
          shape_str(start), shape_str(stop), i + 1);
    }
    out[i] = stop[i] < start[i] ? 0 : (stop[i] - start[i]) / step[i] + 1;
  }
  return one(x.dtype, out);
}

std::vector<Type> concat(Prim, std::span<const Type> a, const Attrs& attrs) {
  if (a.empty()) user_error("needs at least one argument");
  require_same_dtype(a);
  int64_t dim = attrs_of<Prim::concat>(attrs).dim;
  Shape out = a[0].shape;
  for (const Type& t : a) {
    if (t.rank() != a[0].rank()) {
      user_error("arguments must have one rank, got {} and {}", type_str(a[0]), type_str(t));
    }
  }
  require_dim(dim, a[0].rank(), "dim");
  for (const Type& t : a.subspan(1)) {
    for (int i = 0; i < t.rank(); ++i) {
      if (i != dim - 1 && t.shape[i] != out[i]) {
        user_error("{} and {} differ at dim {}, but dim={}", type_str(a[0]), type_str(t), i + 1,
                   dim);
      }
    }
    // Checked at each step, so that the sum of many large dims cannot overflow.
    out[dim - 1] += t.shape[dim - 1];
    require_sane(out, "the result");
  }
  return one(a[0].dtype, out);
}

// Per dim: lo + n + max(n - 1, 0) * interior + hi.
std::vector<Type> pad(Prim, std::span<const Type> a, const Attrs& attrs) {
  const Type& x = a[0];
  const auto [lo, hi, interior, value] = attrs_of<Prim::pad>(attrs);
  auto require_pads = [&](const std::vector<int64_t>& v, const char* name) {
    require_length(v, x.rank(), name);
    require_each_at_least(v, 0, name);
  };
  require_pads(lo, "lo");
  require_pads(hi, "hi");
  require_pads(interior, "interior");
  require_exact(value, x.dtype, "value");
  Shape out(x.rank());
  for (int i = 0; i < x.rank(); ++i) {
    int64_t gaps = std::max<int64_t>(x.shape[i] - 1, 0);
    if (gaps > 0 && interior[i] > kMaxElements / gaps) {
      user_error("interior={} makes dim {} of {} larger than 2^48", shape_str(interior), i + 1,
                 type_str(x));
    }
    out[i] = lo[i] + x.shape[i] + gaps * interior[i] + hi[i];
  }
  require_sane(out, "the result");
  return one(x.dtype, out);
}

// stop_gradient: any dtype, the argument's type.
std::vector<Type> identity(Prim, std::span<const Type> a, const Attrs&) {
  return {a[0]};
}

}  // namespace

void register_shape_infer(InferTable& t) {
  t.set(Prim::reshape, reshape);
  t.set(Prim::permutedims, permutedims);
  t.set(Prim::broadcast_to, broadcast_to);
  t.set(Prim::slice, slice);
  t.set(Prim::concat, concat);
  t.set(Prim::pad, pad);
  t.set(Prim::stop_gradient, identity);
}

}  // namespace ytape
