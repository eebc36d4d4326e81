// Definitions: functions (long and short form, callable structs), lambdas and do blocks
// with their parameters, type expressions, structs and abstract types.
#include <fmt/format.h>

#include "tracer/lang/parser_impl.h"

namespace ytape::tracer::parse_internal {

namespace {

ExprPtr make_function(Kind kind, Pos pos, std::unique_ptr<Function> f) {
  ExprPtr node = make_expr(kind, pos);
  node->function = std::move(f);
  return node;
}

}  // namespace

// ---- functions ---------------------------------------------------------------------------

ExprPtr Parser::parse_function_keyword() {
  const Token& kw = take();
  auto f = std::make_unique<Function>();
  Kind kind = Kind::function;
  if (at_op("$") && eval_depth_ > 0) {  // `function $f(x) ... end` inside @eval
    f->name_expr = parse_interpolated();
    f->name = "$";
    if (!at(Tok::lparen)) fail_expected(peek(), "'(' after the interpolated name");
  } else if (at(Tok::ident) || (at(Tok::op) && is_function_operator(peek().text))) {
    f->name = parse_function_name();
    if (!at(Tok::lparen)) fail_expected(peek(), fmt::format("'(' after '{}'", f->name));
  } else if (at(Tok::lparen)) {
    size_t close = matching(index());
    const Token& next = token_at(close + 1);
    if (close != 0 && next.kind == Tok::lparen && !next.space_before) {
      f->receiver = parse_receiver();
    } else {
      kind = Kind::lambda;
    }
  } else {
    fail_expected(peek(), "a function name or '(' after 'function'");
  }
  parse_params(*f);
  if (at_op("::")) fail(peek().pos, "return type annotations ('f(x)::T') are not supported");
  parse_where(*f);
  LocalScope local(*this);
  f->body = parse_block(&kw, {"end"});
  expect_end(kw);
  return make_function(kind, kw.pos, std::move(f));
}

bool Parser::at_short_definition() {
  size_t i = index();
  const Token& first = peek();
  if (first.kind == Tok::op && first.text == "$" && eval_depth_ > 0) {
    // `$f(x) = ...` or `$(f)(x) = ...` inside @eval.
    ++i;
    if (token_at(i).kind == Tok::lparen) {
      i = matching(i);
      if (i == 0) return false;
    } else if (token_at(i).kind != Tok::ident) {
      return false;
    }
    ++i;
  } else if (first.kind == Tok::ident) {
    ++i;
    while (token_at(i).kind == Tok::op && token_at(i).text == "." &&
           token_at(i + 1).kind == Tok::ident) {
      i += 2;
    }
    // `Base.:*(a, b) = ...`: a method of an operator, by its module.
    if (token_at(i).kind == Tok::op && token_at(i).text == "." && token_at(i + 1).kind == Tok::op &&
        token_at(i + 1).text == ":" && token_at(i + 2).kind == Tok::op &&
        is_function_operator(token_at(i + 2).text)) {
      i += 3;
    }
  } else if ((first.kind == Tok::op && is_function_operator(first.text)) ||
             (first.kind == Tok::keyword && first.text == "in")) {
    ++i;  // a method of an operator: `|>(x, f) = f(x)`, `in(xs) = ...`
  } else if (first.kind == Tok::lparen) {
    i = matching(i);
    if (i == 0) return false;
    ++i;
  } else {
    return false;
  }
  if (token_at(i).kind != Tok::lparen || token_at(i).space_before) return false;
  i = matching(i);
  if (i == 0) return false;
  ++i;
  while (ctx_.newlines_ignored && token_at(i).kind == Tok::newline) ++i;
  const Token& next = token_at(i);
  return (next.kind == Tok::op && next.text == "=") ||
         (next.kind == Tok::keyword && next.text == "where");
}

ExprPtr Parser::parse_short_definition() {
  Pos pos = peek().pos;
  auto f = std::make_unique<Function>();
  if (at_op("$")) {
    f->name_expr = parse_interpolated();
    f->name = "$";
  } else if (at(Tok::ident) || at(Tok::op) || at_kw("in")) {
    f->name = parse_function_name();
  } else {
    f->receiver = parse_receiver();
  }
  parse_params(*f);
  parse_where(*f);
  if (!accept_op("=")) fail_expected(peek(), "'=' after the function signature");
  skip_newlines();
  LocalScope local(*this);
  f->body = parse_statement();
  return make_function(Kind::function, pos, std::move(f));
}

bool Parser::at_lambda_params() {
  size_t close = matching(index());
  if (close == 0) return false;
  size_t i = close + 1;
  while (ctx_.newlines_ignored && token_at(i).kind == Tok::newline) ++i;
  return token_at(i).kind == Tok::op && token_at(i).text == "->";
}

// `x -> body` or `(a, b; k=1) -> body`; the caller has checked that `->` follows.
ExprPtr Parser::parse_lambda() {
  Pos pos = peek().pos;
  auto f = std::make_unique<Function>();
  if (at(Tok::ident)) {
    Param param;
    param.pos = pos;
    param.name = take().text;
    f->params.push_back(std::move(param));
  } else {
    parse_params(*f);
  }
  const Token& arrow = take();
  DepthGuard guard(*this, arrow.pos);
  skip_newlines();
  LocalScope local(*this);
  f->body = parse_assignment();
  return make_function(Kind::lambda, pos, std::move(f));
}

// `call(args) do a, b ... end` passes the do block as the first argument.
ExprPtr Parser::parse_do(ExprPtr call) {
  const Token& kw = take();
  auto f = std::make_unique<Function>();
  {
    ContextScope scope(*this, Context{});
    while (!at(Tok::newline) && !at(Tok::semicolon) && !at(Tok::eof) && !at_kw("end")) {
      f->params.push_back(parse_param(false));
      if (!accept(Tok::comma)) break;
    }
    if (!at(Tok::newline) && !at(Tok::semicolon) && !at(Tok::eof) && !at_kw("end")) {
      fail_expected(peek(), "',' or a newline after the 'do' parameters");
    }
    check_params(*f);
  }
  LocalScope local(*this);
  f->body = parse_block(&kw, {"end"});
  expect_end(kw);
  call->args.insert(call->args.begin() + 1, make_function(Kind::lambda, kw.pos, std::move(f)));
  return call;
}

std::string Parser::parse_function_name() {
  std::string name = take().text;
  while (accept_op(".")) {
    if (accept_op(":")) {  // `Base.:*`
      if (!at(Tok::op) || !is_function_operator(peek().text)) {
        fail_expected(peek(), "an operator after '.:', as in 'Base.:*'");
      }
      return name + "." + take().text;
    }
    if (!at(Tok::ident)) fail_expected(peek(), "a name after '.'");
    name += "." + take().text;
  }
  return name;
}

Param Parser::parse_receiver() {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  Param receiver = parse_param(false);
  if (!receiver.type || receiver.splat || receiver.default_value || !receiver.unpack.empty()) {
    fail(receiver.pos, "a callable struct method is written '(m::Type)(x) = ...'");
  }
  expect_close(Tok::rparen, open);
  return receiver;
}

// ---- parameters ------------------------------------------------------------------------

void Parser::parse_params(Function& f) {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  bool keywords = false;
  while (!at(Tok::rparen)) {
    if (at(Tok::semicolon)) {
      if (keywords) fail(peek().pos, "parameters have one ';', before the keyword parameters");
      take();
      keywords = true;
      continue;
    }
    (keywords ? f.kwparams : f.params).push_back(parse_param(keywords));
    if (!accept(Tok::comma) && !at(Tok::semicolon)) break;
  }
  expect_close(Tok::rparen, open, "','");
  check_params(f);
}

// `(a, (b, c))` of a destructuring parameter, from its `(`: names (`in` too, as in Julia)
// and groups, nested as the tuple the argument is.
std::vector<Unpack> Parser::parse_unpack() {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  std::vector<Unpack> parts;
  while (at(Tok::ident) || at_kw("in") || at(Tok::lparen)) {
    if (at(Tok::lparen)) {
      parts.push_back({"", parse_unpack()});
    } else {
      parts.push_back({take().text, {}});
    }
    if (!accept(Tok::comma)) break;
  }
  if (parts.empty()) fail_expected(peek(), "a name to unpack into");
  expect_close(Tok::rparen, open, "','");
  return parts;
}

Param Parser::parse_param(bool keyword) {
  Param p;
  p.pos = peek().pos;
  if (at(Tok::lparen) && !keyword) {
    p.unpack = parse_unpack();
    // Outside the parentheses, so that a newline after a do block's `(a, b)` ends it.
    if (accept_op("::")) p.type = parse_type();  // `f((a, b)::Tuple{Int, Int})`
    return p;
  }
  if (accept_op("::")) {
    if (keyword) fail(p.pos, "a keyword parameter needs a name");
    p.type = parse_type();
  } else if (at(Tok::ident) || at_kw("in")) {  // `in` names a parameter too, as in Julia
    p.name = take().text;
    if (accept_op("::")) p.type = parse_type();
  } else {
    fail_expected(peek(), "a parameter name");
  }
  p.splat = accept_op("...");
  // `xs::Vararg{T}` (or `Vararg{T, N}`, `Vararg`) is `xs::T...`; a where variable N is
  // bound to the count.
  if (!p.splat && p.type && (p.type->kind == Kind::id || p.type->kind == Kind::curly)) {
    const Expr& head = p.type->kind == Kind::curly ? *p.type->args[0] : *p.type;
    if (head.kind == Kind::id && head.name == "Vararg") {
      p.splat = true;
      if (p.type->kind == Kind::curly && p.type->args.size() == 3 &&
          p.type->args[2]->kind == Kind::id)
        p.vararg_count = p.type->args[2]->name;
      p.type = p.type->kind == Kind::curly && p.type->args.size() > 1 ? std::move(p.type->args[1])
                                                                      : nullptr;
    }
  }
  if (at_op("=")) {
    if (p.splat) fail(peek().pos, "a varargs parameter cannot have a default value");
    take();
    skip_newlines();
    p.default_value = parse_expr();
  }
  return p;
}

void Parser::check_params(const Function& f) const {
  bool defaults = false;
  for (size_t i = 0; i < f.params.size(); ++i) {
    const Param& p = f.params[i];
    if (p.splat && i + 1 != f.params.size()) {
      fail(p.pos,
           fmt::format("the varargs parameter '{}...' must be the last positional one", p.name));
    }
    if (p.default_value) {
      defaults = true;
    } else if (defaults && !p.splat) {
      fail(p.pos, "a parameter without a default value cannot follow one with a default");
    }
  }
  for (size_t i = 0; i + 1 < f.kwparams.size(); ++i) {
    if (f.kwparams[i].splat) {
      fail(f.kwparams[i].pos,
           fmt::format("the keyword varargs '{}...' must come last", f.kwparams[i].name));
    }
  }
}

void Parser::parse_where(Function& f) {
  while (accept_kw("where")) {
    if (!at(Tok::lbrace)) {
      f.where.push_back(parse_type_param());
      continue;
    }
    const Token& open = take();
    ContextScope scope(*this, paren_context(ctx_));
    while (!at(Tok::rbrace)) {
      f.where.push_back(parse_type_param());
      if (!accept(Tok::comma)) break;
    }
    expect_close(Tok::rbrace, open, "','");
  }
}

// ---- types -------------------------------------------------------------------------------

ExprPtr Parser::parse_type_param() {
  const Token& t = peek();
  if (t.kind != Tok::ident) fail_expected(t, "a type parameter name");
  ExprPtr name = make_expr(Kind::id, take().pos, t.text);
  if (!at_op("<:") && !at_op(">:")) return name;
  const Token& op = take();
  return make_operator_call(op, std::move(name), parse_type());
}

ExprPtr Parser::parse_type() {
  const Token& t = peek();
  DepthGuard guard(*this, t.pos);
  if (t.kind == Tok::op && (t.text == "<:" || t.text == ">:")) {
    take();
    return make_operator_call(t, parse_type());
  }
  if (t.kind == Tok::integer) {
    ExprPtr e = make_expr(Kind::int_lit, take().pos);
    e->int_value = t.int_value;
    return e;
  }
  // Values as type parameters, for `Val{:relu}` and `Val{true}`.
  if (t.kind == Tok::op && t.text == ":" && after().kind == Tok::ident && !after().space_before) {
    take();
    return make_expr(Kind::symbol, t.pos, take().text);
  }
  if (t.kind == Tok::keyword && (t.text == "true" || t.text == "false")) {
    ExprPtr e = make_expr(Kind::bool_lit, take().pos);
    e->int_value = t.text == "true";
    return e;
  }
  if (t.kind != Tok::ident) fail_expected(t, "a type");
  ExprPtr type = make_expr(Kind::id, take().pos, t.text);
  while (at_op(".") && after().kind == Tok::ident) {
    take();
    const Token& name = take();
    ExprPtr field = make_expr(Kind::field, name.pos, name.text);
    field->args.push_back(std::move(type));
    type = std::move(field);
  }
  if (at(Tok::lbrace) && !peek().space_before) type = parse_curly(std::move(type));
  // `typeof(f)` and other calls that give a type, as in Parallel{typeof(hcat), Tuple{}}.
  if (at(Tok::lparen) && !peek().space_before && type->kind == Kind::id)
    type = parse_call(std::move(type), Kind::call);
  return type;
}

ExprPtr Parser::parse_curly(ExprPtr head) {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  ExprPtr curly = make_expr(Kind::curly, head->pos);
  curly->args.push_back(std::move(head));
  while (!at(Tok::rbrace)) {
    curly->args.push_back(parse_type());
    if (!accept(Tok::comma)) break;
  }
  expect_close(Tok::rbrace, open, "','");
  return curly;
}

// ---- structs and abstract types ----------------------------------------------------------

ExprPtr Parser::parse_struct() {
  const Token& kw = take();
  require_top_level(kw);
  auto s = std::make_unique<StructDef>();
  s->is_mutable = kw.text == "mutable";
  if (s->is_mutable && !accept_kw("struct")) fail_expected(peek(), "'struct' after 'mutable'");
  if (!at(Tok::ident)) fail_expected(peek(), "a struct name");
  s->name = take().text;
  if (at(Tok::lbrace) && !peek().space_before) {
    const Token& open = take();
    ContextScope scope(*this, paren_context(ctx_));
    while (!at(Tok::rbrace)) {
      s->type_params.push_back(parse_type_param());
      if (!accept(Tok::comma)) break;
    }
    expect_close(Tok::rbrace, open, "','");
  }
  if (accept_op("<:")) s->supertype = parse_type();
  s->kwdef = kwdef_;
  kwdef_ = false;
  parse_fields(*s, kw);
  expect_end(kw);
  std::vector<ExprPtr> constructors = std::move(s->constructors);
  ExprPtr node = make_expr(Kind::struct_, kw.pos);
  node->struct_def = std::move(s);
  if (constructors.empty()) return node;
  // The struct, then its inner constructors as methods of its name (a top-level block
  // opens no scope).
  ExprPtr block = make_expr(Kind::block, kw.pos);
  block->args.push_back(std::move(node));
  for (ExprPtr& c : constructors) block->args.push_back(std::move(c));
  return block;
}

namespace {

// `new(args...)` and `new{T...}(args...)` in an inner constructor of `type`:
// `new_struct(type, args...)`, which makes the instance without calling a constructor.
void rewrite_new(Expr& e, const std::string& type) {
  if (e.kind == Kind::call && !e.args.empty()) {
    Expr& callee = *e.args[0];
    bool is_new = (callee.kind == Kind::id && callee.name == "new") ||
                  (callee.kind == Kind::curly && callee.args[0]->kind == Kind::id &&
                   callee.args[0]->name == "new");
    if (is_new) {
      e.args[0] = make_expr(Kind::id, callee.pos, "new_struct");
      e.args.insert(e.args.begin() + 1, make_expr(Kind::id, e.args[0]->pos, type));
    }
  }
  for (ExprPtr& a : e.args) {
    if (a) rewrite_new(*a, type);
  }
  if (e.function && e.function->body) rewrite_new(*e.function->body, type);
}

}  // namespace

// An inner constructor: a method of the struct's name, as after the struct, whose `new`
// makes the instance.
ExprPtr Parser::parse_inner_constructor(const std::string& type) {
  Pos pos = peek().pos;
  if (at(Tok::ident) && after().kind == Tok::lbrace) {
    fail(pos, fmt::format("inner constructors with type parameters ('{0}{{T}}(...)') are not "
                          "supported; write '{0}(x::T, ...) where {{T}} = new(x, ...)'",
                          type));
  }
  ExprPtr def = parse_statement();
  if (def->kind != Kind::function || !def->function || def->function->name != type) {
    fail(pos, fmt::format("a struct holds fields and constructors of its own name, as in "
                          "'{0}(x) = new(x)'; define other functions after the struct",
                          type));
  }
  rewrite_new(*def->function->body, type);
  return def;
}

void Parser::parse_fields(StructDef& s, const Token& opener) {
  ContextScope scope(*this, Context{});
  while (true) {
    while (at(Tok::newline) || at(Tok::semicolon)) take();
    const Token& t = peek();
    if (t.kind == Tok::eof || (t.kind == Tok::keyword && t.text == "end")) return;
    if (t.kind == Tok::string) {  // a docstring
      take();
      continue;
    }
    if ((t.kind == Tok::keyword && t.text == "function") ||
        (t.kind == Tok::ident && (after().kind == Tok::lparen || after().kind == Tok::lbrace))) {
      s.constructors.push_back(parse_inner_constructor(s.name));
      continue;
    }
    if (t.kind != Tok::ident) {
      if (is_closer(t)) fail_unclosed(&opener, t);
      fail_expected(t, fmt::format("a field name or 'end' in struct '{}'", s.name));
    }
    for (const Field& field : s.fields) {
      if (field.name == t.text) fail(t.pos, fmt::format("duplicate field '{}'", t.text));
    }
    Field field{t.pos, take().text, nullptr, nullptr};
    if (accept_op("::")) field.type = parse_type();
    if (at_op("=") && !s.kwdef) {
      fail(peek().pos, "struct fields have default values only in a '@kwdef struct'");
    }
    if (accept_op("=")) field.default_value = parse_expr();
    s.fields.push_back(std::move(field));
    if (!at(Tok::newline) && !at(Tok::semicolon) && !at_kw("end") && !at(Tok::eof)) {
      fail(peek().pos, fmt::format("expected a newline or ';' before {}", describe(peek())));
    }
  }
}

ExprPtr Parser::parse_abstract() {
  const Token& kw = take();
  require_top_level(kw);
  if (!at(Tok::ident) || peek().text != "type") fail_expected(peek(), "'type' after 'abstract'");
  take();
  if (!at(Tok::ident)) fail_expected(peek(), "a type name");
  ExprPtr node = make_expr(Kind::abstract_type, kw.pos, take().text);
  if (accept_op("<:")) node->args.push_back(parse_type());
  expect_end(kw);
  return node;
}

}  // namespace ytape::tracer::parse_internal
