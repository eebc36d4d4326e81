// The kernel interface: one kernel per primitive, registered per family from
// runtime/kernels/<family>.cc, with the same family names as tape/shapes/.
#pragma once

#include <span>
#include <string>

#include "runtime/layout.h"
#include "runtime/tensor.h"
#include "tape/prim.h"
#include "tape/tape.h"

namespace ytape {

struct RunContext;

/// Everything a kernel sees. `args` and `outs` have the types the tape records for the op
/// (the executor has checked them); `outs` are allocated and zero-filled is NOT promised:
/// a kernel writes every element of every output. Kernels throw UserError for data errors
/// (an index out of range) and never read or write out of bounds.
struct KernelCall {
  const Op& op;  ///< for attributes (complete, in schema order) and the primitive
  std::span<const Tensor* const> args;
  std::span<Tensor* const> outs;
  const RunContext* context = nullptr;  ///< for effects; see runtime/executor.h
  /// The layout of each argument, then of each output; null: all plain. Only kernels that
  /// allow blocked layouts (KernelTable::allow_blocked) ever see one.
  const Layout* layouts = nullptr;

  Layout arg_layout(size_t i) const { return layouts ? layouts[i] : Layout::plain; }
  Layout out_layout(size_t i) const { return layouts ? layouts[args.size() + i] : Layout::plain; }
};

using Kernel = void (*)(const KernelCall& call);
/// The name of the kernel that will run `op` of `t` with its arguments and outputs in
/// `layouts` (null: all plain), for `ytape plan`: "ytape" for ytape's own kernels, or the
/// library and its implementation ("oneDNN jit:avx512_core").
using KernelDescription = std::string (*)(const Tape& t, const Op& op, const Layout* layouts);
std::string describe_own_kernel(const Tape& t, const Op& op, const Layout* layouts);

/// Which kernels a table holds. `fast` sends f32 dense math to oneDNN where it has an
/// implementation; `reference` holds ytape's own portable kernels only (im2col + OpenBLAS,
/// plain loops): the references that tests compare the fast kernels with, and a way to
/// rule a library out when results look wrong (`ytape run --kernels reference`).
enum class KernelSet { fast, reference };

/// How a kernel that reads blocked arguments lays out its output. `always`: blocked
/// whenever the output can be (a convolution reads and writes either layout in any mix).
/// `follow`: blocked when the blocked-readable arguments are, each either blocked with the
/// output's shape or a single element, and otherwise plain, with every argument plain too:
/// such kernels (elementwise ops, batch norm) see one layout throughout, and elementwise
/// kernels need not know which.
enum class BlockedOut : uint8_t { never, always, follow };

/// Per-primitive kernel table, filled by the family registration functions.
struct KernelTable {
  KernelSet kernels_set = KernelSet::fast;
  Kernel kernels[kNumPrims] = {};
  /// Whether the kernel may write its (single) output over an argument of the same shape
  /// and element size, i.e. reads element i of it before writing element i of the output
  /// and reads it nowhere else afterwards. True for elementwise primitives by default.
  bool in_place[kNumPrims] = {};

  /// Per primitive, the arguments (a bit each) the kernel reads in Layout::c16, and how its
  /// first output's layout is chosen (runtime/executor.cc, output_layout).
  uint32_t blocked_args[kNumPrims] = {};
  BlockedOut blocked_out[kNumPrims] = {};
  /// Per primitive, the kernel's name for a given op (default: describe_own_kernel).
  KernelDescription describe[kNumPrims];

  explicit KernelTable(KernelSet set) : kernels_set(set) {
    for (Prim p : all_prims()) in_place[static_cast<int>(p)] = prim_info(p).elementwise();
    for (KernelDescription& d : describe) d = describe_own_kernel;
  }

  void set(Prim p, Kernel k) { kernels[static_cast<int>(p)] = k; }
  void allow_in_place(Prim p) { in_place[static_cast<int>(p)] = true; }
  void allow_blocked(Prim p, uint32_t args, BlockedOut out) {
    blocked_args[static_cast<int>(p)] = args;
    blocked_out[static_cast<int>(p)] = out;
  }
};

/// The table of every registered kernel of `set` (built once).
const KernelTable& kernel_table(KernelSet set = KernelSet::fast);

void register_elementwise_kernels(KernelTable& t);
void register_reduce_kernels(KernelTable& t);
void register_shape_kernels(KernelTable& t);
void register_index_kernels(KernelTable& t);
void register_linalg_kernels(KernelTable& t);
void register_conv_kernels(KernelTable& t);
void register_pool_kernels(KernelTable& t);
void register_norm_kernels(KernelTable& t);
void register_creation_kernels(KernelTable& t);
void register_effect_kernels(KernelTable& t);

}  // namespace ytape
