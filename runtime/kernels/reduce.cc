// Kernels of the reduce family. x's dims are first simplified: dims of size 1 dropped,
// adjacent dims that are both kept or both reduced merged. Then either the innermost dim is
// reduced (each output element reduces contiguous runs) or kept (output rows accumulate
// whole rows of x), so the inner loops always read contiguous memory.
#include <algorithm>
#include <cmath>
#include <limits>
#include <vector>

#include "runtime/kernels/common.h"
#include "runtime/kernels/softmax_rows.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using namespace kernels;

// The merged dims of x, each with its stride in x and whether it is reduced.
struct Plan {
  int m = 0;
  Scratch<8> size, stride, reduced;
  explicit Plan(const Tensor& x, const std::vector<int64_t>& dims)
      : size(x.rank()), stride(x.rank()), reduced(x.rank()) {
    Scratch<8> named(x.rank());
    for (int64_t d : dims) named[d - 1] = 1;
    int64_t s = 1;
    for (int d = 0; d < x.rank(); ++d) {
      const int64_t n = x.shape()[d];
      if (n != 1) {
        if (m > 0 && reduced[m - 1] == named[d]) {
          size[m - 1] *= n;
        } else {
          size[m] = n;
          stride[m] = s;
          reduced[m] = named[d];
          ++m;
        }
      }
      s *= n;
    }
  }
  // The sizes and strides of the dims of one kind, in order.
  int select(bool kind, int64_t* sizes, int64_t* strides, int from = 0) const {
    int k = 0;
    for (int d = from; d < m; ++d) {
      if ((reduced[d] != 0) != kind) continue;
      sizes[k] = size[d];
      strides[k] = stride[d];
      ++k;
    }
    return k;
  }
};

int64_t product(int n, const int64_t* sizes) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= sizes[i];
  return p;
}

// Reductions: float sums accumulate in double, so f32 results are nearly correctly rounded
// and do not depend on the summation order; i64 sums wrap.
template <typename T>
struct Sum {
  using Acc = std::conditional_t<std::is_same_v<T, float>, double, T>;
  static Acc init() { return 0; }
  static Acc step(Acc a, Acc x) { return add_values(a, x); }
};
template <typename T>
struct Max {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) {
      return -std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::min();
    }
  }
  static Acc step(Acc a, Acc x) { return max_nan(a, x); }
};
template <typename T>
struct Min {
  using Acc = T;
  static Acc init() {
    if constexpr (std::is_floating_point_v<T>) {
      return std::numeric_limits<T>::infinity();
    } else {
      return std::numeric_limits<T>::max();
    }
  }
  static Acc step(Acc a, Acc x) { return min_nan(a, x); }
};

// Several independent accumulators break the dependency chain so the loop vectorizes; the
// order of operations is fixed, so results are reproducible.
template <typename Op, typename T>
typename Op::Acc reduce_run(const T* x, int64_t n, typename Op::Acc acc) {
  using Acc = typename Op::Acc;
  constexpr int kLanes = 8;
  Acc lane[kLanes];
  for (Acc& a : lane) a = Op::init();
  int64_t i = 0;
  for (; i + kLanes <= n; i += kLanes) {
    for (int j = 0; j < kLanes; ++j) lane[j] = Op::step(lane[j], static_cast<Acc>(x[i + j]));
  }
  for (; i < n; ++i) lane[0] = Op::step(lane[0], static_cast<Acc>(x[i]));
  for (Acc a : lane) acc = Op::step(acc, a);
  return acc;
}

// Everything reduced: fixed blocks reduced in parallel, combined in order, so the result
// does not depend on the number of threads.
template <typename Op, typename T>
void reduce_all(const T* x, int64_t n, T* out) {
  using Acc = typename Op::Acc;
  const int64_t blocks = (n + kGrain - 1) / kGrain;
  if (blocks <= 1) {
    *out = static_cast<T>(reduce_run<Op>(x, n, Op::init()));
    return;
  }
  std::vector<Acc> partial(static_cast<size_t>(blocks));
  parallel_for(blocks, 2, [&](int64_t b, int64_t e) {
    for (int64_t k = b; k < e; ++k) {
      partial[k] = reduce_run<Op>(x + k * kGrain, std::min(kGrain, n - k * kGrain), Op::init());
    }
  });
  Acc acc = Op::init();
  for (Acc a : partial) acc = Op::step(acc, a);
  *out = static_cast<T>(acc);
}

