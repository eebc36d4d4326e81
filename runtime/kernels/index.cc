// Kernels of the index family: gather and its transpose scatter_add. Indices are checked
// before any data moves, so a bad index never reads or writes out of bounds and the error
// names the first bad one whatever the threads.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <optional>

#include "runtime/kernels/common.h"
#include "runtime/parallel.h"

namespace ytape {

namespace {

using namespace kernels;

// The position of the first index of `idx` outside 1..limit, or -1.
int64_t first_bad(const Tensor& idx, int64_t limit) {
  const int64_t* v = idx.data<int64_t>();
  for (int64_t i = 0; i < idx.size(); ++i) {
    if (v[i] < 1 || v[i] > limit) return i;
  }
  return -1;
}

// `range` says where the limit comes from.
[[noreturn]] void bad_index(const KernelCall& call, const Tensor& idx, int64_t bad, int64_t limit,
                            const std::string& range) {
  std::vector<int64_t> at(idx.rank());
  int64_t rest = bad;
  for (int d = 0; d < idx.rank(); ++d) {
    at[d] = rest % idx.shape()[d] + 1;
    rest /= idx.shape()[d];
  }
  user_error("{}: idx {} holds {} at [{}], outside 1..{} ({})", prim_name(call.op.prim),
             type_str(idx.type()), idx.data<int64_t>()[bad], fmt::join(at, ","), limit, range);
}

// How gather and scatter_add walk: `walked` is the contiguous side (gather's output,
// scatter's y), `data` the side addressed through idx (gather's x, scatter's output); they
// agree except at dim. When idx is 1 in every dim before dim, those dims form contiguous
// runs of `run` elements, copied whole (an embedding row, say); otherwise runs are single
// elements. The remaining outer dims carry strides in data and idx (0 where idx is 1).
struct Walk {
  int64_t run = 1, count = 0, dim_stride = 0;
  int n = 0;
  Scratch<8> size, data_stride, idx_stride;

  Walk(const Tensor& walked, const Tensor& data, const Tensor& idx, int64_t dim)
      : size(walked.rank()), data_stride(walked.rank()), idx_stride(walked.rank()) {
    const int r = walked.rank(), at = static_cast<int>(dim) - 1;
    Scratch<8> ds(r), is(r);
    contiguous_strides(data.shape(), ds.data());
    contiguous_strides(idx.shape(), is.data());
    bool runs = true;
    for (int d = 0; d < at; ++d) runs = runs && idx.shape()[d] == 1;
    const int first = runs ? at : 0;
    for (int d = 0; d < first; ++d) run *= walked.shape()[d];
    for (int d = first; d < r; ++d, ++n) {
      size[n] = walked.shape()[d];
      data_stride[n] = d == at ? 0 : ds[d];
      idx_stride[n] = idx.shape()[d] == 1 ? 0 : is[d];
    }
    dim_stride = ds[at];
    count = run == 0 ? 0 : walked.size() / run;
  }

  // Calls f(walked offset, data offset, idx offset) for outer positions [begin, end).
  template <typename F>
  void each(int64_t begin, int64_t end, F&& f) {
    int64_t i = begin * run;
    for_each_offset2(n, size.data(), data_stride.data(), idx_stride.data(), begin, end,
                     [&](int64_t a, int64_t b) {
                       f(i, a, b);
                       i += run;
                     });
  }
};

// An idx that varies along dim only (its size is 1 in every other dim), as a reverse, a
// slice by an index vector or an embedding lookup writes: both sides are (inner, rows,
// outer) arrays, x with `d` rows at dim and the walked side with idx's `m`. The generic
// walk costs a multi-dim step per element; here each (row, outer) pair is one run, and
// outer slabs are independent (Flux's Conv flips its weights this way: ResNet-18's layer-4
// weights, 2.4M elements, took 3.8 ms to gather along dim 1 and 5 ms to scatter back).
struct AlongDim {
  int64_t inner = 1, d = 0, m = 0, outer = 1;
};

std::optional<AlongDim> along_dim(const Tensor& data, const Tensor& idx, int64_t dim) {
  AlongDim a;
  const int at = static_cast<int>(dim) - 1;
  for (int k = 0; k < idx.rank(); ++k) {
    if (k != at && idx.shape()[k] != 1) return std::nullopt;
    if (k < at) a.inner *= data.shape()[k];
    if (k > at) a.outer *= data.shape()[k];
  }
  a.d = data.shape()[at];
  a.m = idx.shape()[at];
  return a;
}

// out[i, j, o] = x[i, iv[j], o] (1-based iv) over rows r = j + m * o in [begin, end).
template <typename T>
void gather_rows(const AlongDim& a, const T* x, const int64_t* iv, T* out, int64_t begin,
                 int64_t end) {
  int64_t o = begin / a.m, j = begin % a.m;
  for (int64_t r = begin; r < end; ++r) {
    const T* src = x + (o * a.d + iv[j] - 1) * a.inner;
    T* dst = out + r * a.inner;
    if (a.inner == 1) {
      *dst = *src;
    } else {
      std::memcpy(dst, src, static_cast<size_t>(a.inner) * sizeof(T));
    }
    if (++j == a.m) j = 0, ++o;
  }
}

template <typename T>
void gather_along(const AlongDim& a, const T* x, const int64_t* iv, T* out) {
  int64_t rows = a.m * a.outer;
  if (rows == 0) return;  // gather_rows divides by m
  auto body = [&](int64_t b, int64_t e) { gather_rows(a, x, iv, out, b, e); };
  if (rows * a.inner < kGrain) return body(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kGrain / std::max<int64_t>(a.inner, 1)), body);
}

void gather_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  const Tensor& idx = *call.args[1];
  Tensor& out = *call.outs[0];
  const int64_t dim = attrs_of<Prim::gather>(call.op.attrs).dim;
  const int64_t limit = x.dim(static_cast<int>(dim));
  if (int64_t bad = first_bad(idx, limit); bad >= 0) {
    bad_index(call, idx, bad, limit,
              fmt::format("the size of x {} at dim={}", type_str(x.type()), dim));
  }
  const int64_t* iv = idx.data<int64_t>();
  if (std::optional<AlongDim> a = along_dim(x, idx, dim)) {
    switch (dtype_size(x.dtype())) {
      case 1:
        return gather_along(*a, static_cast<const uint8_t*>(x.raw()), iv,
                            static_cast<uint8_t*>(out.raw()));
      case 2:
        return gather_along(*a, static_cast<const uint16_t*>(x.raw()), iv,
                            static_cast<uint16_t*>(out.raw()));
      case 4:
        return gather_along(*a, static_cast<const uint32_t*>(x.raw()), iv,
                            static_cast<uint32_t*>(out.raw()));
      case 8:
        return gather_along(*a, static_cast<const uint64_t*>(x.raw()), iv,
                            static_cast<uint64_t*>(out.raw()));
    }
  }
  Walk walk(out, x, idx, dim);
  const size_t elem = static_cast<size_t>(dtype_size(x.dtype()));
  const char* xp = static_cast<const char*>(x.raw());
  char* op = static_cast<char*>(out.raw());
  auto body = [&](int64_t b, int64_t e) {
    walk.each(b, e, [&](int64_t o, int64_t xo, int64_t io) {
      xo += (iv[io] - 1) * walk.dim_stride;
      std::memcpy(op + o * elem, xp + xo * elem, walk.run * elem);
    });
  };
  if (out.size() < kGrain) return body(0, walk.count);
  parallel_for(walk.count, std::max<int64_t>(1, kGrain / walk.run), body);
}

