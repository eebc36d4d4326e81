// The tape: a flat SSA list of ops over typed values.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "tape/attrs.h"
#include "tape/compact.h"
#include "tape/dtype.h"
#include "tape/op_attrs.h"
#include "tape/prim.h"
#include "tape/type_table.h"
#include "tape/var.h"

namespace ytape {

/// Source location of the model line an op came from; file 0 means none. `scope` names the
/// layer call the op was recorded in (Tape::scopes), 0 when none.
struct Loc {
  uint32_t file = 0;  ///< index into Tape::files, 1-based
  uint32_t line = 0;
  uint32_t scope = 0;  ///< index into Tape::scopes, 1-based
  bool known() const { return file != 0; }
  friend bool operator==(Loc, Loc) = default;
};

/// A call of a layer of the model (a callable struct) that ops were recorded in
/// (docs/tape-format.md, "Scopes"): where it was made, where called, and what it is. Ops
/// name their innermost scope (Loc::scope); a scope names the one it was called in.
struct Scope {
  std::string path;     ///< the layer's place among the traced function's arguments, or ""
  std::string layer;    ///< its one-line form, Flux's `show`: `Dense(4 => 8, relu)`
  Loc made;             ///< where it was constructed (file and line; scope unused)
  Loc call;             ///< where it was called (file and line; scope unused)
  uint32_t parent = 0;  ///< the scope it was called in, 1-based and below its own; 0: none
  friend bool operator==(const Scope&, const Scope&) = default;
  /// "model.layers[1]: Dense(4 => 8, relu)", or the layer alone without a path.
  std::string title() const { return path.empty() ? layer : path + ": " + layer; }
};

enum class OpKind : uint8_t { input, constant, call };

struct Tape;

/// One op. Inputs have a name and one output; constants have one output and an inline
/// literal; calls have a primitive, arguments, attributes and `prim_info(prim).outputs`
/// outputs (region ops: as many as their regions give). The fields few ops have take one
/// pointer each while empty (tape/compact.h), a scalar constant's bytes that pointer's
/// place, and up to three arguments and outputs are kept in place (VarList): an op is 80
/// bytes, which with its output's 4-byte type index (TypeTable) is most of what a tape of
/// millions of ops holds.
struct Op {
  OpKind kind = OpKind::call;
  Prim prim{};
  Loc loc;
  VarList args;
  VarList outs;
  Attrs attrs;
  RareString name;  ///< inputs only
  RareBytes value;  ///< constants only: elements, column-major, native layout
  /// Region ops only (scan): the tapes it holds, each named (Tape::name) by its role
  /// ("body"). A region numbers its vars from %1; its inputs are its parameters, its
  /// outputs (unnamed) what it yields; it reads nothing of the tape around it, and its
  /// locations refer to the files of the outermost tape. docs/regions.md.
  RareVector<Tape> regions;
};

/// A named output of the tape.
struct Output {
  Var var;
  std::string name;
  friend bool operator==(const Output&, const Output&) = default;
};

/// A tape. Valid tapes (see validate.h) define every var exactly once, in increasing id
/// order, before any use; inputs come first.
struct Tape {
  std::string name;
  /// Static facts recorded when the tape was made (e.g. static arguments of a trace),
  /// kept in insertion order.
  std::vector<std::pair<std::string, std::string>> meta;
  std::vector<std::string> files;  ///< source files that locations refer to
  std::vector<Scope> scopes;       ///< layer calls that locations refer to (Loc::scope)
  TypeTable types;                 ///< type of each var, indexed by Var::id
  std::vector<Op> ops;
  std::vector<Output> outputs;

  const Type& type(Var v) const { return types[v.id]; }
  size_t num_inputs() const;
  /// Ops other than inputs (calls and constants): what every command reports as ops.
  size_t num_ops() const { return ops.size() - num_inputs(); }
  /// "file:line", or "" when unknown.
  std::string loc_str(Loc loc) const;
  /// "file:line in model.layers[1]": loc_str and the path (else the layer) of the scope, as
  /// `ytape show` comments an op; "" when neither is known.
  std::string where_str(Loc loc) const;
  /// The scope of `loc` (Loc::scope), or null when it has none.
  const Scope* scope_of(Loc loc) const {
    return loc.scope == 0 || loc.scope > scopes.size() ? nullptr : &scopes[loc.scope - 1];
  }
  /// The types of the inputs, in order: a region's parameters.
  std::vector<Type> input_types() const;
  /// The types of the outputs, in order: what a region yields.
  std::vector<Type> output_types() const;
};

/// How deep regions may nest (a loop in a loop in a loop is 3): the validator and the JSON
/// reader refuse deeper ones.
inline constexpr int kMaxRegionDepth = 32;

/// Reads element i of a constant as a double (bool as 0/1).
double literal_at(const Op& op, DType dtype, int64_t i);
/// Element i of a constant in text: shortest round-trip form for f32, f64 and f16 (1.0, 0.1,
/// nan, inf, -inf), digits for i64, true/false for bool. The JSON and text forms use it.
std::string literal_str(const Op& op, DType dtype, int64_t i);

}  // namespace ytape
