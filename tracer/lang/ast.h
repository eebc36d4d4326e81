// The syntax tree of the model language. As in Julia, everything is an expression (an `if`
// has a value, a block's value is its last statement's), so there is one node type, Expr,
// with a Kind from tracer/lang/expr_kinds.def. Function and struct definitions carry a small
// payload struct, since their parts (parameters, defaults, fields) are not expressions.
//
// How to walk it: switch on Expr::kind; tracer/lang/expr_kinds.def gives the layout of each
// kind in `args` (children, in source order) and the other fields. Every node has the Pos of
// its first token, except infix and postfix operators (the operator token: `+` of `a + b`,
// `'` of `x'`, `=` of an assignment), field access (the field name), and calls, broadcasts
// and indexing (the Pos of their callee or object), so that an error about a node can point
// at it.
//
// Operators are ordinary calls of the function named by the operator: `a + b` is
// (call (id +) a b), `-x` is (call (id -) x), `x'` is (call (id ') x). `a + b + c` and
// `a * b * c` are one call with three arguments, as in Julia (applied left to right). The
// dotted forms are `broadcast` nodes with the same layout: `a .+ b` is (broadcast (id +) a b) and
// `f.(x)` is (broadcast (id f) x). Unicode aliases are already folded: `≤` is `<=`, `≠` is `!=`,
// `∈` is `in`.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/lang/source.h"

namespace ytape::tracer {

/// The node kinds; tracer/lang/expr_kinds.def gives the layout of each.
enum class Kind : uint8_t {
#define X(kind, text) kind,
#include "tracer/lang/expr_kinds.def"
#undef X
};

/// The printed name of a kind ("call", "=", "->", ...).
std::string_view kind_name(Kind kind);

struct Expr;
using ExprPtr = std::unique_ptr<Expr>;

/// One part of a destructuring parameter: a name, or a group unpacked in turn, as `(b, c)`
/// in Flux's `normalize_mha_dims((in, (qkv, out))::Pair)`.
struct Unpack {
  std::string name;           ///< the name, or "" for a group
  std::vector<Unpack> parts;  ///< a group's parts
};

/// A parameter of a function, lambda or do block.
struct Param {
  Pos pos;
  std::string name;            ///< "" for `::T` and for a destructuring parameter
  std::vector<Unpack> unpack;  ///< `(a, (b, c))`: what a tuple argument is unpacked into
  ExprPtr type;                ///< `::T`: id, field (`Base.X`) or curly node; or null
  ExprPtr default_value;       ///< `= value`, evaluated at each call; or null
  bool splat = false;          ///< `xs...`: the remaining arguments, as a tuple
  std::string vararg_count;    ///< `xs::Vararg{T, N}`: N, which the method binds
};

/// A function definition or anonymous function. Positional parameters with defaults come
/// after those without; a splat parameter comes last. Keyword parameters without a
/// default are required; one splat keyword parameter (`kws...`) may come last.
struct Function {
  std::string name;   ///< "" for lambdas and callable structs; qualified names keep their dots
  ExprPtr name_expr;  ///< `$f(x) = ...` inside @eval: the interpolation naming it (name "$")
  std::optional<Param> receiver;  ///< `(m::Dense)(x) = ...`: the called object, typed
  std::vector<Param> params;
  std::vector<Param> kwparams;
  std::vector<ExprPtr> where;  ///< `where {T, S<:Real}`: id nodes or (call (id <:) T bound)
  ExprPtr body;                ///< a block (long form, do block) or one expression
};

/// A field of a struct.
struct Field {
  Pos pos;
  std::string name;
  ExprPtr type;           ///< or null
  ExprPtr default_value;  ///< `@kwdef` structs only; or null
};

/// `struct Name{T} <: Super ... end`: fields, and inner constructors if any (the positional
/// constructor is implied).
struct StructDef {
  std::string name;
  bool is_mutable = false;
  std::vector<ExprPtr> type_params;  ///< like Function::where
  ExprPtr supertype;                 ///< or null
  std::vector<Field> fields;
  bool kwdef = false;  ///< `@kwdef struct`: a keyword constructor with the fields' defaults
  /// Inner constructors: function definitions of the struct's name, their `new(...)`
  /// already `new_struct(Name, ...)`; defined after the struct.
  std::vector<ExprPtr> constructors;
};

struct Expr {
  Kind kind = Kind::nothing;
  Pos pos;
  std::string name;
  int64_t int_value = 0;
  double float_value = 0;
  bool float32 = false;
  std::vector<ExprPtr> args;
  std::unique_ptr<Function> function;     ///< function and lambda only
  std::unique_ptr<StructDef> struct_def;  ///< struct_ only
};

/// A new node with no children.
ExprPtr make_expr(Kind kind, Pos pos, std::string name = {});

/// `(a, (b, c))` of a destructuring parameter's parts, `sep` between them.
std::string unpack_text(const std::vector<Unpack>& parts, std::string_view sep);

/// The tree as a compact S-expression on one line, for golden tests and debugging:
/// `x + 1` is `(call + (id x) (int 1))`. Callees that are names print bare; parameters,
/// fields and types print as Julia text (`b::Int=(int 1)`, `xs...`).
std::string to_sexpr(const Expr& expr);

/// `text` as a Julia string literal: quotes, `\\`, `\$`, `\n`, `\t`, `\r` escaped and other
/// control characters as `\xNN`.
std::string julia_quoted(std::string_view text);

/// A type expression as Julia text: `AbstractArray{Float32, 4}`, `Base.Foo`, `<:Real`,
/// `T<:Real`. Other expressions print as S-expressions.
std::string type_expr_str(const Expr& type);

}  // namespace ytape::tracer