// The innermost dim is reduced: each output element reduces runs of plan.size[0].
template <typename Op, typename T>
void reduce_inner(const T* x, const Plan& plan, T* out, int64_t out_size) {
  Scratch<8> ksize(plan.m), kstride(plan.m), rsize(plan.m), rstride(plan.m);
  const int nk = plan.select(false, ksize.data(), kstride.data());
  const int nr = plan.select(true, rsize.data(), rstride.data(), 1);
  const int64_t run = plan.size[0];
  auto body = [&](int64_t o0, int64_t o1) {
    int64_t o = o0;
    for_each_offset(nk, ksize.data(), kstride.data(), o0, o1, [&](int64_t base) {
      typename Op::Acc acc = Op::init();
      for_each_offset(nr, rsize.data(), rstride.data(), 0, product(nr, rsize.data()),
                      [&](int64_t off) { acc = reduce_run<Op>(x + base + off, run, acc); });
      out[o++] = static_cast<T>(acc);
    });
  };
  const int64_t per_out = run * product(nr, rsize.data());
  if (out_size * per_out < kGrain) return body(0, out_size);
  parallel_for(out_size, std::max<int64_t>(1, kGrain / per_out), body);
}

// out (rows of `row`) from the accumulators of `parts` parts of each tile of `tile`
// columns, in `partial` tile by tile, added in part order.
template <typename Op, typename T>
void combine_parts(const std::vector<typename Op::Acc>& partial, int64_t parts, int64_t row,
                   int64_t tile, T* out, int64_t out_size) {
  const int64_t tiles = (row + tile - 1) / tile;
  for (int64_t t = 0; t < out_size / row * tiles; ++t) {
    const int64_t r = t / tiles, c0 = t % tiles * tile, w = std::min(tile, row - c0);
    for (int64_t j = 0; j < w; ++j) {
      typename Op::Acc acc = Op::init();
      for (int64_t part = 0; part < parts; ++part) {
        acc = Op::step(acc, partial[static_cast<size_t>((t * parts + part) * tile + j)]);
      }
      out[r * row + c0 + j] = static_cast<T>(acc);
    }
  }
}

// The innermost dim is kept: output rows of plan.size[0] accumulate the matching rows of x
// over every reduced index, a tile of kTile columns at a time so the accumulators stay on
// the stack (and in L1). Where there are fewer tiles than threads could share (a bias's
// gradient: 128 columns summed over 2048 rows), the reduced indices are split too, into
// `parts` ranges fixed by the shapes alone, whose partial accumulators are combined in
// order: the bits never depend on the threads.
template <typename Op, typename T>
void reduce_rows(const T* x, const Plan& plan, T* out, int64_t out_size) {
  using Acc = typename Op::Acc;
  constexpr int64_t kTile = 256;
  Scratch<8> ksize(plan.m), kstride(plan.m), rsize(plan.m), rstride(plan.m);
  const int nk = plan.select(false, ksize.data(), kstride.data(), 1);
  const int nr = plan.select(true, rsize.data(), rstride.data());
  const int64_t row = plan.size[0], tiles = (row + kTile - 1) / kTile;
  const int64_t reduced = product(nr, rsize.data());
  const int64_t items = out_size / row * tiles;
  const int64_t parts =
      items >= 8 ? 1 : std::clamp<int64_t>(reduced * std::min(row, kTile) / kGrain, 1, 8);
  std::vector<Acc> partial(parts > 1 ? static_cast<size_t>(items * parts * kTile) : 0);
  auto body = [&](int64_t i0, int64_t i1) {
    for (int64_t i = i0; i < i1; ++i) {
      const int64_t t = i / parts, part = i % parts;
      const int64_t r = t / tiles, c0 = t % tiles * kTile, w = std::min(kTile, row - c0);
      int64_t base = c0, rest = r;
      for (int d = 0; d < nk; ++d) {
        base += rest % ksize[d] * kstride[d];
        rest /= ksize[d];
      }
      Acc acc[kTile];
      for (int64_t j = 0; j < w; ++j) acc[j] = Op::init();
      for_each_offset(nr, rsize.data(), rstride.data(), reduced * part / parts,
                      reduced * (part + 1) / parts, [&](int64_t off) {
                        const T* xr = x + base + off;
                        for (int64_t j = 0; j < w; ++j) {
                          acc[j] = Op::step(acc[j], static_cast<Acc>(xr[j]));
                        }
                      });
      if (parts > 1) {
        std::copy_n(acc, w, partial.data() + i * kTile);
        continue;
      }
      T* o = out + r * row + c0;
      for (int64_t j = 0; j < w; ++j) o[j] = static_cast<T>(acc[j]);
    }
  };
  if (out_size * reduced < kGrain) {
    body(0, items * parts);
  } else {
    parallel_for(items * parts,
                 std::max<int64_t>(1, kGrain * parts / (reduced * std::min(row, kTile))), body);
  }
  if (parts > 1) combine_parts<Op>(partial, parts, row, kTile, out, out_size);
}

