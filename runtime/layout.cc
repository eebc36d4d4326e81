#include "runtime/layout.h"

#include <cstring>

#include "runtime/kernels/onednn.h"
#include "runtime/parallel.h"

namespace ytape {

bool blockable(const Type& type, Layout blocked) {
  return is_blocked(blocked) && type.rank() == 4 &&
         (type.dtype == DType::f32 || type.dtype == DType::boolean) && type.shape[2] > 0 &&
         type.shape[2] % block_of(blocked) == 0;
}

Layout native_blocked_layout() {
  static const Layout native = onednn::preferred_image_layout();
  return native;
}

namespace {

// One (channel block, image) at a time: B planes of the plain layout are interleaved into
// (or out of) one contiguous block. E is an unsigned integer of the element's size.
template <int64_t B, typename E>
void transpose_blocks(const E* from, E* to, int64_t plane, int64_t blocks, bool to_blocked) {
  parallel_for(blocks, 1 + 16384 / (plane * B + 1), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const E* src = from + b * plane * B;
      E* dst = to + b * plane * B;
      for (int64_t p = 0; p < plane; ++p) {
        for (int64_t l = 0; l < B; ++l) {
          if (to_blocked) {
            dst[p * B + l] = src[l * plane + p];
          } else {
            dst[l * plane + p] = src[p * B + l];
          }
        }
      }
    }
  });
}

template <typename E>
void transpose_blocks(int64_t block, const void* from, void* to, int64_t plane, int64_t blocks,
                      bool to_blocked) {
  auto* src = static_cast<const E*>(from);
  auto* dst = static_cast<E*>(to);
  if (block == 8) return transpose_blocks<8>(src, dst, plane, blocks, to_blocked);
  transpose_blocks<16>(src, dst, plane, blocks, to_blocked);
}

}  // namespace

void relayout(const Tensor& from, Layout from_layout, Tensor& to, Layout to_layout) {
  if (from.type() != to.type()) internal_error("relayout between different types");
  if (from_layout == to_layout) {
    std::memcpy(to.raw(), from.raw(), static_cast<size_t>(from.bytes()));
    return;
  }
  if (is_blocked(from_layout) && is_blocked(to_layout)) {  // c8 <-> c16, through plain
    Tensor plain(from.type());
    relayout(from, from_layout, plain, Layout::plain);
    relayout(plain, Layout::plain, to, to_layout);
    return;
  }
  Layout blocked = is_blocked(to_layout) ? to_layout : from_layout;
  if (!blockable(from.type(), blocked)) internal_error("relayout of {}", type_str(from.type()));
  // Within one image the channel blocks follow each other, and the images too: a plain
  // image is C/B runs of B planes, so every (block, image) pair is one transpose.
  int64_t block = block_of(blocked);
  int64_t plane = from.dim(1) * from.dim(2);
  int64_t blocks = from.dim(3) / block * from.dim(4);
  bool to_blocked = is_blocked(to_layout);
  if (dtype_size(from.dtype()) == 4) {
    transpose_blocks<uint32_t>(block, from.raw(), to.raw(), plane, blocks, to_blocked);
  } else {
    transpose_blocks<uint8_t>(block, from.raw(), to.raw(), plane, blocks, to_blocked);
  }
}

}  // namespace ytape
