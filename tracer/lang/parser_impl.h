// The recursive-descent parser behind parser.h, shared by its four files: parser.cc (tokens,
// errors, blocks, control flow, statements), parse_operators.cc (assignment and operator
// precedence down to postfix forms), parse_collections.cc (primaries, parentheses,
// brackets, call arguments, strings) and parse_definitions.cc (functions, lambdas, do
// blocks, parameters, types, structs). Internal to the tracer.
#pragma once

#include <algorithm>
#include <cstdint>
#include <initializer_list>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "tracer/lang/ast.h"
#include "tracer/lang/lexer.h"
#include "tracer/lang/parser.h"

namespace ytape::tracer::parse_internal {

/// What the tokens around the parser mean here; saved and restored by ContextScope.
struct Context {
  bool newlines_ignored = false;  ///< inside ( ) and { }: a newline is whitespace
  bool space_sensitive = false;   ///< directly inside [ ]: `[1 -2]` has two elements
  bool in_index = false;          ///< inside x[...]: `end` is the last index
  bool ternary_middle = false;    ///< in `c ? a : b` before the ':': ` : ` ends `a`
};

/// Binary operator precedence levels, lowest first; kNone for tokens that are not one here.
enum Level : int {
  kNone = -1,
  kOr,          // || (right)
  kAnd,         // && (right)
  kComparison,  // == != < <= > >= === !== <: >: in isa ∉ ≈ (chains)
  kPipeLeft,    // <| (right)
  kPipe,        // |>
  kRange,       // : (start:stop, start:step:stop)
  kPlus,        // + - | ⊻
  kTimes,       // * / % & \ ÷ ⋅ ∘
  kRational,    // //
  kShift,       // << >> >>>
};

class Parser {
 public:
  /// `depth` is the nesting already used by an enclosing parser (string interpolation).
  Parser(const Sources& sources, uint32_t file, std::vector<Token> tokens, int depth = 0);

  /// A whole file: a block of its statements.
  ExprPtr parse_file();
  /// The inside of `$( ... )`: one expression, then the end of the tokens.
  ExprPtr parse_interpolation();

  // ---- tokens and errors (parser.cc) ----------------------------------------------------
  /// The next token; skips line breaks where they are whitespace.
  const Token& peek();
  /// The token after peek(), and its index.
  const Token& after() { return token_at(after_index()); }
  size_t after_index();
  const Token& take();
  bool at(Tok kind) { return peek().kind == kind; }
  bool at_op(std::string_view op) { return peek().kind == Tok::op && peek().text == op; }
  bool at_kw(std::string_view kw) { return peek().kind == Tok::keyword && peek().text == kw; }
  bool accept(Tok kind);
  bool accept_op(std::string_view op);
  bool accept_kw(std::string_view kw);
  void skip_newlines();
  /// Index of the bracket closing the one at token `open`, or 0 if the tokens end first.
  size_t matching(size_t open) const;
  size_t index() const { return pos_; }
  const Token& token_at(size_t i) const { return tokens_[std::min(i, tokens_.size() - 1)]; }

  [[noreturn]] void fail(Pos pos, const std::string& message) const;
  /// Throws "expected <what>, found <token>".
  [[noreturn]] void fail_expected(const Token& found, std::string_view what) const;
  /// Consumes `close`, or throws "expected ')' to close '(' at line N, found X".
  void expect_close(Tok close, const Token& open, std::string_view alternative = {});
  /// Consumes `end`, or throws "expected 'end' to close 'function' at line N".
  void expect_end(const Token& opener);
  /// Throws for a token that closes something but has nothing to close here.
  [[noreturn]] void fail_unclosed(const Token* opener, const Token& found) const;

  /// Counts nesting; throws past kMaxNesting instead of overflowing the stack.
  void enter(Pos pos);
  void leave(int levels) { depth_ -= levels; }
  Context& context() { return ctx_; }

  // ---- blocks, statements, control flow (parser.cc) ------------------------------------
  /// Statements up to eof or one of `terminators` (not consumed); `opener` is the keyword
  /// that opened the block, or null for the file.
  ExprPtr parse_block(const Token* opener, std::initializer_list<std::string_view> terminators);
  /// A statement: short function definitions, bare tuples `a, b`, assignments.
  ExprPtr parse_statement();
  ExprPtr parse_keyword();
  ExprPtr parse_if(const Token& opener, const Token& keyword);
  ExprPtr parse_for();
  ExprPtr parse_while();
  ExprPtr parse_let();
  ExprPtr parse_return();
  ExprPtr parse_declaration();
  ExprPtr parse_using();
  /// `i in xs, (j, y) in ys`, for loops and comprehensions.
  ExprPtr parse_iteration();
  ExprPtr parse_loop_target();
  bool at_statement_end();
  void require_top_level(const Token& keyword);

