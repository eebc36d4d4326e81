// The kernel interface: one kernel per primitive, registered per family from
// runtime/kernels/<family>.cc, with the same family names as tape/infer/.
#pragma once

#include <cstdint>
#include <functional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "runtime/layout.h"
#include "runtime/tensor.h"
#include "tape/prim.h"
#include "tape/tape.h"

namespace ytape {

struct ElementwiseProgram;
class Communicator;

/// Runs the regions of region ops (a scan's body, Op::regions): each planned once per
/// executor and run as often as the op asks, allocating nothing after its first runs.
class RegionRunner {
 public:
  /// Runs `region` (of an op of the tape being run) on `inputs`, its parameters in order,
  /// and assigns what it yields to `outputs`. The outputs stay valid until the run after
  /// next of the same region, as Executor::run's do.
  virtual void run_region(const Tape& region, std::span<const Tensor> inputs,
                          std::vector<Tensor>& outputs) = 0;

 protected:
  ~RegionRunner() = default;
};

/// What effect and region kernels need from the run.
struct RunContext {
  /// Receives each line `print` writes (without the newline).
  std::function<void(std::string_view)> print;
  /// The run's random key: `rand`/`randn` draw from their own `seed` attribute when it is
  /// 0, and from a stream derived from (key, seed) otherwise (docs/primitives.md).
  uint64_t random_key = 0;
  /// Runs region ops' regions; null outside an executor.
  RegionRunner* regions = nullptr;
  /// The group of a distributed run, which the comm ops talk to; null: a group of one.
  Communicator* comm = nullptr;
};

/// How a kernel runs a step: its standard way, or a faster one that needs more work memory
/// (oneDNN's Winograd convolutions). The executor takes the faster one where its work
/// memory fits in the plan without raising the peak (ExecutorOptions::extra_work_bytes).
enum class Variant : uint8_t { standard, faster };

/// Everything a kernel sees. `args` and `outs` have the types the tape records for the op
/// (the executor has checked them); `outs` are allocated and zero-filled is NOT promised:
/// a kernel writes every element of every output. Kernels throw UserError for data errors
/// (an index out of range) and never read or write out of bounds.
struct KernelCall {
  const Op& op;  ///< for attributes (complete, in schema order) and the primitive
  std::span<const Tensor* const> args;
  std::span<Tensor* const> outs;
  const RunContext* context = nullptr;  ///< for effects
  /// The layout of each argument, then of each output; null: all plain. Only kernels that
  /// allow blocked layouts (KernelTable::allow_blocked) ever see one.
  const Layout* layouts = nullptr;
  /// What a Fusion::elementwise step computes; null for every other kernel.
  const ElementwiseProgram* program = nullptr;
  /// The step's work memory, of `workspace_bytes` (at least what KernelTable::workspace
  /// asked for when the plan was made; 64-byte aligned, contents undefined), planned with
  /// the values' buffers; null when it asked for none or outside an executor.
  void* workspace = nullptr;
  int64_t workspace_bytes = 0;
  /// The way the plan chose to run the step (see Variant); standard outside an executor.
  Variant variant = Variant::standard;