// Reduces x over `dims` into out, which holds the kept dims in order.
template <typename Op, typename T>
void reduce_into(const Tensor& x, const std::vector<int64_t>& dims, T* out, int64_t out_size) {
  if (out_size == 0) return;
  const T* xp = x.data<T>();
  if (x.size() == 0) {
    std::fill_n(out, out_size, static_cast<T>(Op::init()));
    return;
  }
  if (out_size == x.size()) {  // only dims of size 1 are reduced
    std::copy_n(xp, out_size, out);
    return;
  }
  Plan plan(x, dims);
  if (plan.m == 1) {
    reduce_all<Op>(xp, x.size(), out);
  } else if (plan.reduced[0] != 0) {
    reduce_inner<Op>(xp, plan, out, out_size);
  } else {
    reduce_rows<Op>(xp, plan, out, out_size);
  }
}

// A blocked image (block B) seen as the plain 5-d tensor (B, W, H, C/B, N) and its
// reduced dims there; false when the kept dims would come out in another order than the
// plain image's (channels kept with width or height). Channel c is (c % B, c / B), so
// a reduction that keeps the channels, or reduces them whole, fills its output in the
// plain order.
bool blocked_view(const Tensor& x, int64_t block, const std::vector<int64_t>& dims, Tensor& view,
                  std::vector<int64_t>& view_dims) {
  bool reduced[5] = {};  // plain dims 1..4
  for (int64_t d : dims) reduced[d] = true;
  if (!reduced[3] && (!reduced[1] || !reduced[2])) return false;
  view = Tensor::view({x.dtype(), {block, x.dim(1), x.dim(2), x.dim(3) / block, x.dim(4)}},
                      const_cast<void*>(x.raw()));  // read only
  view_dims.clear();
  if (reduced[3]) view_dims.push_back(1);
  if (reduced[1]) view_dims.push_back(2);
  if (reduced[2]) view_dims.push_back(3);
  if (reduced[3]) view_dims.push_back(4);
  if (reduced[4]) view_dims.push_back(5);
  return true;
}

template <Prim P, template <typename> class Op>
void reduction_kernel(const KernelCall& call) {
  const Tensor* x = call.args[0];
  Tensor& out = *call.outs[0];
  std::vector<int64_t> dims = attrs_of<P>(call.op.attrs).dims;
  Tensor view;
  if (Layout l = call.arg_layout(0); is_blocked(l)) {
    std::vector<int64_t> view_dims;
    if (blocked_view(*x, block_of(l), dims, view, view_dims)) {
      dims = std::move(view_dims);
    } else {
      view = Tensor::uninitialized(x->type());
      relayout(*x, l, view, Layout::plain);
    }
    x = &view;
  }
  switch (DType d = x->dtype()) {
    case DType::f32:
      return reduce_into<Op<float>>(*x, dims, out.data<float>(), out.size());
    case DType::f64:
      return reduce_into<Op<double>>(*x, dims, out.data<double>(), out.size());
    case DType::i64:
      return reduce_into<Op<int64_t>>(*x, dims, out.data<int64_t>(), out.size());
    default:
      internal_error("{} has no kernel for {}", prim_name(call.op.prim), dtype_name(d));
  }
}

// ---- argmax --------------------------------------------------------------------------

// The first maximum; a NaN counts as larger than everything, as in `maximum`.
template <typename T>
int64_t argmax_run(const T* x, int64_t n, int64_t stride) {
  T best = x[0];
  int64_t at = 0;
  for (int64_t l = 1; l < n && best == best; ++l) {
    const T v = x[l * stride];
    if (v > best || v != v) {
      best = v;
      at = l;
    }
  }
  return at + 1;
}

template <typename T>
void argmax_typed(const Tensor& x, int64_t dim, Tensor& out) {
  const T* xp = x.data<T>();
  int64_t* o = out.data<int64_t>();
  int64_t pre = 1;
  for (int d = 1; d < dim; ++d) pre *= x.dim(d);
  const int64_t n = x.dim(static_cast<int>(dim));
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t i = b; i < e; ++i) {
      const int64_t p = i % pre, q = i / pre;
      o[i] = argmax_run(xp + p + q * pre * n, n, pre);
    }
  };
  if (x.size() < kGrain) return body(0, out.size());
  parallel_for(out.size(), std::max<int64_t>(1, kGrain / n), body);
}

void argmax_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  const int64_t dim = attrs_of<Prim::argmax>(call.op.attrs).dim;
  switch (DType d = x.dtype()) {
    case DType::f32:
      return argmax_typed<float>(x, dim, *call.outs[0]);
    case DType::f64:
      return argmax_typed<double>(x, dim, *call.outs[0]);
    case DType::i64:
      return argmax_typed<int64_t>(x, dim, *call.outs[0]);
    default:
      internal_error("argmax has no kernel for {}", dtype_name(d));
  }
}

