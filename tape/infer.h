// Type and shape inference: one rule per primitive, registered per family from
// tape/infer/<family>.cc.
#pragma once

#include <span>
#include <string>
#include <vector>

#include "tape/attrs.h"
#include "tape/dtype.h"
#include "tape/prim.h"
#include "tape/tape.h"

namespace ytape {

/// Output types of `p` applied to arguments of types `args` with attributes `attrs`.
/// Preconditions: the number of arguments matches the arity, `attrs` is normalized
/// (complete, in schema order). Throws UserError saying what is wrong (bad dtype, shapes
/// that do not agree, an attribute out of range) without naming the op: the caller adds
/// that context.
/// A region op's types follow from its regions too (`regions`, Op::regions); they are
/// checked against its arguments.
std::vector<Type> infer_types(Prim p, std::span<const Type> args, const Attrs& attrs,
                              std::span<const Tape> regions = {});

/// The name a cond's region k (0-based) must have on a selector of `selector`'s dtype:
/// then and else for bool, case1..caseN for i64 (docs/regions.md).
std::string cond_branch_name(DType selector, size_t k);

/// True if `p` has an inference rule (tests check that every primitive has one).
bool has_infer_rule(Prim p);

using InferRule = std::vector<Type> (*)(Prim p, std::span<const Type> args, const Attrs& attrs);
/// The rule of a region op, which reads its regions as well.
using RegionInferRule = std::vector<Type> (*)(Prim p, std::span<const Type> args,
                                              const Attrs& attrs, std::span<const Tape> regions);

/// Per-primitive table of inference rules, filled by the family registration functions.
struct InferTable {
  InferRule rules[kNumPrims] = {};
  RegionInferRule region_rules[kNumPrims] = {};
  void set(Prim p, InferRule rule) { rules[static_cast<int>(p)] = rule; }
  void set(Prim p, RegionInferRule rule) { region_rules[static_cast<int>(p)] = rule; }
};

// One registration function per family (tape/infer/<family>.cc).
#define FAMILY(f) void register_##f##_infer(InferTable& t);
#include "tape/families.def"
#undef FAMILY

}  // namespace ytape