// Several elements of y may land on one output element, added in the order of y. An idx
// along dim only (AlongDim, out with `d` rows) keeps each outer slab to itself, so slabs
// run in parallel in the same order within each.
template <typename T>
void scatter_along(const AlongDim& a, const T* y, const int64_t* iv, T* out) {
  auto body = [&](int64_t b, int64_t e) {
    for (int64_t o = b; o < e; ++o) {
      T* slab = out + o * a.d * a.inner;
      std::fill_n(slab, a.d * a.inner, T(0));
      for (int64_t j = 0; j < a.m; ++j) {
        const T* src = y + (o * a.m + j) * a.inner;
        T* dst = slab + (iv[j] - 1) * a.inner;
        for (int64_t i = 0; i < a.inner; ++i) dst[i] = add_values(dst[i], src[i]);
      }
    }
  };
  int64_t per_slab = std::max<int64_t>((a.m + a.d) * a.inner, 1);
  if (a.outer * per_slab < kGrain) return body(0, a.outer);
  parallel_for(a.outer, std::max<int64_t>(1, kGrain / per_slab), body);
}

template <typename T>
void scatter_typed(const Tensor& y, const Tensor& idx, int64_t dim, Tensor& out) {
  T* o = out.data<T>();
  if (std::optional<AlongDim> a = along_dim(out, idx, dim)) {
    return scatter_along(*a, y.data<T>(), idx.data<int64_t>(), o);
  }
  std::fill_n(o, out.size(), T(0));
  Walk walk(y, out, idx, dim);
  const int64_t* iv = idx.data<int64_t>();
  const T* yp = y.data<T>();
  walk.each(0, walk.count, [&](int64_t yo, int64_t oo, int64_t io) {
    T* dst = o + oo + (iv[io] - 1) * walk.dim_stride;
    for (int64_t j = 0; j < walk.run; ++j) dst[j] = add_values(dst[j], yp[yo + j]);
  });
}

void scatter_add_kernel(const KernelCall& call) {
  const Tensor& y = *call.args[0];
  const Tensor& idx = *call.args[1];
  const auto attrs = attrs_of<Prim::scatter_add>(call.op.attrs);
  const int64_t dim = attrs.dim;
  const int64_t size = attrs.size;
  if (int64_t bad = first_bad(idx, size); bad >= 0) {
    bad_index(call, idx, bad, size, fmt::format("size={} at dim={}", size, dim));
  }
  switch (DType d = y.dtype()) {
    case DType::f32:
      return scatter_typed<float>(y, idx, dim, *call.outs[0]);
    case DType::f64:
      return scatter_typed<double>(y, idx, dim, *call.outs[0]);
    case DType::i64:
      return scatter_typed<int64_t>(y, idx, dim, *call.outs[0]);
    default:
      internal_error("scatter_add has no kernel for {}", dtype_name(d));
  }
}

}  // namespace

void register_index_kernels(KernelTable& t) {
  t.set(Prim::gather, gather_kernel);
  t.set(Prim::scatter_add, scatter_add_kernel);
}

}  // namespace ytape