  // ---- operators (parse_operators.cc) ---------------------------------------------------
  /// An expression without assignment or bare tuple.
  ExprPtr parse_expr();
  /// parse_expr, then `= value` and friends (right-associative, no bare tuple).
  ExprPtr parse_assignment();
  ExprPtr finish_assignment(ExprPtr target, bool tuple_value);
  void check_target(const Expr& target, const Token& op) const;
  ExprPtr parse_ternary();
  ExprPtr parse_binary(int min_level);
  /// The precedence level of peek() as a binary operator here, or kNone.
  int binary_level();
  ExprPtr parse_comparison(ExprPtr first);
  ExprPtr parse_range(ExprPtr start);
  ExprPtr parse_unary();
  ExprPtr parse_juxtaposition();
  ExprPtr parse_power();
  ExprPtr parse_postfix(ExprPtr e);
  ExprPtr parse_field_or_dot_call(ExprPtr e);
  /// True if the operator token here is a function used as a value (`map(-, xs)`, `(+)`)
  /// or called (`+(a, b)`).
  bool operator_is_value();

  // ---- primaries and collections (parse_collections.cc) ---------------------------------
  ExprPtr parse_primary();
  ExprPtr parse_parenthesized();
  ExprPtr parse_tuple_rest(ExprPtr first, const Token& open);
  /// An element of a call, tuple or array: an expression, `x...`, `name = value`, or a
  /// generator `f(x) for x in xs` (as the last element).
  // With `assignments`, an update or an assignment into a field or index is one too:
  // `(acc += v)`, `(m.f = v; m)`.
  ExprPtr parse_item(bool keywords_allowed, bool assignments = false);
  /// An item after `;` as a keyword argument: `k = v`, `k` (k = k), `a.k`, `kws...`.
  ExprPtr as_keyword(ExprPtr item);
  ExprPtr parse_generator(ExprPtr body, Kind kind);
  ExprPtr parse_call(ExprPtr callee, Kind kind);
  ExprPtr parse_brackets(const Token& open);
  ExprPtr parse_vect_rest(ExprPtr first, const Token& open);
  ExprPtr parse_rows(ExprPtr first, const Token& open);
  ExprPtr parse_index(ExprPtr object);
  ExprPtr parse_string();
  ExprPtr parse_prefixed_string();
  ExprPtr parse_colon();

  // ---- macros (parse_macros.cc) ----------------------------------------------------------
  /// A macro call, rewritten into what it stands for (`@. a + b` is `a .+ b`, `@inbounds e`
  /// is `e`); an unknown macro is an error naming the supported ones.
  ExprPtr parse_macro();
  ExprPtr epochs_loop(Pos pos, ExprPtr n, ExprPtr body);
  // parse_autosize.cc: Flux's @autosize.
  ExprPtr autosize_macro(Pos pos, std::vector<std::pair<ExprPtr, std::string>>& args);
  ExprPtr lazy_layer(ExprPtr layer);
  void make_lazy(ExprPtr& e);
  ExprPtr test_call(Pos pos, std::vector<std::pair<ExprPtr, std::string>>& args);
  ExprPtr test_macro(Pos pos, const std::string& name,
                     std::vector<std::pair<ExprPtr, std::string>>& args);
  ExprPtr unsupported_macro(Pos pos, const std::string& name);
  ExprPtr non_differentiable_macro(Pos pos);
  ExprPtr scalar_rule_macro(Pos pos);
  ExprPtr eval_macro(Pos pos);
  ExprPtr parse_interpolated();
  ExprPtr adjoint_macro(Pos pos, ExprPtr definition);
  /// The arguments of the macro call before peek(), each with its source text.
  std::vector<std::pair<ExprPtr, std::string>> parse_macro_args();
  /// The source text of tokens [first, end).
  std::string source_text(size_t first, size_t end) const;

