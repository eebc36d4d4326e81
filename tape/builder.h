// Builds tapes op by op, inferring types; every transformation uses it to build its result
// in one pass, with a VarMap from the old tape's vars to the new ones.
#pragma once

#include <memory>
#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tape/allocator.h"
#include "tape/op_attrs.h"
#include "tape/tape.h"

namespace ytape {

/// Appends ops to a new tape. Every call infers and records its output types, so a tape
/// built here is valid by construction; a bad shape or attribute throws UserError naming
/// the primitive and the current source location.
class Builder {
 public:
  explicit Builder(std::string name = "");
  /// A builder whose tape starts with the name, metadata, files and scopes of `t` (no ops),
  /// so that locations of ops copied from `t` stay meaningful.
  static Builder like(const Tape& t);

  /// Reserves room for `ops` ops and `vars` vars: spares the copies of a growing tape
  /// when the size is known or can be estimated.
  void reserve(size_t ops, size_t vars);

  /// Declares a named input. Inputs must come before all other ops, with unique names.
  Var input(std::string name, Type type);
  /// An input declared after other ops, which input() refuses: for a tape that is never
  /// finished as it is but inlined into another by binding its inputs (a trace nested in
  /// a trace, for `gradient` in the model language, captures the outer trace's values so).
  Var capture(std::string name, Type type);
  /// An inline constant; `bytes` holds the elements column-major in native layout.
  Var constant(Type type, RareBytes bytes);
  /// A constant tensor of `shape` with every element `value` (converted to `dtype`).
  Var constant(DType dtype, double value, Shape shape = {});
  /// Applies a primitive and returns its outputs.
  std::vector<Var> call(Prim p, VarList args, const Attrs& attrs = {});
  /// Applies a primitive that has exactly one output.
  Var call1(Prim p, VarList args, const Attrs& attrs = {});
  /// Applies a primitive like `call` and returns the op it appended (its outputs are
  /// `outs`), without copying them out; the reference is valid until the next op is added.
  const Op& record(Prim p, VarList args, const Attrs& attrs = {});
  /// `record` of a region op (Prim::scan), which takes its regions (Op::regions).
  const Op& record(Prim p, VarList args, const Attrs& attrs, RareVector<Tape> regions);
  /// scan (docs/regions.md): `body` run `length` times on (consts, carries, the slice t of
  /// each xs on its last dim), yielding (carries', y_t); returns the final carries, then
  /// the ys stacked on a new last dim.
  std::vector<Var> scan(const VarList& consts, const VarList& carries, const VarList& xs, Tape body,
                        int64_t length, bool reverse = false);
  /// cond (docs/regions.md): branch k of `branches` run on `operands`, k chosen by
  /// `selector` (bool[]: then, else; i64[]: 1..N); names the branches; returns its results.
  std::vector<Var> cond(Var selector, const VarList& operands, std::vector<Tape> branches);
  /// while_loop (docs/regions.md): `body` run on (consts, carries) while `cond` yields true
  /// on them; names the regions; returns the final carries. max_trips 0: unbounded.
  std::vector<Var> while_loop(const VarList& consts, const VarList& carries, Tape cond, Tape body,
                              int64_t max_trips);
  /// Marks `v` as an output of the tape.
  void output(Var v, std::string name);

  /// Source location given to the ops created from now on.
  void set_loc(Loc loc) { loc_ = loc; }
  Loc loc() const { return loc_; }
  /// The file index of `path` in this tape's file table, adding it if new.
  uint32_t intern_file(std::string_view path);
  /// The index of `scope` in this tape's scope table (Loc::scope), adding it if new.
  uint32_t intern_scope(const Scope& scope);
  void add_meta(std::string key, std::string value);

  const Type& type(Var v) const { return tape_.types[v.id]; }
  const Tape& tape() const { return tape_; }
  /// Finishes and returns the tape; the builder is empty afterwards.
  Tape finish();

  // Shorthands, one per primitive, generated from ops.def, so that code over the builder
  // reads like math: b.add(x, y), b.sum(x, {.dims = {1}}), b.concat({x, y}, {.dim = 2}).
  // A primitive with one output returns it; the others return all of theirs.
#define YTAPE_RESULT_0 std::vector<Var>
#define YTAPE_RESULT_1 Var
#define YTAPE_RESULT_2 std::vector<Var>
#define YTAPE_RESULT_3 std::vector<Var>
#define YTAPE_RESULT_VARIADIC std::vector<Var>
#define YTAPE_CALL_0 call
#define YTAPE_CALL_1 call1
#define YTAPE_CALL_2 call
#define YTAPE_CALL_3 call
#define YTAPE_CALL_VARIADIC call
#define YTAPE_SHORTHAND_0(p, n)                            \
  YTAPE_RESULT_##n p(const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {}, attrs.to_attrs());  \
  }
#define YTAPE_SHORTHAND_1(p, n)                                   \
  YTAPE_RESULT_##n p(Var x, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {x}, attrs.to_attrs());        \
  }
#define YTAPE_SHORTHAND_2(p, n)                                          \
  YTAPE_RESULT_##n p(Var x, Var y, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {x, y}, attrs.to_attrs());            \
  }
#define YTAPE_SHORTHAND_3(p, n)                                                 \
  YTAPE_RESULT_##n p(Var x, Var y, Var z, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {x, y, z}, attrs.to_attrs());                \
  }
