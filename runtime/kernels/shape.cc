// Kernels of the shape family. They only move elements, so each is a strided copy
// (common.h) described by sizes and strides, independent of the dtype.
#include <algorithm>
#include <cstring>

#include "runtime/kernels/common.h"
#include "tape/float16.h"

namespace ytape {

namespace {

using namespace kernels;

void reshape_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  if (x.bytes() > 0 && out.raw() != x.raw()) {
    std::memcpy(out.raw(), x.raw(), static_cast<size_t>(x.bytes()));
  }
}

// Writes out in order, reading x through permuted strides.
void permutedims_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  const std::vector<int64_t> perm = attrs_of<Prim::permutedims>(call.op.attrs).perm;
  const int r = out.rank();
  Scratch<8> xs(r), os(r), is(r);
  contiguous_strides(x.shape(), xs.data());
  contiguous_strides(out.shape(), os.data());
  for (int d = 0; d < r; ++d) is[d] = xs[perm[d] - 1];
  copy_strided(out.raw(), os.data(), x.raw(), is.data(), out.shape().data(), r,
               dtype_size(x.dtype()));
}

void broadcast_to_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  const int r = out.rank();
  Scratch<8> xs(r), os(r), is(r);
  contiguous_strides(x.shape(), xs.data());
  contiguous_strides(out.shape(), os.data());
  for (int d = 0; d < r; ++d) is[d] = x.dim(d + 1) == 1 ? 0 : xs[d];
  copy_strided(out.raw(), os.data(), x.raw(), is.data(), out.shape().data(), r,
               dtype_size(x.dtype()));
}

void slice_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  if (out.size() == 0) return;  // an empty range may start past the end
  const auto attrs = attrs_of<Prim::slice>(call.op.attrs);
  const std::vector<int64_t>& start = attrs.start;
  const std::vector<int64_t>& step = attrs.step;
  const int r = out.rank();
  Scratch<8> xs(r), os(r), is(r);
  contiguous_strides(x.shape(), xs.data());
  contiguous_strides(out.shape(), os.data());
  int64_t offset = 0;
  for (int d = 0; d < r; ++d) {
    offset += (start[d] - 1) * xs[d];
    is[d] = step[d] * xs[d];
  }
  const int elem = dtype_size(x.dtype());
  copy_strided(out.raw(), os.data(), static_cast<const char*>(x.raw()) + offset * elem, is.data(),
               out.shape().data(), r, elem);
}

// Each argument is copied into its block of the output, at its offset along dim.
void concat_kernel(const KernelCall& call) {
  Tensor& out = *call.outs[0];
  const int64_t dim = attrs_of<Prim::concat>(call.op.attrs).dim;
  const int r = out.rank();
  const int elem = dtype_size(out.dtype());
  Scratch<8> os(r), is(r);
  contiguous_strides(out.shape(), os.data());
  int64_t at = 0;
  for (const Tensor* x : call.args) {
    contiguous_strides(x->shape(), is.data());
    char* o = static_cast<char*>(out.raw()) + at * os[dim - 1] * elem;
    copy_strided(o, os.data(), x->raw(), is.data(), x->shape().data(), r, elem);
    at += x->dim(static_cast<int>(dim));
  }
}

// The bytes of `value` in the dtype of `t`.
void fill_value(Tensor& t, double value) {
  switch (t.dtype()) {
    case DType::f32:
      std::fill_n(t.data<float>(), t.size(), static_cast<float>(value));
      break;
    case DType::f64:
      std::fill_n(t.data<double>(), t.size(), value);
      break;
    case DType::i64:
      std::fill_n(t.data<int64_t>(), t.size(), static_cast<int64_t>(value));
      break;
    case DType::boolean:
      std::fill_n(t.data<bool>(), t.size(), value != 0);
      break;
    case DType::f16:
      std::fill_n(t.data<uint16_t>(), t.size(), f16_from_double(value));
      break;
  }
}

// The output is filled with the value, then x lands at lo, every (interior + 1)-th place.
void pad_kernel(const KernelCall& call) {
  const Tensor& x = *call.args[0];
  Tensor& out = *call.outs[0];
  const auto attrs = attrs_of<Prim::pad>(call.op.attrs);
  const std::vector<int64_t>& lo = attrs.lo;
  const std::vector<int64_t>& interior = attrs.interior;
  fill_value(out, attrs.value);
  if (x.size() == 0) return;
  const int r = out.rank();
  const int elem = dtype_size(x.dtype());
  Scratch<8> os(r), ws(r), is(r);
  contiguous_strides(out.shape(), os.data());
  contiguous_strides(x.shape(), is.data());
  int64_t offset = 0;
  for (int d = 0; d < r; ++d) {
    offset += lo[d] * os[d];
    ws[d] = (interior[d] + 1) * os[d];
  }
  copy_strided(static_cast<char*>(out.raw()) + offset * elem, ws.data(), x.raw(), is.data(),
               x.shape().data(), r, elem);
}

}  // namespace

void register_shape_kernels(KernelTable& t) {
  t.set(Prim::reshape, reshape_kernel);
  // The same bytes: where x is dead after it, the reshape takes x's buffer and copies nothing.
  t.allow_in_place(Prim::reshape);
  t.set(Prim::stop_gradient, reshape_kernel);  // the same bytes, as reshape
  t.allow_in_place(Prim::stop_gradient);
  t.set(Prim::permutedims, permutedims_kernel);
  t.set(Prim::broadcast_to, broadcast_to_kernel);
  t.set(Prim::slice, slice_kernel);
  t.set(Prim::concat, concat_kernel);
  t.set(Prim::pad, pad_kernel);
}

}  // namespace ytape
