#include "runtime/layout.h"

#include <cstring>

#include "runtime/parallel.h"

namespace ytape {

bool blockable(const Type& type) {
  return type.rank() == 4 && (type.dtype == DType::f32 || type.dtype == DType::boolean) &&
         type.shape[2] > 0 && type.shape[2] % kChannelBlock == 0;
}

namespace {

// One (channel block, image) at a time: 16 planes of the plain layout are interleaved into
// (or out of) one contiguous block. E is an unsigned integer of the element's size.
template <typename E>
void transpose_blocks(const E* from, E* to, int64_t plane, int64_t blocks, bool to_blocked) {
  parallel_for(blocks, 1 + 16384 / (plane * kChannelBlock + 1), [&](int64_t begin, int64_t end) {
    for (int64_t b = begin; b < end; ++b) {
      const E* src = from + b * plane * kChannelBlock;
      E* dst = to + b * plane * kChannelBlock;
      for (int64_t p = 0; p < plane; ++p) {
        for (int64_t l = 0; l < kChannelBlock; ++l) {
          if (to_blocked) {
            dst[p * kChannelBlock + l] = src[l * plane + p];
          } else {
            dst[l * plane + p] = src[p * kChannelBlock + l];
          }
        }
      }
    }
  });
}

}  // namespace

void relayout(const Tensor& from, Layout from_layout, Tensor& to, Layout to_layout) {
  if (from.type() != to.type()) internal_error("relayout between different types");
  if (from_layout == to_layout) {
    std::memcpy(to.raw(), from.raw(), static_cast<size_t>(from.bytes()));
    return;
  }
  if (!blockable(from.type())) internal_error("relayout of {}", type_str(from.type()));
  // Within one image the channel blocks follow each other, and the images too: a plain
  // image is C/16 runs of 16 planes, so every (block, image) pair is one transpose.
  int64_t plane = from.dim(1) * from.dim(2);
  int64_t blocks = from.dim(3) / kChannelBlock * from.dim(4);
  bool to_blocked = to_layout == Layout::c16;
  if (dtype_size(from.dtype()) == 4) {
    transpose_blocks(static_cast<const uint32_t*>(from.raw()), static_cast<uint32_t*>(to.raw()),
                     plane, blocks, to_blocked);
  } else {
    transpose_blocks(static_cast<const uint8_t*>(from.raw()), static_cast<uint8_t*>(to.raw()),
                     plane, blocks, to_blocked);
  }
}

}  // namespace ytape
