// Helpers shared by the kernel families: thread splitting, small scratch arrays, the
// broadcasting loop driver and a dtype-agnostic strided copy.
#pragma once

#include <cmath>
#include <cstdint>
#include <span>
#include <type_traits>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "tape/scalar_math.h"

namespace ytape::kernels {

/// Before a loop function: compiled for AVX-512, AVX2 and the baseline, the widest the
/// processor has chosen when the program loads. A file whose variants must give the same
/// bits is compiled with -ffp-contract=off (runtime/CMakeLists.txt: no a * b + c becomes a
/// fused multiply-add where the instruction set has one). Clang (the fuzz build's
/// compiler) takes no target_clones on templates: it builds the baseline only.
#if defined(__clang__)
#define YTAPE_ROW_TARGETS
#else
#define YTAPE_ROW_TARGETS __attribute__((target_clones("avx512f", "avx2", "default")))
#endif

/// Elements below which a loop runs on the calling thread: dispatching to the pool costs
/// microseconds, as much as a single thread needs for this many elements.
inline constexpr int64_t kGrain = 32768;

/// A small array of int64 that lives on the stack up to N elements (the usual ranks), on
/// the heap beyond, so that kernels on small tensors never allocate.
template <int N>
class Scratch {
 public:
  explicit Scratch(int64_t n, int64_t value = 0) {
    if (n > N) {
      heap_.assign(static_cast<size_t>(n), value);
      data_ = heap_.data();
    } else {
      for (int64_t i = 0; i < n; ++i) local_[i] = value;
    }
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;
  int64_t* data() { return data_; }
  const int64_t* data() const { return data_; }
  int64_t& operator[](int64_t i) { return data_[i]; }
  int64_t operator[](int64_t i) const { return data_[i]; }

 private:
  int64_t local_[N];
  std::vector<int64_t> heap_;
  int64_t* data_ = local_;
};

/// Column-major strides (in elements) of `shape`, written to `strides[0..rank)`.
void contiguous_strides(const Shape& shape, int64_t* strides);

/// Calls f(offset_a, offset_b) for the multi-indices of `sizes` (first dim fastest) at
/// linear positions [begin, end), where offset_a is the sum of index * sa, offset_b of
/// index * sb.
template <typename F>
void for_each_offset2(int rank, const int64_t* sizes, const int64_t* sa, const int64_t* sb,
                      int64_t begin, int64_t end, F&& f) {
  if (begin >= end) return;
  Scratch<8> index(rank);
  int64_t a = 0, b = 0, rest = begin;
  for (int d = 0; d < rank; ++d) {
    index[d] = rest % sizes[d];
    rest /= sizes[d];
    a += index[d] * sa[d];
    b += index[d] * sb[d];
  }
  for (int64_t i = begin; i < end; ++i) {
    f(a, b);
    for (int d = 0; d < rank; ++d) {
      a += sa[d];
      b += sb[d];
      if (++index[d] < sizes[d]) break;
      a -= sa[d] * sizes[d];
      b -= sb[d] * sizes[d];
      index[d] = 0;
    }
  }
}

/// for_each_offset2 over one set of strides: calls f(offset).
template <typename F>
void for_each_offset(int rank, const int64_t* sizes, const int64_t* strides, int64_t begin,
                     int64_t end, F&& f) {
  for_each_offset2(rank, sizes, strides, strides, begin, end, [&](int64_t a, int64_t) { f(a); });
}

/// Applies `row` over `out`, whose inputs (at most 3) broadcast to its shape (Julia rule;
/// the shapes have been checked). Same-shape and one-element inputs take one contiguous
/// pass; other layouts merge the dims where every input is contiguous and call `row` per
/// run of the innermost dim. Large outputs are split across threads.
void broadcast_rows(RowFn row, Tensor& out, std::span<const Tensor* const> in);

/// broadcast_rows over the arguments of a kernel whose output is a blocked image
/// (Layout::c8 or c16), as are its arguments of the output's size; the others are single
/// elements or per-channel vectors (1, 1, C, 1) (KernelTable::channel_args).
void broadcast_blocked(RowFn row, const KernelCall& call);

/// broadcast_rows over a kernel's arguments and its single output, of either layout. A
/// one-element output (every input then has one element) calls the row directly: scalar
/// tapes run millions of these, so the path is a few instructions.
inline void broadcast_call(RowFn row, const KernelCall& call) {
  Tensor& out = *call.outs[0];
  if (out.size() == 1 && call.args.size() <= 3) {
    static constexpr int64_t kSteps[3] = {1, 1, 1};
    const void* in[3];
    for (size_t i = 0; i < call.args.size(); ++i) in[i] = call.args[i]->raw();
    row(out.raw(), in, kSteps, 1);
    return;
  }
  if (is_blocked(call.out_layout(0))) return broadcast_blocked(row, call);
  broadcast_rows(row, out, call.args);
}

/// Copies elements of `elem_size` bytes (1, 4 or 8): for every multi-index i of `sizes`,
/// out[Σ i_d * out_strides_d] = in[Σ i_d * in_strides_d] (strides in elements, in may be
/// 0 for broadcasting). Adjacent dims that are contiguous in both merge; runs contiguous in
/// both become memcpy; large copies are split across threads.
void copy_strided(void* out, const int64_t* out_strides, const void* in, const int64_t* in_strides,
                  const int64_t* sizes, int rank, int elem_size);

}  // namespace ytape::kernels
