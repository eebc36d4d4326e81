// Assignment and operators, from the loosest binding (`=`) down to postfix forms (calls,
// indexing, fields, `'`, `::`), with Julia's precedences and whitespace rules.
#include <fmt/format.h>

#include "tracer/lang/parser_impl.h"

namespace ytape::tracer::parse_internal {

bool is_dotted(std::string_view op) {
  return op.size() > 1 && op[0] == '.' && op != "...";
}
std::string_view undotted(std::string_view op) {
  return is_dotted(op) ? op.substr(1) : op;
}

namespace {

int level_of(std::string_view op) {
  static constexpr std::pair<std::string_view, Level> kLevels[] = {
      {"||", kOr},          {"&&", kAnd},         {"==", kComparison}, {"!=", kComparison},
      {"<", kComparison},   {"<=", kComparison},  {">", kComparison},  {">=", kComparison},
      {"===", kComparison}, {"!==", kComparison}, {"<:", kComparison}, {">:", kComparison},
      {"in", kComparison},  {"∉", kComparison},   {"≈", kComparison},  {"<|", kPipeLeft},
      {"|>", kPipe},        {":", kRange},        {"+", kPlus},        {"-", kPlus},
      {"|", kPlus},         {"⊻", kPlus},         {"*", kTimes},       {"/", kTimes},
      {"%", kTimes},        {"&", kTimes},        {"\\", kTimes},      {"÷", kTimes},
      {"⋅", kTimes},        {"∘", kTimes},        {"⊠", kTimes},       {"//", kRational},
      {"<<", kShift},       {">>", kShift},       {">>>", kShift},
  };
  for (const auto& [name, level] : kLevels) {
    if (name == op) return level;
  }
  return kNone;
}

// `a + b + c` and `a * b * c` become one call with all operands, as in Julia's own parser;
// this also keeps long sums from building deep trees.
bool is_nary(std::string_view op) {
  return op == "+" || op == "*";
}

ExprPtr make_binary(const Token& op, ExprPtr lhs, ExprPtr rhs) {
  if (op.text == "&&" || op.text == "||") {
    ExprPtr node = make_expr(op.text == "&&" ? Kind::and_ : Kind::or_, op.pos);
    node->args.push_back(std::move(lhs));
    node->args.push_back(std::move(rhs));
    return node;
  }
  return make_operator_call(op, std::move(lhs), std::move(rhs));
}

}  // namespace

bool is_assignment_op(const Token& token) {
  if (token.kind != Tok::op) return false;
  std::string_view op = undotted(token.text);
  if (op == "=") return true;
  if (op.size() < 2 || op.back() != '=') return false;
  std::string_view base = op.substr(0, op.size() - 1);
  return base == "^" || level_of(base) >= kPlus;
}

bool is_prefix_op(std::string_view op) {
  op = undotted(op);
  return op == "+" || op == "-" || op == "!" || op == "~" || op == "√";
}

ExprPtr make_operator_call(const Token& op, ExprPtr a, ExprPtr b) {
  ExprPtr node = make_expr(is_dotted(op.text) ? Kind::broadcast : Kind::call, op.pos);
  node->args.push_back(make_expr(Kind::id, op.pos, std::string(undotted(op.text))));
  node->args.push_back(std::move(a));
  if (b) node->args.push_back(std::move(b));
  return node;
}

// ---- assignment, pairs, ternary -------------------------------------------------------

ExprPtr Parser::parse_expr() {
  DepthGuard guard(*this, peek().pos);
  ExprPtr lhs = parse_ternary();
  if (!at_op("=>") && !at_op(".=>")) return lhs;
  const Token& op = take();
  skip_newlines();
  return make_operator_call(op, std::move(lhs), parse_expr());
}

ExprPtr Parser::parse_assignment() {
  ExprPtr lhs = parse_expr();
  if (!is_assignment_op(peek())) return lhs;
  return finish_assignment(std::move(lhs), false);
}

ExprPtr Parser::finish_assignment(ExprPtr target, bool tuple_value) {
  const Token& op = take();
  check_target(*target, op);
  skip_newlines();
  DepthGuard guard(*this, op.pos);
  ExprPtr value = tuple_value ? parse_statement() : parse_assignment();
  Kind kind = op.text == "=" ? Kind::assign : op.text == ".=" ? Kind::dot_assign : Kind::op_assign;
  ExprPtr node = make_expr(kind, op.pos);
  if (kind == Kind::op_assign) node->name = op.text.substr(0, op.text.size() - 1);
  node->args.push_back(std::move(target));
  node->args.push_back(std::move(value));
  return node;
}

void Parser::check_target(const Expr& target, const Token& op) const {
  bool plain = op.text == "=";
  switch (target.kind) {
    case Kind::id:
    case Kind::index:
    case Kind::field:
      return;
    case Kind::decl:
      if (plain && target.args[0]->kind == Kind::id) return;
      if (target.args[0]->kind == Kind::call) {
        fail(target.pos, "return type annotations ('f(x)::T = ...') are not supported");
      }
      break;
    case Kind::curly:
      // `const AA3{T} = AbstractArray{T, 3}`: a parametric type alias.
      if (plain && target.args[0]->kind == Kind::id) return;
      break;
    case Kind::tuple:
      if (!plain) {
        fail(op.pos, fmt::format("'{}' cannot update a tuple; update each variable", op.text));
      }
      for (const ExprPtr& element : target.args) check_target(*element, op);
      return;
    case Kind::named_tuple: {
      // `(; a, b) = x` takes x.a and x.b into a and b.
      bool names = plain;
      for (const ExprPtr& item : target.args) {
        names = names && item->kind == Kind::kw && item->args[0]->kind == Kind::id &&
                item->args[0]->name == item->name;
      }
      if (names) return;
      fail(target.pos, "destructuring by field name takes names only: '(; a, b) = x'");
    }
    default:
      break;
  }
  fail(target.pos, fmt::format("cannot assign to this with '{}'; the left side must be a name, "
                               "a tuple of names, an index or a field",
                               op.text));
}

ExprPtr Parser::parse_ternary() {
  ExprPtr cond = parse_binary(kOr);
  if (!at_op("?")) return cond;
  const Token& question = take();
  DepthGuard guard(*this, question.pos);
  skip_newlines();
  ExprPtr node = make_expr(Kind::if_, question.pos);
  node->args.push_back(std::move(cond));
  {
    Context middle = ctx_;
    middle.ternary_middle = true;
    ContextScope scope(*this, middle);
    node->args.push_back(parse_ternary());
  }
  if (!accept_op(":")) fail_expected(peek(), "':' in 'condition ? a : b'");
  skip_newlines();
  node->args.push_back(parse_ternary());
  return node;
}

// ---- binary operators (precedence climbing) ----------------------------------------------

int Parser::binary_level() {
  const Token& t = peek();
  int level = kNone;
  if (t.kind == Tok::op) {
    level = level_of(undotted(t.text));
  } else if ((t.kind == Tok::keyword && t.text == "in") ||
             (t.kind == Tok::ident && t.text == "isa")) {
    level = kComparison;
  }
  if (level == kRange && ctx_.ternary_middle && t.space_before) return kNone;
  // Inside [ ], `[1 -2]` is two elements and `[1 - 2]` one: Julia's rule.
  if (ctx_.space_sensitive && t.space_before && is_prefix_op(t.text) && !after().space_before &&
      after().kind != Tok::newline) {
    return kNone;
  }
  return level;
}

ExprPtr Parser::parse_binary(int min_level) {
  ExprPtr lhs = parse_unary();
  DepthGuard chain(*this);
  const Expr* nary = nullptr;  // the n-ary call this loop built last, which may grow
  while (true) {
    int level = binary_level();
    if (level == kNone || level < min_level) return lhs;
    if (level == kComparison || level == kRange) {
      chain.deeper(peek().pos);
      lhs = level == kComparison ? parse_comparison(std::move(lhs)) : parse_range(std::move(lhs));
      nary = nullptr;
      continue;
    }
    const Token& op = take();
    bool grow = nary == lhs.get() && is_nary(op.text) && lhs->args[0]->name == op.text;
    if (!grow) chain.deeper(op.pos);
    skip_newlines();
    bool right = level == kOr || level == kAnd || level == kPipeLeft;
    ExprPtr rhs = parse_binary(right ? level : level + 1);
    if (grow) {
      lhs->args.push_back(std::move(rhs));
      continue;
    }
    lhs = make_binary(op, std::move(lhs), std::move(rhs));
    nary = is_nary(op.text) ? lhs.get() : nullptr;
  }
}

ExprPtr Parser::parse_comparison(ExprPtr first) {
  std::vector<ExprPtr> operands;
  std::vector<const Token*> ops;
  operands.push_back(std::move(first));
  while (binary_level() == kComparison) {
    ops.push_back(&take());
    skip_newlines();
    operands.push_back(parse_binary(kComparison + 1));
  }
  if (ops.size() == 1) {
    return make_operator_call(*ops[0], std::move(operands[0]), std::move(operands[1]));
  }
  ExprPtr node = make_expr(Kind::comparison, ops[0]->pos);
  for (size_t i = 0; i < ops.size(); ++i) {
    // A dotted operator stays dotted in the chain: `a .< b .< c` is (a .< b) .& (b .< c).
    node->args.push_back(std::move(operands[i]));
    node->args.push_back(make_expr(Kind::id, ops[i]->pos, ops[i]->text));
  }
  node->args.push_back(std::move(operands.back()));
  return node;
}

ExprPtr Parser::parse_range(ExprPtr start) {
  ExprPtr node = make_expr(Kind::range, take().pos);
  skip_newlines();
  node->args.push_back(std::move(start));
  node->args.push_back(parse_binary(kRange + 1));
  if (binary_level() == kRange) {
    take();
    skip_newlines();
    node->args.push_back(parse_binary(kRange + 1));
  }
  if (binary_level() == kRange) {
    fail(peek().pos, "a range has at most two ':', as in 'start:step:stop'");
  }
  return node;
}

// ---- unary, juxtaposition, power ----------------------------------------------------------

ExprPtr Parser::parse_unary() {
  const Token& t = peek();
  if (t.kind != Tok::op || !is_prefix_op(t.text) || operator_is_value()) {
    return parse_juxtaposition();
  }
  const Token& op = take();
  DepthGuard guard(*this, op.pos);
  return make_operator_call(op, parse_unary());
}

// `2x`, `2x^2`, `2(x + 1)`: a number literal directly followed by a name or '(' multiplies;
// so does an adjoint, as in `x'x` and `x'y`.
ExprPtr Parser::parse_juxtaposition() {
  bool number = at(Tok::integer) || at(Tok::floating);
  ExprPtr lhs = parse_power();
  bool literal = number && (lhs->kind == Kind::int_lit || lhs->kind == Kind::float_lit);
  bool adjoint =
      lhs->kind == Kind::call && lhs->args[0]->kind == Kind::id && lhs->args[0]->name == "'";
  if (!literal && !adjoint) return lhs;
  const Token& t = peek();
  if (t.space_before || (t.kind != Tok::ident && t.kind != Tok::lparen)) return lhs;
  ExprPtr node = make_expr(Kind::call, lhs->pos);
  node->args.push_back(make_expr(Kind::id, t.pos, "*"));
  node->args.push_back(std::move(lhs));
  node->args.push_back(parse_power());
  return node;
}

ExprPtr Parser::parse_power() {
  ExprPtr base = parse_postfix(parse_primary());
  if (!at_op("^") && !at_op(".^")) return base;
  const Token& op = take();
  skip_newlines();
  DepthGuard guard(*this, op.pos);
  return make_operator_call(op, std::move(base), parse_unary());
}

bool is_function_operator(std::string_view op) {
  return !is_dotted(op) && op != "&&" && op != "||" && op != ":" &&
         (level_of(op) != kNone || is_prefix_op(op) || op == "^" || op == "=>");
}

bool Parser::operator_is_value() {
  const Token& t = peek();
  std::string_view op = t.text;
  // `.+` alone is a value too: Base.BroadcastFunction(+).
  if (!is_function_operator(op) && !(is_dotted(op) && is_function_operator(undotted(op))))
    return false;
  size_t next_index = after_index();
  const Token& next = token_at(next_index);
  switch (next.kind) {
    case Tok::comma:
    case Tok::rparen:
    case Tok::rbracket:
    case Tok::rbrace:
    case Tok::semicolon:
    case Tok::newline:
    case Tok::eof:
      return true;
    default:
      break;
  }
  if (next.kind != Tok::lparen || next.space_before) return false;
  if (!is_prefix_op(op)) return true;
  // `-(x)` negates x; `-(a, b)`, `-()` and `+(xs...)` call the function.
  size_t close = matching(next_index);
  if (close == next_index + 1) return true;
  const Token& last = token_at(close - 1);
  if (last.kind == Tok::op && last.text == "...") return true;
  int depth = 0;
  for (size_t i = next_index; i < close; ++i) {
    Tok k = token_at(i).kind;
    depth += (k == Tok::lparen || k == Tok::lbracket || k == Tok::lbrace)   ? 1
             : (k == Tok::rparen || k == Tok::rbracket || k == Tok::rbrace) ? -1
                                                                            : 0;
    if (depth == 1 && (k == Tok::comma || k == Tok::semicolon)) return true;
  }
  return false;
}

// ---- postfix: calls, indexing, fields, adjoint, type assertions ----------------------------

ExprPtr Parser::parse_postfix(ExprPtr e) {
  DepthGuard chain(*this);
  bool number = e->kind == Kind::int_lit || e->kind == Kind::float_lit;
  while (true) {
    const Token& t = peek();
    if ((t.kind == Tok::lparen || t.kind == Tok::lbracket) && !number) {
      if (t.space_before) {
        if (ctx_.space_sensitive) return e;
        fail(t.pos, t.kind == Tok::lparen
                        ? "space before '(' is not allowed here; write 'f(x)' for a call"
                        : "space before '[' is not allowed here; write 'x[i]' for indexing");
      }
      chain.deeper(t.pos);
      e = t.kind == Tok::lparen ? parse_call(std::move(e), Kind::call) : parse_index(std::move(e));
    } else if (t.kind == Tok::lbrace && !t.space_before && !number) {
      chain.deeper(t.pos);
      e = parse_curly(std::move(e));
    } else if (t.kind == Tok::op && t.text == ".") {
      chain.deeper(t.pos);
      e = parse_field_or_dot_call(std::move(e));
    } else if (t.kind == Tok::op && t.text == "'") {
      chain.deeper(t.pos);
      e = make_operator_call(take(), std::move(e));
    } else if (t.kind == Tok::op && t.text == "::") {
      chain.deeper(t.pos);
      ExprPtr decl = make_expr(Kind::decl, take().pos);
      decl->args.push_back(std::move(e));
      decl->args.push_back(parse_type());
      if (at_op("->") && decl->args[0]->kind == Kind::id) {
        // Julia reads `x::Int -> body` as `x::(Int -> body)`, never a typed parameter.
        fail(decl->pos, fmt::format("a typed lambda parameter needs parentheses: write "
                                    "'({}::{}) -> ...'",
                                    decl->args[0]->name, type_expr_str(*decl->args[1])));
      }
      e = std::move(decl);
    } else if (t.kind == Tok::keyword && t.text == "do") {
      if (e->kind != Kind::call)
        fail(t.pos, "'do' must follow a function call, as in 'map(xs) do x'");
      // `gradient(m) do m ... end[1]` indexes the call's result, as Julia reads it.
      chain.deeper(t.pos);
      e = parse_do(std::move(e));
    } else {
      return e;
    }
  }
}

ExprPtr Parser::parse_field_or_dot_call(ExprPtr e) {
  take();
  const Token& t = peek();
  if (t.kind == Tok::lparen && !t.space_before) return parse_call(std::move(e), Kind::broadcast);
  // `Flux.@functor T`: a macro by its module's name is the macro.
  if (t.kind == Tok::macro && !t.space_before && (e->kind == Kind::id || e->kind == Kind::field)) {
    return parse_macro();
  }
  if (t.kind != Tok::ident || t.space_before) fail_expected(t, "a field name or '(' after '.'");
  ExprPtr field = make_expr(Kind::field, take().pos, t.text);
  field->args.push_back(std::move(e));
  return field;
}

}  // namespace ytape::tracer::parse_internal
