#include "runtime/kernels/common.h"

#include <algorithm>
#include <cstring>

#include "runtime/parallel.h"

namespace ytape::kernels {

namespace {

constexpr int kMaxOperands = 3;

// A layout of merged dims: dim 0 is the row, dims 1..m-1 the outer dims; `stride` holds,
// per input, its stride (in elements) in each merged dim.
struct RowLayout {
  int m = 0;
  const int64_t* size = nullptr;
  const int64_t* stride[kMaxOperands] = {};
};

void run_rows(RowFn row, Tensor& out, std::span<const Tensor* const> in, const RowLayout& layout,
              int64_t r0, int64_t r1) {
  const int k = static_cast<int>(in.size());
  const int m = layout.m;
  const int64_t inner = layout.size[0];
  const int out_elem = dtype_size(out.dtype());
  Scratch<8> index(m);
  int64_t offset[kMaxOperands] = {};
  int64_t step[kMaxOperands] = {};
  int64_t rest = r0;
  for (int d = 1; d < m; ++d) {
    index[d] = rest % layout.size[d];
    rest /= layout.size[d];
    for (int i = 0; i < k; ++i) offset[i] += index[d] * layout.stride[i][d];
  }
  for (int i = 0; i < k; ++i) step[i] = layout.stride[i][0];
  for (int64_t r = r0; r < r1; ++r) {
    const void* ptr[kMaxOperands];
    for (int i = 0; i < k; ++i) {
      ptr[i] = static_cast<const char*>(in[i]->raw()) + offset[i] * dtype_size(in[i]->dtype());
    }
    row(static_cast<char*>(out.raw()) + r * inner * out_elem, ptr, step, inner);
    for (int d = 1; d < m; ++d) {
      for (int i = 0; i < k; ++i) offset[i] += layout.stride[i][d];
      if (++index[d] < layout.size[d]) break;
      for (int i = 0; i < k; ++i) offset[i] -= layout.stride[i][d] * layout.size[d];
      index[d] = 0;
    }
  }
}

// Every input is as large as the output or a single element, and the output is large:
// one pass split across threads.
void contiguous_parallel(RowFn row, Tensor& out, std::span<const Tensor* const> in,
                         const int64_t* step) {
  const int out_elem = dtype_size(out.dtype());
  parallel_for(out.size(), kGrain, [&](int64_t b, int64_t e) {
    const void* at[kMaxOperands];
    for (size_t i = 0; i < in.size(); ++i) {
      at[i] = static_cast<const char*>(in[i]->raw()) + b * step[i] * dtype_size(in[i]->dtype());
    }
    row(static_cast<char*>(out.raw()) + b * out_elem, at, step, e - b);
  });
}

// Merges adjacent dims where each input is broadcast in both or in neither (a merged dim
// then has one stride per input) and runs the rows of the innermost merged dim.
void broadcast_strided(RowFn row, Tensor& out, std::span<const Tensor* const> in) {
  const int k = static_cast<int>(in.size());
  const Shape& shape = out.shape();
  const int r = static_cast<int>(shape.size());
  Scratch<8> size(r);
  Scratch<24> stride(kMaxOperands * r);
  int64_t in_stride[kMaxOperands] = {1, 1, 1};
  bool prev[kMaxOperands] = {};
  int m = 0;
  for (int d = 0; d < r; ++d) {
    bool bcast[kMaxOperands];
    int64_t dim[kMaxOperands];
    for (int i = 0; i < k; ++i) {
      dim[i] = in[i]->dim(d + 1);
      bcast[i] = dim[i] == 1;
    }
    bool same = m > 0;
    for (int i = 0; i < k; ++i) same = same && bcast[i] == prev[i];
    if (shape[d] != 1) {
      if (same) {
        size[m - 1] *= shape[d];
      } else {
        size[m] = shape[d];
        for (int i = 0; i < k; ++i) {
          stride[i * r + m] = bcast[i] ? 0 : in_stride[i];
          prev[i] = bcast[i];
        }
        ++m;
      }
    }
    for (int i = 0; i < k; ++i) in_stride[i] *= dim[i];
  }
  RowLayout layout;
  layout.m = m;
  layout.size = size.data();
  for (int i = 0; i < k; ++i) layout.stride[i] = stride.data() + i * r;
  const int64_t n = out.size(), rows = n / size[0];
  if (n < kGrain) return run_rows(row, out, in, layout, 0, rows);
  parallel_for(rows, std::max<int64_t>(1, kGrain / size[0]),
               [&](int64_t b, int64_t e) { run_rows(row, out, in, layout, b, e); });
}

}  // namespace

void contiguous_strides(const Shape& shape, int64_t* strides) {
  int64_t s = 1;
  for (size_t d = 0; d < shape.size(); ++d) {
    strides[d] = s;
    s *= shape[d];
  }
}

void broadcast_rows(RowFn row, Tensor& out, std::span<const Tensor* const> in) {
  if (in.size() > kMaxOperands) internal_error("broadcast_rows of {} inputs", in.size());
  const int64_t n = out.size();
  if (n == 0) return;
  int64_t step[kMaxOperands];
  const void* ptr[kMaxOperands];
  for (size_t i = 0; i < in.size(); ++i) {
    const int64_t s = in[i]->size();
    if (s != n && s != 1) return broadcast_strided(row, out, in);
    step[i] = s == n ? 1 : 0;
    ptr[i] = in[i]->raw();
  }
  if (n >= kGrain) return contiguous_parallel(row, out, in, step);
  row(out.raw(), ptr, step, n);
}

// A per-channel vector, in the blocked order of one image: its blocks of B channels, each
// repeated for every pixel. The image then takes one row per image, where broadcasting
// the vector over the pixels of a blocked image would take rows of B elements.
void broadcast_blocked(RowFn row, const KernelCall& call) {
  Tensor& out = *call.outs[0];
  const int64_t n = out.size();
  bool channels = false;
  for (const Tensor* a : call.args) channels = channels || (a->size() != n && a->size() != 1);
  if (!channels) return broadcast_rows(row, out, call.args);
  const int64_t images = out.dim(4), image = n / images, pixels = out.dim(1) * out.dim(2);
  const int64_t channels_per_block = block_of(call.out_layout(0));
  Tensor flat = Tensor::view({out.dtype(), {image, images}}, out.raw());
  Tensor views[kMaxOperands];
  const Tensor* in[kMaxOperands];
  for (size_t i = 0; i < call.args.size(); ++i) {
    const Tensor& a = *call.args[i];
    void* data = const_cast<void*>(a.raw());  // read only
    if (a.size() == n) {
      views[i] = Tensor::view({a.dtype(), {image, images}}, data);
    } else if (a.size() == 1) {
      views[i] = a;
    } else {
      views[i] = Tensor::uninitialized({a.dtype(), {image, 1}});
      const size_t block = static_cast<size_t>(channels_per_block * dtype_size(a.dtype()));
      auto* to = static_cast<char*>(views[i].raw());
      const auto* from = static_cast<const char*>(a.raw());
      for (int64_t c = 0; c < a.size() / channels_per_block; ++c) {
        for (int64_t p = 0; p < pixels; ++p, to += block) std::memcpy(to, from + c * block, block);
      }
    }
    in[i] = &views[i];
  }
  broadcast_rows(row, flat, {in, call.args.size()});
}

namespace {

template <typename U>
void copy_run(char* out, int64_t os, const char* in, int64_t is, int64_t n) {
  U* o = reinterpret_cast<U*>(out);
  const U* x = reinterpret_cast<const U*>(in);
  for (int64_t i = 0; i < n; ++i) o[i * os] = x[i * is];
}

void copy_row(char* out, int64_t os, const char* in, int64_t is, int64_t n, int elem) {
  if (os == 1 && is == 1) {
    std::memcpy(out, in, static_cast<size_t>(n * elem));
    return;
  }
  switch (elem) {
    case 1:
      return copy_run<uint8_t>(out, os, in, is, n);
    case 4:
      return copy_run<uint32_t>(out, os, in, is, n);
    default:
      return copy_run<uint64_t>(out, os, in, is, n);
  }
}

int64_t product_of(int n, const int64_t* sizes) {
  int64_t p = 1;
  for (int i = 0; i < n; ++i) p *= sizes[i];
  return p;
}

// The side of a tile: 16 KiB of 4-byte elements, 8 KiB of 8-byte ones, so that a tile
// and the lines it reads and writes fit in L1.
constexpr int64_t tile_side(int elem) {
  return elem == 8 ? 32 : 64;
}

// One tile of a transposing copy: x's rows (contiguous along j) go through a small buffer
// that stays in L1, then leave as contiguous rows of out (along i). Strided access on
// either side would thrash: power-of-two strides map every row to the same cache set.
template <typename U>
void copy_tile(char* out, const char* in, int64_t ni, int64_t nj, int64_t ost, int64_t is0) {
  U* o = reinterpret_cast<U*>(out);
  const U* x = reinterpret_cast<const U*>(in);
  constexpr int64_t kTile = tile_side(sizeof(U));
  U buf[kTile * kTile];
  for (int64_t i = 0; i < ni; ++i) {
    for (int64_t j = 0; j < nj; ++j) buf[j * kTile + i] = x[i * is0 + j];
  }
  for (int64_t j = 0; j < nj; ++j) {
    for (int64_t i = 0; i < ni; ++i) o[j * ost + i] = buf[j * kTile + i];
  }
}

// A transposing copy writes dim 0 and reads dim t contiguously: it goes by square tiles
// over the two.
void copy_tiled(char* o, const char* x, int m, const int64_t* size, const int64_t* os,
                const int64_t* is, int t, int elem) {
  const int64_t side = tile_side(elem);
  Scratch<8> osize(m), oos(m), ois(m);
  int k = 0;
  for (int d = 1; d < m; ++d) {
    if (d == t) continue;
    osize[k] = size[d];
    oos[k] = os[d];
    ois[k] = is[d];
    ++k;
  }
  const int64_t n0 = size[0], nt = size[t];
  const int64_t tiles0 = (n0 + side - 1) / side, tiles = tiles0 * ((nt + side - 1) / side);
  auto run = [&](int64_t b, int64_t e) {
    for (int64_t item = b; item < e; ++item) {
      int64_t oo = 0, io = 0, rest = item / tiles;
      for (int d = 0; d < k; ++d) {
        oo += rest % osize[d] * oos[d];
        io += rest % osize[d] * ois[d];
        rest /= osize[d];
      }
      const int64_t tile = item % tiles, i0 = tile % tiles0 * side, j0 = tile / tiles0 * side;
      const int64_t ni = std::min(side, n0 - i0), nj = std::min(side, nt - j0);
      char* ob = o + (oo + i0 + j0 * os[t]) * elem;
      const char* xb = x + (io + i0 * is[0] + j0) * elem;
      switch (elem) {
        case 1:
          copy_tile<uint8_t>(ob, xb, ni, nj, os[t], is[0]);
          break;
        case 4:
          copy_tile<uint32_t>(ob, xb, ni, nj, os[t], is[0]);
          break;
        default:
          copy_tile<uint64_t>(ob, xb, ni, nj, os[t], is[0]);
      }
    }
  };
  const int64_t items = product_of(k, osize.data()) * tiles;
  if (items * side * side < kGrain) return run(0, items);
  parallel_for(items, std::max<int64_t>(1, kGrain / (side * side)), run);
}

}  // namespace

void copy_strided(void* out, const int64_t* out_strides, const void* in, const int64_t* in_strides,
                  const int64_t* sizes, int rank, int elem_size) {
  Scratch<8> size(rank), os(rank), is(rank);
  int m = 0;
  int64_t n = 1;
  for (int d = 0; d < rank; ++d) {
    if (sizes[d] == 0) return;
    if (sizes[d] == 1) continue;
    n *= sizes[d];
    if (m > 0 && os[m - 1] * size[m - 1] == out_strides[d] &&
        is[m - 1] * size[m - 1] == in_strides[d]) {
      size[m - 1] *= sizes[d];
      continue;
    }
    size[m] = sizes[d];
    os[m] = out_strides[d];
    is[m] = in_strides[d];
    ++m;
  }
  char* o = static_cast<char*>(out);
  const char* x = static_cast<const char*>(in);
  if (m == 0) return copy_row(o, 1, x, 1, 1, elem_size);
  if (os[0] == 1 && is[0] != 1) {
    for (int t = 1; t < m; ++t) {
      if (is[t] == 1) return copy_tiled(o, x, m, size.data(), os.data(), is.data(), t, elem_size);
    }
  }
  const int64_t inner = size[0];
  auto run = [&](int64_t r0, int64_t r1) {
    for_each_offset2(
        m - 1, size.data() + 1, os.data() + 1, is.data() + 1, r0, r1, [&](int64_t oo, int64_t io) {
          copy_row(o + oo * elem_size, os[0], x + io * elem_size, is[0], inner, elem_size);
        });
  };
  const int64_t rows = n / inner;
  if (n < kGrain) return run(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kGrain / inner), run);
}

}  // namespace ytape::kernels
