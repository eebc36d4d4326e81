// Memory layouts of the executor's intermediate values. Tapes and their inputs and outputs
// are always plain (column-major, images WHCN); inside a run, the executor may keep image
// activations channel-blocked between the kernels that read and write that layout
// (oneDNN's convolutions, batch norm, elementwise ops), so that no reorder is paid between
// them (runtime/executor.h says where the plan is made).
#pragma once

#include <cstdint>

#include "runtime/tensor.h"

namespace ytape {

enum class Layout : uint8_t {
  plain,  ///< column-major: element (w, h, c, n) at w + W*(h + H*(c + C*n))
  /// Channels in blocks of 16 innermost, oneDNN's nChw16c: element (w, h, c, n) at
  /// c%16 + 16*(w + W*(h + H*(c/16 + C/16*n))). Same size as plain (C is a multiple of 16).
  c16,
};

/// Channels per block of Layout::c16.
inline constexpr int64_t kChannelBlock = 16;

/// Whether values of `type` may be kept in Layout::c16: rank-4 images (W, H, C, N) of f32
/// or bool whose C is a positive multiple of 16.
bool blockable(const Type& type);

/// Copies `from` (of `from_layout`) into `to` (same type, of `to_layout`), element by
/// element; threaded for large tensors.
void relayout(const Tensor& from, Layout from_layout, Tensor& to, Layout to_layout);

}  // namespace ytape