// ---- softmax and log_softmax ---------------------------------------------------------

// Rows of the normalization passes: in[0] is x (full size); in[1] and in[2] hold one value
// per group of the reduction, broadcast back over the reduced dims.
enum class Pass { exp_sub, div, log_sub };

template <typename T, Pass P>
void pass_row(void* out, const void* const* in, const int64_t* step, int64_t n) {
  T* o = static_cast<T*>(out);
  const T* a = static_cast<const T*>(in[0]);
  const T* b = static_cast<const T*>(in[1]);
  const T* c = static_cast<const T*>(in[P == Pass::log_sub ? 2 : 1]);
  // x - m is exact near the maximum, so subtracting log Σ separately keeps small results
  // accurate where x - (m + log Σ) would round to the ulp of m.
  auto f = [](T x, T y, T z) {
    if constexpr (P == Pass::exp_sub) {
      return std::exp(x - y);
    } else if constexpr (P == Pass::div) {
      return x / y;
    } else {
      return (x - y) - z;
    }
  };
  if (step[1] != 0) {
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], b[i], c[i]);
  } else {
    const T y = b[0], z = c[0];
    for (int64_t i = 0; i < n; ++i) o[i] = f(a[i], y, z);
  }
}

// exp(x - m) / Σ exp(x - m), or (x - m) - log Σ exp(x - m), with m the maximum.
template <typename T>
void normalize_typed(const Tensor& x, const std::vector<int64_t>& dims, bool log, Tensor& out) {
  if (x.size() == 0) return;
  Shape kept = x.shape();
  for (int64_t d : dims) kept[d - 1] = 1;
  const int64_t groups = num_elements(kept);
  std::vector<T> m(groups), s(groups);
  Tensor mt = Tensor::view({x.dtype(), kept}, m.data());
  Tensor st = Tensor::view({x.dtype(), kept}, s.data());
  reduce_into<Max<T>>(x, dims, m.data(), groups);
  const Tensor* exp_args[] = {&x, &mt};
  broadcast_rows(pass_row<T, Pass::exp_sub>, out, exp_args);
  reduce_into<Sum<T>>(out, dims, s.data(), groups);
  if (log) {
    for (T& v : s) v = std::log(v);
    const Tensor* args[] = {&x, &mt, &st};
    broadcast_rows(pass_row<T, Pass::log_sub>, out, args);
  } else {
    const Tensor* args[] = {&out, &st};
    broadcast_rows(pass_row<T, Pass::div>, out, args);
  }
}

template <Prim P>
void normalize_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  const std::vector<int64_t> dims = attrs_of<P>(call.op.attrs).dims;
  constexpr bool log = P == Prim::log_softmax;
  switch (DType d = x.dtype()) {
    case DType::f32:
      return normalize_typed<float>(x, dims, log, *call.outs[0]);
    case DType::f64:
      return normalize_typed<double>(x, dims, log, *call.outs[0]);
    default:
      internal_error("{} has no kernel for {}", prim_name(call.op.prim), dtype_name(d));
  }
}

// The fast kernel: over the first dim of f32, rows of softmax_rows.h; else as the reference.
template <Prim P>
void fast_normalize_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  if (x.dtype() != DType::f32 || attrs_of<P>(call.op.attrs).dims != std::vector<int64_t>{1}) {
    return normalize_kernel<P>(call);
  }
  const int64_t n = x.dim(1);
  softmax_rows(x.data<float>(), call.outs[0]->data<float>(), n, n == 0 ? 0 : x.size() / n,
               P == Prim::log_softmax);
}

}  // namespace

void register_reduce_kernels(KernelTable& t) {
  t.set(Prim::sum, reduction_kernel<Prim::sum, Sum>);
  t.set(Prim::maximum, reduction_kernel<Prim::maximum, Max>);
  t.set(Prim::minimum, reduction_kernel<Prim::minimum, Min>);
  // Blocked images are read as they are (a bias gradient sums a convolution's blocked
  // output gradient over all but the channels).
  if (t.kernels_set == KernelSet::fast) {
    for (Prim p : {Prim::sum, Prim::maximum, Prim::minimum}) {
      t.allow_blocked(p, 0b1, BlockedOut::never);
    }
  }
  t.set(Prim::argmax, argmax_kernel);
  if (t.kernels_set == KernelSet::fast) {
    t.set(Prim::softmax, fast_normalize_kernel<Prim::softmax>);
    t.set(Prim::log_softmax, fast_normalize_kernel<Prim::log_softmax>);
  } else {
    t.set(Prim::softmax, normalize_kernel<Prim::softmax>);
    t.set(Prim::log_softmax, normalize_kernel<Prim::log_softmax>);
  }
}

}  // namespace ytape
