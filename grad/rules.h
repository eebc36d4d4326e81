// Vector-Jacobian product rules, one per differentiable primitive, registered per family
// (grad/rules/<family>.cc, the same family names as tape/infer/ and runtime/kernels/).
#pragma once

#include <array>
#include <optional>
#include <span>
#include <vector>

#include "tape/builder.h"
#include "tape/prim.h"

namespace ytape::grad {

/// A cotangent: a var of the new tape, or nothing for a symbolic zero.
using Cotangent = std::optional<Var>;

/// What a rule sees of one forward op. Vars are those of the tape being built.
struct RuleArgs {
  const Op& op;                     ///< the op being differentiated (its prim and attributes)
  std::span<const Var> args;        ///< its arguments
  std::span<const Var> outs;        ///< its outputs (those of its variant, if it has one)
  std::span<const Cotangent> cots;  ///< one cotangent per output; at least one is set
  const std::vector<bool>& need;    ///< per argument: whether its cotangent is wanted
  bool remat = false;               ///< a scan's forward kept its carries (GradOptions::remat)
};

/// Returns one cotangent per argument, each either of the argument's type or of a shape
/// the argument broadcasts to (the driver sums the broadcast dims away). Cotangents of
/// arguments not in `need` are ignored, so a rule need not compute them.
using VjpRule = std::vector<Cotangent> (*)(Builder& b, const RuleArgs& r);

/// The rules of every primitive. A plain primitive with a multi-output variant
/// (variant_of, tape/ops.def) has none of its own: the forward op is emitted as the
/// variant, whose rule reads what it saves.
struct RuleTable {
  std::array<VjpRule, kNumPrims> vjp{};

  void set(Prim p, VjpRule rule) { vjp[static_cast<size_t>(p)] = rule; }
  VjpRule rule(Prim p) const { return vjp[static_cast<size_t>(p)]; }
};

/// The table, filled on first use by the register_* calls below.
const RuleTable& rules();

/// Throws UserError naming the op when `op` (of `t`), which a derivative flows through, is
/// a comm op (allreduce, shard, allgather): a distributed tape is differentiated before
/// `distribute`, never after (grad/rules/comm.cc).
void refuse_comm(const Tape& t, const Op& op);

/// One registration function per family (grad/rules/<family>.cc).
#define FAMILY(f) void register_##f##_rules(RuleTable& t);
#include "tape/families.def"
#undef FAMILY

// Helpers shared by the rules.

/// A rank-0 constant of `like`'s dtype; broadcasting makes it any shape.
Var scalar(Builder& b, Var like, double value);
/// Zeros of `type` (a `fill`).
Var zeros(Builder& b, const Type& type);
/// `x` (the result of reducing `dims` of a tensor of `shape`) reshaped to keep those dims
/// as size 1, so that it broadcasts against the unreduced tensor.
Var keep_dims(Builder& b, Var x, const Shape& shape, std::span<const int64_t> dims);

/// The VJP of an op defined by an expansion into other primitives: `expand` builds the
/// op's outputs from its arguments on a builder; the expansion is replayed on `b` and
/// differentiated there. For rules whose math is easiest written as a forward formula.
using Expansion = std::vector<Var> (*)(Builder& b, const Op& op, std::span<const Var> x);
std::vector<Cotangent> vjp_by_expansion(Builder& b, const RuleArgs& r, Expansion expand);

/// A scan as the gradient emits it forward under GradOptions::remat (grad/rules/control.cc):
/// `op` on `args`, its body also giving back the carries it was given, so that the results
/// end with the carries before each step, stacked, which the scan's rule reads.
VarList scan_keeping_carries(Builder& b, const Op& op, const VarList& args);
/// A scan as the gradient emits it forward by default: its body also gives back the
/// values of each step that its VJP reads (its residuals), so that the results end with
/// them, stacked, and the backward scan recomputes nothing.
VarList scan_keeping_residuals(Builder& b, const Op& op, const VarList& args);
/// A while_loop as the gradient emits it forward: a scan of max_trips steps that keeps
/// each trip's values (its residuals, or its carries under `remat`) and whether the loop
/// still ran, then a guard that the loop stopped within max_trips. Its results begin with
/// the loop's; the while_loop's rule reads the rest. Throws UserError where max_trips is 0.
VarList while_keeping_steps(Builder& b, const Op& op, const VarList& args, bool remat);
/// Registers cond's and while_loop's rules (grad/rules/control_while.cc).
void register_branch_rules(RuleTable& t);

}  // namespace ytape::grad