#define YTAPE_SHORTHAND_4(p, n)                                                            \
  YTAPE_RESULT_##n p(Var x1, Var x2, Var x3, Var x4, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {x1, x2, x3, x4}, attrs.to_attrs());                    \
  }
#define YTAPE_SHORTHAND_7(p, n)                                                     \
  YTAPE_RESULT_##n p(Var x1, Var x2, Var x3, Var x4, Var x5, Var x6, Var x7,        \
                     const AttrsOf<Prim::p>& attrs = {}) {                          \
    return YTAPE_CALL_##n(Prim::p, {x1, x2, x3, x4, x5, x6, x7}, attrs.to_attrs()); \
  }
#define YTAPE_SHORTHAND_5(p, n)                                                                    \
  YTAPE_RESULT_##n p(Var x1, Var x2, Var x3, Var x4, Var x5, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, {x1, x2, x3, x4, x5}, attrs.to_attrs());                        \
  }
#define YTAPE_SHORTHAND_VARIADIC(p, n)                                 \
  YTAPE_RESULT_##n p(VarList xs, const AttrsOf<Prim::p>& attrs = {}) { \
    return YTAPE_CALL_##n(Prim::p, std::move(xs), attrs.to_attrs());   \
  }
#define X_REGION(...)  // written out above
#define X(prim, family, arity, outputs, flags, dtypes, cost, attributes) \
  YTAPE_SHORTHAND_##arity(prim, outputs)
#include "tape/ops.def"
#undef X
#undef YTAPE_SHORTHAND_0
#undef YTAPE_SHORTHAND_1
#undef YTAPE_SHORTHAND_2
#undef YTAPE_SHORTHAND_3
#undef YTAPE_SHORTHAND_4
#undef YTAPE_SHORTHAND_5
#undef YTAPE_SHORTHAND_7
#undef YTAPE_SHORTHAND_VARIADIC
#undef YTAPE_RESULT_0
#undef YTAPE_RESULT_1
#undef YTAPE_RESULT_2
#undef YTAPE_RESULT_3
#undef YTAPE_RESULT_VARIADIC
#undef YTAPE_CALL_0
#undef YTAPE_CALL_1
#undef YTAPE_CALL_2
#undef YTAPE_CALL_3
#undef YTAPE_CALL_VARIADIC

 private:
  [[noreturn]] void fail(Prim p, const std::string& why) const;
  // Appends an input or constant op with its one output of `type`; the caller fills in
  // its name or value.
  Op& append_leaf(OpKind kind, Type type);
  // Appends an empty op and room for `outs` more vars.
  Op& append_op(size_t outs);
  // Tells the page warmer how far the tape's buffers are written; starts it for a big tape.
  void warm();
  // The output types of `p` on `args` with normalized `attrs`; valid until the next call.
  const std::vector<Type>& infer(Prim p, const VarList& args, const Attrs& attrs,
                                 std::span<const Tape> regions);

  // The last inference of each primitive on numbers (rank-0 arguments of these dtypes,
  // no attributes): long scalar programs ask the same few questions again and again.
  struct ScalarInference {
    int arity = -1;  // -1: none yet
    DType dtypes[3] = {};
    std::vector<Type> outs;
  };

  Tape tape_;
  Loc loc_;
  uint32_t next_var_ = 0;
  size_t next_input_ = 0;  // inputs declared so far; they must be the first ops
  std::unordered_map<std::string, uint32_t> file_index_;
  std::unordered_map<std::string, uint32_t> scope_index_;  // by scope_key
  std::unordered_set<std::string> input_names_;
  std::vector<ScalarInference> scalar_inferences_;  // by primitive, once used
  std::vector<Type> inferred_;                      // the latest other inference
  std::unique_ptr<PageWarmer> warmer_;              // for a big tape only
};

/// Old var -> new var, indexed by the old var's id.
class VarMap {
 public:
  explicit VarMap(const Tape& old) : map_(old.types.size(), kUnset) {}
  void set(Var old, Var now) { map_[old.id] = now.id; }
  bool has(Var old) const { return map_[old.id] != kUnset; }
  Var operator[](Var old) const { return Var{map_[old.id]}; }
  VarList map(const VarList& olds) const;

 private:
  static constexpr uint32_t kUnset = ~uint32_t{0};
  std::vector<uint32_t> map_;
};

/// Appends a copy of `op` (an op of `src`) to `b`, reading its arguments through `map`
/// and recording its outputs there. The location is kept.
void copy_op(Builder& b, const Tape& src, const Op& op, VarMap& map);

/// A region's tape (docs/regions.md) from a tape recorded with its parameters among its ops
/// (inputs, or Builder::capture's): `params` (vars of `nested`, with their names) become
/// its inputs, in that order, then every op of `nested` but its inputs, yielding `yields`;
/// without files (its locations name the tape around it). Every input of `nested` that an
/// op reads must be among `params`.
Tape region_tape(const Tape& nested, const std::vector<std::pair<Var, std::string>>& params,
                 const std::vector<Var>& yields);

/// Copies the ops of region `r` onto `b`, its parameters bound to `args` (vars of `b`, one
/// per parameter); returns the vars of `b` for what it yields: the region written inline.
std::vector<Var> inline_region(Builder& b, const Tape& r, std::span<const Var> args);

/// Rebuilds `t` through the builder: the identity transformation, re-inferring every type.
Tape copy_tape(const Tape& t);

}  // namespace ytape