  Layout arg_layout(size_t i) const { return layouts ? layouts[i] : Layout::plain; }
  Layout out_layout(size_t i) const { return layouts ? layouts[args.size() + i] : Layout::plain; }
};

using Kernel = void (*)(const KernelCall& call);
/// A row function of an elementwise op: for i in [0, n), out[i] = f(in[0][i * step[0]],
/// in[1][i * step[1]], ...), where each step is 0 (a broadcast operand) or 1. Typed code
/// lives in the row; the drivers (runtime/kernels/common.h) only move pointers.
using RowFn = void (*)(void* out, const void* const* in, const int64_t* step, int64_t n);
/// The name of the kernel that will run `op` of `t` with its arguments and outputs in
/// `layouts` (null: all plain) in `variant`, for `ytape plan`: "ytape" for ytape's own
/// kernels, or the library and its implementation ("oneDNN jit:avx512_core").
using KernelDescription = std::string (*)(const Tape& t, const Op& op, const Layout* layouts,
                                          Variant variant);
/// The bytes of work memory the kernel needs to run `op` of `t` with `layouts` in `variant`
/// (as for KernelDescription), or -1 where it has no such variant for the op (or it is not
/// faster there); the executor plans it like a value that lives for the step alone.
using WorkspaceSize = int64_t (*)(const Tape& t, const Op& op, const Layout* layouts,
                                  Variant variant);
std::string describe_own_kernel(const Tape& t, const Op& op, const Layout* layouts, Variant);

/// Which kernels a table holds. `fast` sends f32 dense math to oneDNN where it has an
/// implementation; `reference` holds ytape's own portable kernels only (im2col + OpenBLAS,
/// plain loops): the references that tests compare the fast kernels with, and a way to
/// rule a library out when results look wrong (`ytape run --kernels reference`).
enum class KernelSet { fast, reference };

/// How a kernel that reads blocked arguments lays out its output. `always`: blocked
/// whenever the output can be (a convolution reads and writes either layout in any mix).
/// `follow`: blocked when the blocked-readable arguments are, each either blocked with the
/// output's shape or a single element (or a per-channel vector, KernelTable::channel_args),
/// and otherwise plain, with every argument plain too:
/// such kernels (elementwise ops, batch norm) see one layout throughout, and elementwise
/// kernels need not know which. `same`: blocked when the first argument is, which is then
/// read in the output's layout: kernels that read and write one layout at other shapes
/// (pooling).
enum class BlockedOut : uint8_t { never, always, follow, same };

/// Groups of ops that the executor may run as one kernel (runtime/fusion.h says which ops
/// each takes and in what order the fused kernel sees their tensors). Each saves passes
/// over memory and gives the bits the ops give one by one.
enum class Fusion : uint8_t {
  batchnorm_relu,                ///< relu(batchnorm[_with_stats](x, ...)): the relu as it writes
  relu_mask_batchnorm_backward,  ///< batchnorm_backward(select(gt(z, 0), g, 0), ...)
  relu_backward,                 ///< select(gt(z, 0), g, 0): the mask is never stored
  add_relu,                      ///< relu(add(a, b)) of same-shape floats
  elementwise,                   ///< elementwise ops of one shape: an ElementwiseProgram
};
inline constexpr int kNumFusions = static_cast<int>(Fusion::elementwise) + 1;  // the last
/// The name `ytape plan` and `--profile` give a fused step, e.g. "batchnorm+relu".
std::string_view fusion_name(Fusion f);

/// What a Fusion::elementwise step computes: elementwise ops whose results have the shape
/// of the step's output, in tape order, each reading the step's arguments and the results
/// of the ops before it; the last op's result is the first output, and up to kMaxOutputs
/// more results that ops after the step read are written too. The arguments have that
/// shape, or one element, or, at most kMaxGathered of them, a shape that broadcasts to it
/// (a bias, a per-row statistic: kernels/elementwise_program.h). The kernel runs the ops a
/// block of elements at a time, so that the results between them stay in `slots` small
/// buffers in the cache instead of full tensors.
struct ElementwiseProgram {
  static constexpr int kMaxSlots = 8;
  /// Arguments a step can have: KernelTable::blocked_args has a bit for each.
  static constexpr size_t kMaxArgs = 32;
  /// Broadcast arguments a step can have, and the most dims of an output they broadcast to.
  static constexpr int kMaxGathered = 8;
  static constexpr int kMaxGatherRank = 8;
  /// Outputs of a step besides the last op's result.
  static constexpr int kMaxOutputs = 8;
  struct Operand {
    bool result;  ///< the result of instruction `index`; else the step's argument `index`
    uint32_t index;
  };
  struct Instruction {
    RowFn row;
    int num_args;
    Operand args[3];
    /// Where its result goes, a block at a time: a slot, or (-1 - k) the step's output k
    /// (-1 for the last op's, the first output).
    int slot;
  };
  std::vector<Instruction> instructions;
  int slots = 0;

