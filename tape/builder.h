// Builds tapes op by op, inferring types; every transformation uses it to build its result
// in one pass, with a VarMap from the old tape's vars to the new ones.
#pragma once

#include <span>
#include <string>
#include <string_view>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "tape/tape.h"

namespace ytape {

/// Appends ops to a new tape. Every call infers and records its output types, so a tape
/// built here is valid by construction; a bad shape or attribute throws UserError naming
/// the primitive and the current source location.
class Builder {
 public:
  explicit Builder(std::string name = "");
  /// A builder whose tape starts with the name, metadata and files of `t` (no ops), so
  /// that locations of ops copied from `t` stay meaningful.
  static Builder like(const Tape& t);

  /// Reserves room for `ops` ops and `vars` vars: spares the copies of a growing tape
  /// when the size is known or can be estimated.
  void reserve(size_t ops, size_t vars);

  /// Declares a named input. Inputs must come before all other ops, with unique names.
  Var input(std::string name, Type type);
  /// An inline constant; `bytes` holds the elements column-major in native layout.
  Var constant(Type type, std::vector<uint8_t> bytes);
  /// A constant tensor of `shape` with every element `value` (converted to `dtype`).
  Var constant(DType dtype, double value, Shape shape = {});
  /// Applies a primitive and returns its outputs.
  std::vector<Var> call(Prim p, VarList args, const Attrs& attrs = {});
  /// Applies a primitive that has exactly one output.
  Var call1(Prim p, VarList args, const Attrs& attrs = {});
  /// Applies a primitive like `call` and returns the op it appended (its outputs are
  /// `outs`), without copying them out; the reference is valid until the next op is added.
  const Op& record(Prim p, VarList args, const Attrs& attrs = {});
  /// Marks `v` as an output of the tape.
  void output(Var v, std::string name);

  /// Source location given to the ops created from now on.
  void set_loc(Loc loc) { loc_ = loc; }
  Loc loc() const { return loc_; }
  /// The file index of `path` in this tape's file table, adding it if new.
  uint32_t intern_file(std::string_view path);
  void add_meta(std::string key, std::string value);

  const Type& type(Var v) const { return tape_.types[v.id]; }
  const Tape& tape() const { return tape_; }
  /// Finishes and returns the tape; the builder is empty afterwards.
  Tape finish();

  // Shorthands, so that code over the builder reads like math.
#define YTAPE_UNARY(p)          \
  Var p(Var x) {                \
    return call1(Prim::p, {x}); \
  }
#define YTAPE_BINARY(p)            \
  Var p(Var x, Var y) {            \
    return call1(Prim::p, {x, y}); \
  }
  YTAPE_UNARY(neg)
  YTAPE_UNARY(exp)
  YTAPE_UNARY(log)
  YTAPE_UNARY(log1p)
  YTAPE_UNARY(expm1)
  YTAPE_UNARY(sqrt)
  YTAPE_UNARY(abs)
  YTAPE_UNARY(sign)
  YTAPE_UNARY(sin)
  YTAPE_UNARY(cos)
  YTAPE_UNARY(tan)
  YTAPE_UNARY(tanh)
  YTAPE_UNARY(sigmoid)
  YTAPE_UNARY(relu)
  YTAPE_UNARY(softplus)
  YTAPE_BINARY(add)
  YTAPE_BINARY(sub)
  YTAPE_BINARY(mul)
  YTAPE_BINARY(div)
  YTAPE_BINARY(pow)
  YTAPE_BINARY(max)
  YTAPE_BINARY(min)
  YTAPE_BINARY(eq)
  YTAPE_BINARY(ne)
  YTAPE_BINARY(lt)
  YTAPE_BINARY(le)
  YTAPE_BINARY(gt)
  YTAPE_BINARY(ge)
#undef YTAPE_UNARY
#undef YTAPE_BINARY
  Var select(Var c, Var x, Var y) {
    return call1(Prim::select, {c, x, y});
  }
  Var convert(Var x, DType dtype) {
    return call1(Prim::convert, {x}, {{"dtype", dtype}});
  }
  Var sum(Var x, std::vector<int64_t> dims) {
    return call1(Prim::sum, {x}, {{"dims", std::move(dims)}});
  }
  Var reshape(Var x, Shape shape) {
    return call1(Prim::reshape, {x}, {{"shape", std::move(shape)}});
  }
  Var broadcast_to(Var x, Shape shape) {
    return call1(Prim::broadcast_to, {x}, {{"shape", std::move(shape)}});
  }

 private:
  [[noreturn]] void fail(Prim p, const std::string& why) const;
  // Appends an input or constant op with its one output of `type`; the caller fills in
  // its name or value.
  Op& append_leaf(OpKind kind, Type type);
  // Appends an empty op and room for `outs` more vars.
  Op& append_op(size_t outs);
  // The output types of `p` on `args` with normalized `attrs`; valid until the next call.
  const std::vector<Type>& infer(Prim p, const VarList& args, const Attrs& attrs);

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
  std::unordered_set<std::string> input_names_;
  std::vector<ScalarInference> scalar_inferences_;  // by primitive, once used
  std::vector<Type> inferred_;                      // the latest other inference
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

/// Rebuilds `t` through the builder: the identity transformation, re-inferring every type.
Tape copy_tape(const Tape& t);

}  // namespace ytape
