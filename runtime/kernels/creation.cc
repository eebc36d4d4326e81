// Kernels of the creation family: fill, iota, rand, randn. The random kernels are
// counter-based (see random_bits in common.h), so their results never depend on threads.
#include <algorithm>

#include "runtime/kernels/common.h"
#include "runtime/parallel.h"
#include "runtime/random.h"
#include "tape/float16.h"

namespace ytape {

namespace {

using namespace kernels;

template <typename T>
void fill_with(Tensor& out, T value) {
  std::fill_n(out.data<T>(), out.size(), value);
}

void fill_kernel(const KernelCall& call) {
  Tensor& out = *call.outs[0];
  double v = attrs_of<Prim::fill>(call.op.attrs).value;
  switch (out.dtype()) {
    case DType::f32:
      return fill_with(out, static_cast<float>(v));
    case DType::f64:
      return fill_with(out, v);
    case DType::i64:
      return fill_with(out, static_cast<int64_t>(v));
    case DType::boolean:
      return fill_with(out, v != 0);
    case DType::f16:
      return fill_with(out, f16_from_double(v));
  }
}

// A run of `pre` equal values per position along `dim`, repeated over the later dims.
template <typename T>
void iota_rows(Tensor& out, int64_t dim) {
  T* o = out.data<T>();
  int64_t pre = 1;
  for (int d = 1; d < dim; ++d) pre *= out.dim(d);
  const int64_t size = out.dim(static_cast<int>(dim));
  const int64_t rows = pre == 0 ? 0 : out.size() / pre;
  auto run = [&](int64_t r0, int64_t r1) {
    for (int64_t r = r0; r < r1; ++r) std::fill_n(o + r * pre, pre, static_cast<T>(r % size + 1));
  };
  if (out.size() < kGrain) return run(0, rows);
  parallel_for(rows, std::max<int64_t>(1, kGrain / pre), run);
}

void iota_kernel(const KernelCall& call) {
  Tensor& out = *call.outs[0];
  int64_t dim = attrs_of<Prim::iota>(call.op.attrs).dim;
  switch (DType d = out.dtype()) {
    case DType::f32:
      return iota_rows<float>(out, dim);
    case DType::f64:
      return iota_rows<double>(out, dim);
    case DType::i64:
      return iota_rows<int64_t>(out, dim);
    default:
      internal_error("iota has no kernel for {}", dtype_name(d));
  }
}

// Draws elements [b, e), per instruction set: the draws are integer arithmetic and exact
// conversions (uniform_f32's vectorizes: ResNet-18's 11.7 M example weights take 7.8 ms
// instead of 13 on one core), so every variant gives the same bits.
template <typename T, T (*draw)(uint64_t, uint64_t)>
YTAPE_ROW_TARGETS void draw_range(T* o, uint64_t seed, int64_t b, int64_t e) {
  for (int64_t i = b; i < e; ++i) o[i] = draw(seed, static_cast<uint64_t>(i));
}

// Fills out[i] = draw(seed, i) for every element, split across threads when large; `range`
// draws elements [b, e).
template <typename T, void (*range)(T*, uint64_t, int64_t, int64_t)>
void draw_all(Tensor& out, uint64_t seed) {
  T* o = out.data<T>();
  auto run = [&](int64_t b, int64_t e) { range(o, seed, b, e); };
  if (out.size() < kGrain) return run(0, out.size());
  parallel_for(out.size(), kGrain, run);
}

float normal_f32(uint64_t seed, uint64_t i) {
  return static_cast<float>(normal_f64(seed, i));
}

template <Prim P>
void random_kernel(const KernelCall& call) {
  Tensor& out = *call.outs[0];
  auto seed = static_cast<uint64_t>(attrs_of<P>(call.op.attrs).seed);
  // Key 0 keeps the op's own stream, which is what the tracer's top level draws eagerly.
  if (call.context != nullptr && call.context->random_key != 0) {
    seed = random_bits(call.context->random_key, seed);
  }
  constexpr bool normal = P == Prim::randn;
  switch (DType d = out.dtype()) {
    case DType::f32:
      return normal ? draw_all<float, draw_range<float, normal_f32>>(out, seed)
                    : draw_all<float, draw_range<float, uniform_f32>>(out, seed);
    case DType::f64:
      return normal ? draw_all<double, draw_range<double, normal_f64>>(out, seed)
                    : draw_all<double, draw_range<double, uniform_f64>>(out, seed);
    default:
      internal_error("{} has no kernel for {}", prim_name(call.op.prim), dtype_name(d));
  }
}

}  // namespace

void register_creation_kernels(KernelTable& t) {
  t.set(Prim::fill, fill_kernel);
  t.set(Prim::iota, iota_kernel);
  t.set(Prim::rand, random_kernel<Prim::rand>);
  t.set(Prim::randn, random_kernel<Prim::randn>);
}

}  // namespace ytape
