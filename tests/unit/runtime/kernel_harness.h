// Test helpers for kernels: run one primitive on tensors, make random tensors, compare
// results with a reference computed in the test.
#pragma once

#include <cstdint>
#include <vector>

#include "runtime/kernels/kernel.h"
#include "runtime/tensor.h"
#include "tape/attrs.h"
#include "tape/prim.h"

namespace ytape::testing {

/// Builds a one-op tape (inputs of the args' types, attributes normalized, output types
/// inferred), allocates the outputs, fills them with garbage (so that a kernel that skips
/// an element is caught), calls the registered kernel and returns the outputs. Throws what
/// the builder or the kernel throws; fails the test if the primitive has no kernel. `set`
/// chooses the fast kernels (oneDNN for f32 dense math) or the reference ones.
std::vector<Tensor> run_op(Prim p, std::vector<Tensor> args, const Attrs& attrs = {},
                           KernelSet set = KernelSet::fast);
/// run_op with each argument, then each output, in `layouts` (missing: plain): the
/// arguments are reordered into theirs before the call and the outputs back to plain
/// after it, so the results compare with a plain run's. The kernel runs in `variant`.
std::vector<Tensor> run_op_in_layouts(Prim p, std::vector<Tensor> args, const Attrs& attrs,
                                      const std::vector<Layout>& layouts,
                                      KernelSet set = KernelSet::fast,
                                      Variant variant = Variant::standard);
/// run_op for a primitive with one output.
Tensor run_op1(Prim p, std::vector<Tensor> args, const Attrs& attrs = {},
               KernelSet set = KernelSet::fast);

/// A tensor of `type` with elements drawn from `seed` (a fixed sequence per seed): floats
/// uniform in [lo, hi), i64 integers in [lo, hi], bool true with probability 1/2.
Tensor random_tensor(const Type& type, uint64_t seed, double lo = -2, double hi = 2);
/// A tensor of `type` holding `values` (column-major), converted to the dtype.
Tensor make_tensor(const Type& type, const std::vector<double>& values);
/// The entries of `given` that `t` takes as inputs, in its order.
inline TensorMap inputs_of(const Tape& t, const TensorMap& given) {
  TensorMap out;
  for (size_t i = 0; i < t.num_inputs(); ++i) {
    for (const auto& [name, value] : given) {
      if (name == t.ops[i].name) out.emplace_back(name, value);
    }
  }
  return out;
}
/// The elements of `t` as doubles (bool as 0/1).
std::vector<double> to_doubles(const Tensor& t);

/// Checks that `got` has `want.size()` elements and that each is within
/// atol + rtol * |want| of its reference; NaN must match NaN and infinities must be equal.
/// Reports the first mismatches with their column-major positions.
void check_close(const Tensor& got, const std::vector<double>& want, double rtol, double atol);
/// Like check_close, but element i may differ by atol + rtol * scale[i]: for sums, whose
/// rounding grows with the sum of the magnitudes of their terms (`scale`), not with the
/// result, and depends on the order in which a library adds them.
void check_close_scaled(const Tensor& got, const std::vector<double>& want,
                        const std::vector<double>& scale, double rtol, double atol);
/// check_close with zero tolerance: for shape and index ops, i64 and bool.
inline void check_equal(const Tensor& got, const std::vector<double>& want) {
  check_close(got, want, 0, 0);
}

/// The column-major multi-index (0-based) of linear position `i` in `shape`.
std::vector<int64_t> unravel(const Shape& shape, int64_t i);
/// The linear position of a 0-based multi-index in `shape`; dims past the index's length
/// count as 0.
int64_t ravel(const Shape& shape, const std::vector<int64_t>& index);

}  // namespace ytape::testing
