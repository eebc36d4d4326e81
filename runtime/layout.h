// Memory layouts of the executor's intermediate values. Tapes and their inputs and outputs
// are always plain (column-major, images WHCN); inside a run, the executor may keep image
// activations channel-blocked between the kernels that read and write that layout
// (oneDNN's convolutions, batch norm, elementwise ops), so that no reorder is paid between
// them (runtime/plan_layouts.h says where the plan chooses them).
#pragma once

#include <cstdint>

#include "runtime/tensor.h"

namespace ytape {

enum class Layout : uint8_t {
  plain,  ///< column-major: element (w, h, c, n) at w + W*(h + H*(c + C*n))
  /// Channels in blocks of B = 8 (c8, oneDNN's nChw8c) or 16 (c16, nChw16c) innermost:
  /// element (w, h, c, n) at c%B + B*(w + W*(h + H*(c/B + C/B*n))). Same size as plain (C
  /// is a multiple of B).
  c8,
  c16,
};

/// Channels per block of a blocked layout: 8 or 16; 1 for plain.
inline constexpr int64_t block_of(Layout l) {
  return l == Layout::c8 ? 8 : l == Layout::c16 ? 16 : 1;
}
inline constexpr bool is_blocked(Layout l) {
  return l != Layout::plain;
}

/// The blocked layout of this machine's oneDNN convolutions: c16 where they run AVX-512,
/// c8 on AVX2 (asked of oneDNN once), so that activations kept blocked between them are
/// never reordered for them.
Layout native_blocked_layout();

/// Whether values of `type` may be kept in `blocked`: rank-4 images (W, H, C, N) of f32 or
/// bool whose C is a positive multiple of its block.
bool blockable(const Type& type, Layout blocked);

/// Copies `from` (of `from_layout`) into `to` (same type, of `to_layout`), element by
/// element; threaded for large tensors.
void relayout(const Tensor& from, Layout from_layout, Tensor& to, Layout to_layout);

}  // namespace ytape
