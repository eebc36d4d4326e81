#include "tracer/lang/parser.h"

#include <fmt/format.h>

#include "tracer/lang/parser_impl.h"

namespace ytape::tracer {

namespace parse_internal {

std::string opener_name(const Token& opener) {
  if (opener.text == "mutable") return "mutable struct";
  if (opener.text == "abstract") return "abstract type";
  return opener.text;
}

bool is_closer(const Token& token) {
  if (token.kind == Tok::rparen || token.kind == Tok::rbracket || token.kind == Tok::rbrace) {
    return true;
  }
  if (token.kind != Tok::keyword) return false;
  const std::string& t = token.text;
  return t == "end" || t == "else" || t == "elseif" || t == "catch" || t == "finally";
}

Parser::Parser(const Sources& sources, uint32_t file, std::vector<Token> tokens, int depth)
    : sources_(sources), file_(file), tokens_(std::move(tokens)), depth_(depth) {}

// ---- tokens and errors ------------------------------------------------------------------

const Token& Parser::peek() {
  if (ctx_.newlines_ignored) {
    while (tokens_[pos_].kind == Tok::newline) ++pos_;
  }
  return tokens_[pos_];
}

size_t Parser::after_index() {
  peek();
  size_t i = pos_ + 1;
  while (ctx_.newlines_ignored && i < tokens_.size() && tokens_[i].kind == Tok::newline) ++i;
  return i;
}

const Token& Parser::take() {
  const Token& token = peek();
  if (token.kind != Tok::eof) ++pos_;
  return token;
}

bool Parser::accept(Tok kind) {
  if (!at(kind)) return false;
  take();
  return true;
}

bool Parser::accept_op(std::string_view op) {
  if (!at_op(op)) return false;
  take();
  return true;
}

bool Parser::accept_kw(std::string_view kw) {
  if (!at_kw(kw)) return false;
  take();
  return true;
}

void Parser::skip_newlines() {
  while (tokens_[pos_].kind == Tok::newline) ++pos_;
}

size_t Parser::matching(size_t open) const {
  int depth = 0;
  for (size_t i = open; i < tokens_.size(); ++i) {
    Tok k = tokens_[i].kind;
    if (k == Tok::lparen || k == Tok::lbracket || k == Tok::lbrace) ++depth;
    if (k == Tok::rparen || k == Tok::rbracket || k == Tok::rbrace) --depth;
    if (depth == 0) return i;
  }
  return 0;
}

void Parser::fail(Pos pos, const std::string& message) const {
  sources_.fail(pos, message);
}

void Parser::fail_expected(const Token& found, std::string_view what) const {
  fail(found.pos, fmt::format("expected {}, found {}", what, describe(found)));
}

void Parser::expect_close(Tok close, const Token& open, std::string_view alternative) {
  if (accept(close)) return;
  static constexpr std::string_view kClose[] = {")", "]", "}"};
  std::string_view closer = kClose[close == Tok::rparen ? 0 : close == Tok::rbracket ? 1 : 2];
  std::string what = alternative.empty() ? fmt::format("'{}'", closer)
                                         : fmt::format("{} or '{}'", alternative, closer);
  fail(peek().pos, fmt::format("expected {} to close {} at line {}, found {}", what, describe(open),
                               open.pos.line, describe(peek())));
}

void Parser::expect_end(const Token& opener) {
  if (accept_kw("end")) return;
  std::string message =
      fmt::format("expected 'end' to close '{}' at line {}", opener_name(opener), opener.pos.line);
  if (!at(Tok::eof)) message += ", found " + describe(peek());
  fail(peek().pos, message);
}

void Parser::fail_unclosed(const Token* opener, const Token& found) const {
  if (opener) {
    fail(found.pos, fmt::format("expected 'end' to close '{}' at line {}, found {}",
                                opener_name(*opener), opener->pos.line, describe(found)));
  }
  if (found.kind == Tok::keyword && found.text == "end") {
    fail(found.pos, "unexpected 'end'; there is no open block to close");
  }
  if (found.kind == Tok::keyword && found.text.starts_with("else")) {
    fail(found.pos, fmt::format("unexpected {} without a matching 'if'", describe(found)));
  }
  if (found.kind == Tok::keyword) fail(found.pos, fmt::format("unexpected {}", describe(found)));
  fail(found.pos, fmt::format("unexpected {}; there is nothing to close", describe(found)));
}

void Parser::enter(Pos pos) {
  if (++depth_ > kMaxNesting) {
    fail(pos,
         fmt::format("the program nests too deeply here; the limit is {} levels", kMaxNesting));
  }
}

// ---- blocks and statements -------------------------------------------------------------

ExprPtr Parser::parse_file() {
  return parse_block(nullptr, {});
}

ExprPtr Parser::parse_interpolation() {
  ContextScope scope(*this, paren_context({}));
  ExprPtr e = parse_expr();
  if (!at(Tok::eof)) fail_expected(peek(), "')' to end the interpolation");
  return e;
}

ExprPtr Parser::parse_block(const Token* opener,
                            std::initializer_list<std::string_view> terminators) {
  ContextScope scope(*this, Context{});
  auto is_terminator = [&](const Token& t) {
    if (t.kind != Tok::keyword) return false;
    for (std::string_view term : terminators) {
      if (t.text == term) return true;
    }
    return false;
  };
  ExprPtr block = make_expr(Kind::block, opener ? opener->pos : Pos{file_, 1, 1});
  while (true) {
    while (at(Tok::newline) || at(Tok::semicolon)) take();
    const Token& t = peek();
    if (t.kind == Tok::eof || is_terminator(t)) return block;
    if (is_closer(t)) fail_unclosed(opener, t);
    statement_start_ = index();
    block->args.push_back(parse_statement());
    const Token& next = peek();
    if (next.kind != Tok::newline && next.kind != Tok::semicolon && next.kind != Tok::eof &&
        !is_terminator(next) && !is_closer(next)) {
      fail(next.pos, fmt::format("expected a newline or ';' before {}", describe(next)));
    }
  }
}

ExprPtr Parser::parse_statement() {
  if (at_short_definition()) return parse_short_definition();
  ExprPtr first = parse_expr();
  if (at(Tok::comma)) {
    ExprPtr tuple = make_expr(Kind::tuple, first->pos);
    tuple->args.push_back(std::move(first));
    while (accept(Tok::comma)) {
      if (at_statement_end() || is_assignment_op(peek())) break;
      tuple->args.push_back(parse_item(false));
    }
    first = std::move(tuple);
  }
  if (is_assignment_op(peek())) return finish_assignment(std::move(first), true);
  return first;
}

bool Parser::at_statement_end() {
  const Token& t = peek();
  return t.kind == Tok::newline || t.kind == Tok::semicolon || t.kind == Tok::eof ||
         t.kind == Tok::comma || is_closer(t);
}

void Parser::require_top_level(const Token& keyword) {
  if (local_scopes_ > 0) {
    fail(keyword.pos, fmt::format("'{}' is only allowed at top level, not inside a function, "
                                  "let or loop",
                                  opener_name(keyword)));
  }
}

ExprPtr Parser::parse_keyword() {
  const Token& t = peek();
  const std::string& k = t.text;
  if (k == "true" || k == "false") {
    ExprPtr e = make_expr(Kind::bool_lit, take().pos);
    e->int_value = k == "true";
    return e;
  }
  if (k == "nothing") return make_expr(Kind::nothing, take().pos);
  if (k == "end" && ctx_.in_index) return make_expr(Kind::end, take().pos);
  if (k == "function") return parse_function_keyword();
  if (k == "if") return parse_if(t, take());
  if (k == "for") return parse_for();
  if (k == "while") return parse_while();
  if (k == "let") return parse_let();
  if (k == "begin" && ctx_.in_index) {  // x[begin]: every index here starts at 1
    ExprPtr one = make_expr(Kind::int_lit, take().pos);
    one->int_value = 1;
    return one;
  }
  if (k == "begin") {
    const Token& kw = take();
    ExprPtr block = parse_block(&kw, {"end"});
    expect_end(kw);
    return block;
  }
  if (k == "return") return parse_return();
  if (k == "break") return make_expr(Kind::break_, take().pos);
  if (k == "continue") return make_expr(Kind::continue_, take().pos);
  bool definition = k == "struct" || k == "mutable" || k == "abstract" || k == "const" ||
                    k == "using" || k == "import";
  if (definition && index() != statement_start_) {
    fail(t.pos, fmt::format("'{}' must start a statement", opener_name(t)));
  }
  if (k == "struct" || k == "mutable") return parse_struct();
  if (k == "abstract") return parse_abstract();
  if (k == "const" || k == "global" || k == "local") return parse_declaration();
  if (k == "using" || k == "import") return parse_using();
  if (k == "try" || k == "quote" || k == "macro" || k == "module" || k == "baremodule" ||
      k == "export" || k == "primitive") {
    fail(t.pos, fmt::format("'{}' is not supported by ytape's model language", k));
  }
  fail_expected(t, "an expression");
}

// ---- control flow ----------------------------------------------------------------------

// `opener` is the `if` that the final `end` closes; `keyword` is this `if` or `elseif`.
ExprPtr Parser::parse_if(const Token& opener, const Token& keyword) {
  DepthGuard guard(*this, keyword.pos);
  ExprPtr node = make_expr(Kind::if_, keyword.pos);
  {
    ContextScope scope(*this, Context{});
    node->args.push_back(parse_expr());
  }
  node->args.push_back(parse_block(&opener, {"elseif", "else", "end"}));
  if (at_kw("elseif")) {
    node->args.push_back(parse_if(opener, take()));
  } else if (accept_kw("else")) {
    node->args.push_back(parse_block(&opener, {"end"}));
  }
  if (&opener == &keyword) expect_end(opener);
  return node;
}

ExprPtr Parser::parse_for() {
  const Token& kw = take();
  ExprPtr node = make_expr(Kind::for_, kw.pos);
  {
    ContextScope scope(*this, Context{});
    node->args.push_back(parse_iteration());
  }
  LocalScope local(*this);
  node->args.push_back(parse_block(&kw, {"end"}));
  expect_end(kw);
  return node;
}

ExprPtr Parser::parse_while() {
  const Token& kw = take();
  ExprPtr node = make_expr(Kind::while_, kw.pos);
  {
    ContextScope scope(*this, Context{});
    node->args.push_back(parse_expr());
  }
  LocalScope local(*this);
  node->args.push_back(parse_block(&kw, {"end"}));
  expect_end(kw);
  return node;
}

ExprPtr Parser::parse_let() {
  const Token& kw = take();
  ExprPtr node = make_expr(Kind::let, kw.pos);
  ExprPtr bindings = make_expr(Kind::block, kw.pos);
  {
    ContextScope scope(*this, Context{});
    while (!at(Tok::newline) && !at(Tok::semicolon) && !at(Tok::eof) && !at_kw("end")) {
      ExprPtr binding = parse_assignment();
      if (binding->kind != Kind::id && binding->kind != Kind::assign) {
        fail(binding->pos, "expected a name or 'name = value' in 'let'");
      }
      bindings->args.push_back(std::move(binding));
      if (!accept(Tok::comma)) break;
    }
  }
  node->args.push_back(std::move(bindings));
  LocalScope local(*this);
  node->args.push_back(parse_block(&kw, {"end"}));
  expect_end(kw);
  return node;
}

ExprPtr Parser::parse_return() {
  ExprPtr node = make_expr(Kind::return_, take().pos);
  if (!at_statement_end()) node->args.push_back(parse_statement());
  return node;
}

ExprPtr Parser::parse_iteration() {
  ExprPtr iteration = make_expr(Kind::iteration, peek().pos);
  do {
    skip_newlines();
    ExprPtr spec = make_expr(Kind::in, peek().pos);
    spec->args.push_back(parse_loop_target());
    if (!accept_kw("in") && !accept_op("=")) {
      fail_expected(peek(), "'in', '=' or '∈' after the loop variable");
    }
    spec->args.push_back(parse_expr());
    iteration->args.push_back(std::move(spec));
  } while (accept(Tok::comma));
  return iteration;
}

ExprPtr Parser::parse_loop_target() {
  const Token& t = peek();
  if (t.kind == Tok::ident) return make_expr(Kind::id, take().pos, t.text);
  if (t.kind != Tok::lparen) fail_expected(t, "a loop variable (a name or a tuple of names)");
  DepthGuard guard(*this, t.pos);
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  ExprPtr tuple = make_expr(Kind::tuple, open.pos);
  while (!at(Tok::rparen)) {
    tuple->args.push_back(parse_loop_target());
    if (!accept(Tok::comma)) break;
  }
  expect_close(Tok::rparen, open, "','");
  return tuple;
}

// ---- declarations ------------------------------------------------------------------------

ExprPtr Parser::parse_declaration() {
  const Token& kw = take();
  Kind kind = kw.text == "const" ? Kind::const_ : kw.text == "global" ? Kind::global : Kind::local;
  ExprPtr node = make_expr(kind, kw.pos);
  if (kind == Kind::const_) {
    require_top_level(kw);
    ExprPtr assign = parse_statement();
    if (assign->kind != Kind::assign) fail(assign->pos, "expected 'name = value' after 'const'");
    node->args.push_back(std::move(assign));
    return node;
  }
  do {
    ExprPtr item = parse_assignment();
    bool update = kind == Kind::global && item->kind == Kind::op_assign;  // global n += 1
    const Expr& target = item->kind == Kind::assign || update ? *item->args[0] : *item;
    bool named =
        target.kind == Kind::id || (target.kind == Kind::decl && target.args[0]->kind == Kind::id);
    if (!named || (kind == Kind::global && target.kind == Kind::decl)) {
      fail(item->pos, fmt::format("expected a variable name after '{}'", kw.text));
    }
    node->args.push_back(std::move(item));
  } while (accept(Tok::comma));
  return node;
}

// `using A.B`, `using A: x, y`, `import Base: +`: kept as written for the interpreter.
ExprPtr Parser::parse_using() {
  const Token& kw = take();
  require_top_level(kw);
  const Token* first = nullptr;
  const Token* last = nullptr;
  bool names = false;  // after `A:` come names, which may be operators
  while (!at(Tok::newline) && !at(Tok::semicolon) && !at(Tok::eof)) {
    const Token& t = peek();
    bool separator =
        t.kind == Tok::comma || (t.kind == Tok::op && (t.text == "." || t.text == ":"));
    bool name = t.kind == Tok::ident ||
                (names && (t.kind == Tok::op || t.kind == Tok::keyword || t.kind == Tok::macro));
    bool after_name = last && last->kind != Tok::comma && last->text != "." && last->text != ":";
    if ((!separator && !name) || (name && after_name) || (separator && !after_name)) {
      fail_expected(t, fmt::format("a module path after '{}', as in 'A.B' or 'A: x, y'", kw.text));
    }
    names = names || t.text == ":";
    last = &take();
    if (!first) first = last;
  }
  if (!last || last->kind == Tok::comma || last->text == "." || last->text == ":") {
    fail_expected(peek(), fmt::format("a module name after '{}'", kw.text));
  }
  std::string_view text = sources_.file(file_).text;
  std::string spelling(text.substr(first->offset, last->offset + last->length - first->offset));
  return make_expr(kw.text == "using" ? Kind::using_ : Kind::import_, kw.pos, spelling);
}

}  // namespace parse_internal

ExprPtr parse_file(const Sources& sources, uint32_t file) {
  return parse_internal::Parser(sources, file, lex(sources, file)).parse_file();
}

ExprPtr parse_text(Sources& sources, std::string path, std::string text) {
  uint32_t file = sources.add(std::move(path), std::move(text));
  return parse_file(sources, file);
}

}  // namespace ytape::tracer
