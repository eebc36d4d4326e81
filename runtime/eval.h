// Evaluating one op on tensors, outside an executor's plan: constant folding, the
// tracer's eager values and example values, and the kernel tests run kernels through
// here. (The executor looks its kernels up once, when it plans, and calls them itself.)
#pragma once

#include <span>
#include <vector>

#include "runtime/executor.h"
#include "runtime/kernels/kernel.h"
#include "runtime/tensor.h"
#include "tape/tape.h"

namespace ytape {

/// How evaluate runs a kernel.
struct EvalOptions {
  KernelSet kernels = KernelSet::fast;
  /// For effects (print); null: printed lines are dropped.
  const RunContext* context = nullptr;
  /// The layout of each argument, then of each output, as the kernel sees them; null: all
  /// plain. Only kernels that allow blocked layouts may be given others (kernel.h).
  const Layout* layouts = nullptr;
  /// The way to run the kernel (its work memory comes from the calling thread's buffers).
  Variant variant = Variant::standard;
};

/// Runs the kernel of `op` (a call) on `args` into `outs`, both of the types its tape
/// records for them. Throws UserError when the primitive has no kernel in the set, and
/// whatever UserError the kernel raises for its data (an index out of range).
void evaluate_into(const Op& op, std::span<const Tensor* const> args, std::span<Tensor* const> outs,
                   const EvalOptions& options = {});

/// evaluate_into on new (uninitialized, then written) plain outputs, returned in order.
std::vector<Tensor> evaluate(const Tape& t, const Op& op, std::span<const Tensor* const> args,
                             const EvalOptions& options = {});

/// A primitive on tensors: records the op on a tape of its own (type inference checks
/// the arguments and attributes, UserError otherwise) and evaluates it.
std::vector<Tensor> evaluate(Prim p, std::span<const Tensor> args, const Attrs& attrs,
                             const EvalOptions& options = {});

}  // namespace ytape