  // ---- definitions (parse_definitions.cc) -----------------------------------------------
  ExprPtr parse_function_keyword();
  /// True at `f(...) =`, `f(...) where`, `A.f(...) =` or `(m::T)(...) =`.
  bool at_short_definition();
  ExprPtr parse_short_definition();
  bool at_lambda_params();
  ExprPtr parse_lambda();
  ExprPtr parse_do(ExprPtr call);
  std::string parse_function_name();
  Param parse_receiver();
  void parse_params(Function& f);
  Param parse_param(bool keyword);
  std::vector<Unpack> parse_unpack();
  void check_params(const Function& f) const;
  void parse_where(Function& f);
  ExprPtr parse_type_param();
  ExprPtr parse_type();
  ExprPtr parse_curly(ExprPtr head);
  ExprPtr parse_struct();
  ExprPtr parse_inner_constructor(const std::string& type);
  void parse_fields(StructDef& s, const Token& opener);
  ExprPtr parse_abstract();

 private:
  const Sources& sources_;
  uint32_t file_;
  std::vector<Token> tokens_;
  size_t pos_ = 0;
  int depth_;
  int eval_depth_ = 0;    ///< inside @eval, where `$x` interpolates
  int local_scopes_ = 0;  ///< function, lambda, let, for, while bodies around here
  /// Index of the first token of the latest statement of a block; struct, const, using and
  /// import must start there.
  size_t statement_start_ = SIZE_MAX;
  bool kwdef_ = false;  // parsing the struct of `@kwdef`: fields may have defaults
  Context ctx_;

  friend class LocalScope;
};

/// Sets the parser's context for its lifetime and restores the old one after.
class ContextScope {
 public:
  ContextScope(Parser& parser, Context context) : parser_(parser), saved_(parser.context()) {
    parser.context() = context;
  }
  ~ContextScope() { parser_.context() = saved_; }
  ContextScope(const ContextScope&) = delete;
  ContextScope& operator=(const ContextScope&) = delete;

 private:
  Parser& parser_;
  Context saved_;
};

/// Context for the inside of ( ) and { }: line breaks are whitespace, `end` keeps meaning.
inline Context paren_context(const Context& outer) {
  return {.newlines_ignored = true, .in_index = outer.in_index};
}

/// Counts nesting levels for the life of the guard (one, plus one per deeper()).
class DepthGuard {
 public:
  explicit DepthGuard(Parser& parser) : parser_(parser) {}
  DepthGuard(Parser& parser, Pos pos) : parser_(parser) { deeper(pos); }
  ~DepthGuard() { parser_.leave(levels_); }
  DepthGuard(const DepthGuard&) = delete;
  DepthGuard& operator=(const DepthGuard&) = delete;
  void deeper(Pos pos) {
    parser_.enter(pos);
    ++levels_;
  }

 private:
  Parser& parser_;
  int levels_ = 0;
};

/// Marks a function, lambda, let or loop body: struct, const, using and import are
/// refused inside one, as in Julia.
class LocalScope {
 public:
  explicit LocalScope(Parser& parser) : parser_(parser) { ++parser.local_scopes_; }
  ~LocalScope() { --parser_.local_scopes_; }
  LocalScope(const LocalScope&) = delete;
  LocalScope& operator=(const LocalScope&) = delete;

 private:
  Parser& parser_;
};

/// How a block opener reads in messages: "function", "mutable struct", "abstract type".
std::string opener_name(const Token& opener);
/// A token that closes a construct: ) ] } end else elseif catch finally.
bool is_closer(const Token& token);
/// `=`, `+=`, `.=`, `.+=`, ...
bool is_assignment_op(const Token& token);
/// `+ - ! ~ √` and their dotted forms: operators that may come before their operand.
bool is_prefix_op(std::string_view op);
/// An operator that names a function: `+`, `|>`, `∘`, `=>`, `^` (not `&&`, `:` or `.+`).
bool is_function_operator(std::string_view op);
/// `.+`, `.*`, ...: a dotted operator (not `...`), and the operator without its dot.
bool is_dotted(std::string_view op);
std::string_view undotted(std::string_view op);
/// A new node for the operator call `op(a)` or `op(a, b)`, at the operator: a call, or a
/// broadcast for dotted operators.
ExprPtr make_operator_call(const Token& op, ExprPtr a, ExprPtr b = nullptr);

}  // namespace ytape::tracer::parse_internal