  /// Whether output `out` may be written over argument `arg`'s buffer (of its size): no op
  /// reads the argument after the one that writes the output (each op reads element i of
  /// its operands before writing element i of its result). Always for the first output.
  bool may_write_over(size_t out, size_t arg) const {
    bool written = out == 0;
    for (const Instruction& ins : instructions) {
      for (int a = 0; written && a < ins.num_args; ++a) {
        if (!ins.args[a].result && ins.args[a].index == arg) return false;
      }
      written = written || ins.slot == -1 - static_cast<int>(out);
    }
    return true;
  }
};

/// Kernel table, filled by the family registration functions: one entry per primitive,
/// then one per Fusion. The setters take either.
struct KernelTable {
  static constexpr int kEntries = kNumPrims + kNumFusions;
  static int entry(Prim p) { return static_cast<int>(p); }
  static int entry(Fusion f) { return kNumPrims + static_cast<int>(f); }

  KernelSet kernels_set = KernelSet::fast;
  Kernel kernels[kEntries] = {};
  /// Whether the kernel may write its (first) output over an argument of the same shape
  /// and element size, i.e. reads element i of it before writing element i of the output
  /// and reads it nowhere else afterwards. True for elementwise primitives by default.
  bool in_place[kEntries] = {};

  /// The arguments (a bit each) the kernel reads in a blocked layout, and how its first
  /// output's layout is chosen (runtime/plan_layouts.cc, output_layout).
  uint32_t blocked_args[kEntries] = {};
  /// Whether the kernel of `entry` reads argument i blocked: never past the 32 that
  /// blocked_args has bits for (a concat of 100 values reads them all plain).
  bool reads_blocked(int entry, size_t i) const { return i < 32 && (blocked_args[entry] >> i & 1); }
  BlockedOut blocked_out[kEntries] = {};
  /// Whether a `follow` kernel writing a blocked image (W, H, C, N) may also read vectors
  /// of one value per channel, of shape (1, 1, C, 1), which it reads plain (a bias added to
  /// a convolution's output: the same bytes in either layout).
  bool channel_args[kEntries] = {};
  /// The kernel's name for a given op (default: describe_own_kernel).
  KernelDescription describe[kEntries];
  /// A second kernel for ops that finish later than they start (allreduce: its kernel
  /// issues the message, this one waits for it and writes the results), which the plan
  /// runs before the first step that reads a result (Plan::waits); it must not read the
  /// arguments, whose buffers may hold other values by then. Null for the rest.
  Kernel complete[kEntries] = {};
  /// The kernel's work memory for a given op; null: none.
  WorkspaceSize workspace[kEntries] = {};
  /// The row function of an elementwise primitive by the dtype of its last argument (the
  /// operands' dtype; select's values), for Fusion::elementwise; null where there is none.
  RowFn rows[kNumPrims][kNumDTypes] = {};

  explicit KernelTable(KernelSet set) : kernels_set(set) {
    for (Prim p : all_prims()) in_place[entry(p)] = prim_info(p).elementwise();
    for (KernelDescription& d : describe) d = describe_own_kernel;
  }

  template <typename Key>
  void set(Key k, Kernel kernel) {
    kernels[entry(k)] = kernel;
  }
  template <typename Key>
  void allow_in_place(Key k) {
    in_place[entry(k)] = true;
  }
  template <typename Key>
  void allow_channel_args(Key k) {
    channel_args[entry(k)] = true;
  }
  template <typename Key>
  void allow_blocked(Key k, uint32_t args, BlockedOut out) {
    blocked_args[entry(k)] = args;
    blocked_out[entry(k)] = out;
  }
};

/// The table of every registered kernel of `set` (built once).
const KernelTable& kernel_table(KernelSet set = KernelSet::fast);

/// One registration function per family (runtime/kernels/<family>.cc).
#define FAMILY(f) void register_##f##_kernels(KernelTable& t);
#include "tape/families.def"
#undef FAMILY

}  // namespace ytape
