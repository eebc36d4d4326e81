// Primaries and everything written between brackets: parentheses (grouping, tuples, named
// tuples, blocks, generators), call arguments, array literals and comprehensions, indexing,
// and strings with interpolation.
#include <fmt/format.h>

#include <algorithm>
#include <string_view>

#include "tracer/lang/parser_impl.h"

namespace ytape::tracer::parse_internal {

namespace {

ExprPtr with_child(ExprPtr node, ExprPtr child) {
  node->args.push_back(std::move(child));
  return node;
}

// In parentheses, `(a = 1)` and `(a = 1; b)` assign: parse_item read `a = 1` as a keyword.
ExprPtr kw_to_assign(ExprPtr item) {
  if (item->kind != Kind::kw) return item;
  ExprPtr assign = make_expr(Kind::assign, item->pos);
  assign->args.push_back(make_expr(Kind::id, item->pos, item->name));
  assign->args.push_back(std::move(item->args[0]));
  return assign;
}

}  // namespace

ExprPtr Parser::parse_primary() {
  const Token& t = peek();
  if (t.kind == Tok::op && t.text == "$") return parse_interpolated();
  switch (t.kind) {
    case Tok::integer: {
      ExprPtr e = make_expr(Kind::int_lit, take().pos);
      e->int_value = t.int_value;
      return e;
    }
    case Tok::floating: {
      ExprPtr e = make_expr(Kind::float_lit, take().pos);
      e->float_value = t.float_value;
      e->float32 = t.float32;
      return e;
    }
    case Tok::string:
      return parse_string();
    case Tok::ident:
      if (after().kind == Tok::op && after().text == "->") return parse_lambda();
      if (after().kind == Tok::string && !after().space_before) return parse_prefixed_string();
      return make_expr(Kind::id, take().pos, t.text);
    case Tok::keyword:
      // `in` where an operand starts is a name: the function (`in(x, xs)`) or a variable
      // (Flux's `trainable(in::InstanceNorm) = in.β`); between operands it is an operator.
      if (t.text == "in") return make_expr(Kind::id, take().pos, t.text);
      return parse_keyword();
    case Tok::macro:
      return parse_macro();
    case Tok::lparen:
      return at_lambda_params() ? parse_lambda() : parse_parenthesized();
    case Tok::lbracket:
      return parse_brackets(take());
    case Tok::lbrace:
      fail(t.pos, "braces are only used for type parameters, as in 'Vector{Float32}'");
    case Tok::op:
      if (t.text == ":") return parse_colon();
      if (operator_is_value()) {
        const Token& op = take();
        if (!is_dotted(op.text)) return make_expr(Kind::id, op.pos, op.text);
        ExprPtr call = make_expr(Kind::call, op.pos);
        call->args.push_back(make_expr(Kind::id, op.pos, "BroadcastFunction"));
        call->args.push_back(make_expr(Kind::id, op.pos, std::string(undotted(op.text))));
        return call;
      }
      break;
    default:
      break;
  }
  fail_expected(t, "an expression");
}

ExprPtr Parser::parse_colon() {
  const Token& colon = take();
  const Token& next = peek();
  if (!next.space_before && (next.kind == Tok::ident || next.kind == Tok::keyword)) {
    return make_expr(Kind::symbol, colon.pos, take().text);
  }
  if (!next.space_before && next.kind == Tok::lparen) {
    fail(colon.pos, "quoted expressions ':( ... )' are not supported");
  }
  return make_expr(Kind::colon, colon.pos);
}

// ---- parentheses -------------------------------------------------------------------------

ExprPtr Parser::parse_parenthesized() {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  if (accept(Tok::rparen)) return make_expr(Kind::tuple, open.pos);
  if (accept(Tok::semicolon)) {
    ExprPtr named = make_expr(Kind::named_tuple, open.pos);
    while (!at(Tok::rparen)) {
      named->args.push_back(as_keyword(parse_item(true)));
      if (!accept(Tok::comma)) break;
    }
    expect_close(Tok::rparen, open, "','");
    return named;
  }
  ExprPtr first = parse_item(true, true);
  if (at(Tok::comma)) return parse_tuple_rest(std::move(first), open);
  if (at(Tok::semicolon) && first->kind != Kind::generator) {
    // `(a = 1; a + 1)` is a block, as in Julia.
    if (first->kind == Kind::splat) fail(first->pos, "expected an expression before ';'");
    ExprPtr block = make_expr(Kind::block, open.pos);
    block->args.push_back(kw_to_assign(std::move(first)));
    while (accept(Tok::semicolon)) {
      if (at(Tok::rparen)) break;
      block->args.push_back(parse_assignment());
    }
    expect_close(Tok::rparen, open, "';'");
    return block;
  }
  expect_close(Tok::rparen, open, "','");
  if (first->kind == Kind::kw) return kw_to_assign(std::move(first));
  if (first->kind == Kind::splat) {
    return with_child(make_expr(Kind::tuple, open.pos), std::move(first));
  }
  return first;
}

ExprPtr Parser::parse_tuple_rest(ExprPtr first, const Token& open) {
  std::vector<ExprPtr> items;
  items.push_back(std::move(first));
  while (accept(Tok::comma)) {
    if (at(Tok::rparen)) break;
    items.push_back(parse_item(true));
  }
  expect_close(Tok::rparen, open, "','");
  size_t named = 0;
  for (const ExprPtr& item : items) {
    if (item->kind == Kind::generator) {
      fail(item->pos, "a generator must be alone in its parentheses: '(f(x) for x in xs)'");
    }
    named += item->kind == Kind::kw;
  }
  if (named != 0 && named != items.size()) {
    fail(open.pos, "a tuple cannot mix 'name = value' fields with plain values");
  }
  ExprPtr tuple = make_expr(named ? Kind::named_tuple : Kind::tuple, open.pos);
  tuple->args = std::move(items);
  return tuple;
}

ExprPtr Parser::parse_item(bool keywords_allowed, bool assignments) {
  ExprPtr e = parse_expr();
  if (assignments && is_assignment_op(peek()) && !(at_op("=") && e->kind == Kind::id)) {
    return finish_assignment(std::move(e), false);
  }
  if (at_op("...")) return with_child(make_expr(Kind::splat, take().pos), std::move(e));
  if (keywords_allowed && at_op("=")) {
    if (e->kind != Kind::id) fail(e->pos, "expected a plain name before '=' here");
    take();
    skip_newlines();
    return with_child(make_expr(Kind::kw, e->pos, e->name), parse_expr());
  }
  if (at_kw("for")) return parse_generator(std::move(e), Kind::generator);
  return e;
}

ExprPtr Parser::as_keyword(ExprPtr item) {
  switch (item->kind) {
    case Kind::kw:
      return item;
    case Kind::id:
    case Kind::field: {
      ExprPtr kw = make_expr(Kind::kw, item->pos, item->name);
      return with_child(std::move(kw), std::move(item));
    }
    case Kind::splat:
      item->kind = Kind::kw_splat;
      return item;
    default:
      fail(item->pos, "expected a keyword argument after ';': 'name = value', 'name' or 'kws...'");
  }
}

ExprPtr Parser::parse_generator(ExprPtr body, Kind kind) {
  ContextScope scope(*this, paren_context(ctx_));
  ExprPtr node = make_expr(kind, body->pos);
  node->args.push_back(std::move(body));
  while (true) {
    if (accept_kw("for")) {
      node->args.push_back(parse_iteration());
    } else if (at_kw("if")) {
      ExprPtr filter = make_expr(Kind::filter, take().pos);
      node->args.push_back(with_child(std::move(filter), parse_expr()));
    } else {
      return node;
    }
  }
}

// ---- calls -----------------------------------------------------------------------------

ExprPtr Parser::parse_call(ExprPtr callee, Kind kind) {
  const Token& open = take();
  ContextScope scope(*this, paren_context(ctx_));
  ExprPtr call = make_expr(kind, callee->pos);
  call->args.push_back(std::move(callee));
  bool keywords = false;
  while (!at(Tok::rparen)) {
    if (at(Tok::semicolon)) {
      if (keywords) fail(peek().pos, "a call has one ';', before its keyword arguments");
      take();
      keywords = true;
      continue;
    }
    ExprPtr item = parse_item(true);
    call->args.push_back(keywords ? as_keyword(std::move(item)) : std::move(item));
    if (!accept(Tok::comma) && !at(Tok::semicolon)) break;
  }
  expect_close(Tok::rparen, open, "','");
  return call;
}

// ---- brackets ----------------------------------------------------------------------------

ExprPtr Parser::parse_brackets(const Token& open) {
  ContextScope scope(*this, {.space_sensitive = true, .in_index = ctx_.in_index});
  skip_newlines();
  if (accept(Tok::rbracket)) return make_expr(Kind::vect, open.pos);
  ExprPtr first = parse_item(false);
  size_t i = index();
  while (token_at(i).kind == Tok::newline) ++i;
  if (first->kind != Kind::generator && token_at(i).kind == Tok::keyword &&
      token_at(i).text == "for") {
    skip_newlines();
    first = parse_generator(std::move(first), Kind::generator);
  }
  if (first->kind == Kind::generator) {
    first->kind = Kind::comprehension;
    first->pos = open.pos;
    skip_newlines();
    expect_close(Tok::rbracket, open);
    return first;
  }
  if (at(Tok::comma)) return parse_vect_rest(std::move(first), open);
  return parse_rows(std::move(first), open);
}

ExprPtr Parser::parse_vect_rest(ExprPtr first, const Token& open) {
  ExprPtr vect = make_expr(Kind::vect, open.pos);
  vect->args.push_back(std::move(first));
  while (accept(Tok::comma)) {
    skip_newlines();
    if (at(Tok::rbracket)) break;
    vect->args.push_back(parse_item(false));
    skip_newlines();
  }
  expect_close(Tok::rbracket, open, "','");
  return vect;
}

// `[a b; c d]`: elements separated by spaces, rows by ';' or line breaks.
ExprPtr Parser::parse_rows(ExprPtr first, const Token& open) {
  ExprPtr matrix = make_expr(Kind::matrix, open.pos);
  ExprPtr row = make_expr(Kind::row, first->pos);
  row->args.push_back(std::move(first));
  bool semicolon = false;
  while (!at(Tok::rbracket)) {
    const Token& t = peek();
    if (t.kind == Tok::semicolon || t.kind == Tok::newline) {
      bool previous_semicolon = false;
      while (at(Tok::semicolon) || at(Tok::newline)) {
        bool is_semicolon = at(Tok::semicolon);
        if (is_semicolon && previous_semicolon) {
          fail(peek().pos,
               "';;' (concatenation in higher dimensions) is not supported; use "
               "cat(...; dims=3)");
        }
        previous_semicolon = is_semicolon;
        semicolon = semicolon || is_semicolon;
        take();
      }
      if (at(Tok::rbracket)) break;
      matrix->args.push_back(std::move(row));
      row = make_expr(Kind::row, peek().pos);
    } else if (!t.space_before || t.kind == Tok::comma || t.kind == Tok::eof || is_closer(t) ||
               (t.kind == Tok::keyword && t.text == "for")) {
      expect_close(Tok::rbracket, open);
    }
    row->args.push_back(parse_item(false));
  }
  take();
  matrix->args.push_back(std::move(row));
  if (matrix->args.size() == 1 && matrix->args[0]->args.size() == 1 && !semicolon) {
    return with_child(make_expr(Kind::vect, open.pos), std::move(matrix->args[0]->args[0]));
  }
  return matrix;
}

ExprPtr Parser::parse_index(ExprPtr object) {
  const Token& open = take();
  ExprPtr body;
  {
    Context index = ctx_;
    index.in_index = true;
    ContextScope scope(*this, index);
    body = parse_brackets(open);
  }
  if (body->kind != Kind::vect) {
    ExprPtr typed = make_expr(Kind::typed_array, object->pos);
    typed->args.push_back(std::move(object));
    typed->args.push_back(std::move(body));
    return typed;
  }
  ExprPtr node = make_expr(Kind::index, object->pos);
  node->args.push_back(std::move(object));
  for (ExprPtr& i : body->args) node->args.push_back(std::move(i));
  return node;
}

// ---- strings -----------------------------------------------------------------------------

// A string with a name before it, Julia's non-standard string literal: v"1.7.2", a version
// number, becomes the call VersionNumber(1, 7, 2) (the prelude defines the type; a missing
// minor or patch part is 0). Others are refused by name.
ExprPtr Parser::parse_prefixed_string() {
  const Token& name = take();
  const Token& str = take();
  if (name.text != "v") {
    fail(name.pos, fmt::format("string literals with a prefix ({}\"...\") are not supported, "
                               "but for version numbers (v\"1.7\"), raw\"...\", lazy\"...\" "
                               "and the documentation ones (L, md, doc, html, text)",
                               name.text));
  }
  ExprPtr call = make_expr(Kind::call, name.pos);
  call->args.push_back(make_expr(Kind::id, name.pos, "VersionNumber"));
  std::string_view text = str.text;
  for (int part = 0; part < 3; ++part) {
    size_t dot = std::min(text.find('.'), text.size());
    std::string_view digits = text.substr(0, dot);
    ExprPtr n = make_expr(Kind::int_lit, str.pos);
    bool ok = str.parts.empty() && !digits.empty() && digits.size() <= 9 &&
              digits.find_first_not_of("0123456789") == std::string_view::npos;
    if (!ok && !(part > 0 && text.empty())) {
      fail(str.pos, fmt::format("'{}' is not a version number: give up to three numbers joined "
                                "by dots, as \"1.7.2\"",
                                str.text));
    }
    for (char c : digits) n->int_value = n->int_value * 10 + (c - '0');
    call->args.push_back(std::move(n));
    text = dot < text.size() ? text.substr(dot + 1) : std::string_view();
  }
  if (!text.empty()) {
    fail(str.pos, fmt::format("'{}' is not a version number: at most three parts", str.text));
  }
  return call;
}

ExprPtr Parser::parse_string() {
  const Token& t = take();
  if (t.parts.empty()) return make_expr(Kind::string_lit, t.pos, t.text);
  ExprPtr node = make_expr(Kind::interp, t.pos);
  for (const StringPart& part : t.parts) {
    if (!part.is_expr) {
      node->args.push_back(make_expr(Kind::string_lit, t.pos, part.text));
      continue;
    }
    Parser inner(sources_, file_, lex_range(sources_, file_, part.begin, part.end, part.pos),
                 depth_);
    node->args.push_back(inner.parse_interpolation());
  }
  return node;
}

// `$name` or `$(expression)` inside @eval.
ExprPtr Parser::parse_interpolated() {
  const Token& dollar = take();
  if (eval_depth_ == 0) {
    fail(dollar.pos, "'$' is only allowed inside strings, for interpolation, and inside @eval");
  }
  ExprPtr node = make_expr(Kind::interpolate, dollar.pos);
  if (at(Tok::ident) && !peek().space_before) {
    node->args.push_back(make_expr(Kind::id, peek().pos, take().text));
  } else if (at(Tok::lparen) && !peek().space_before) {
    const Token& open = take();
    ContextScope scope(*this, paren_context(ctx_));
    node->args.push_back(parse_assignment());
    expect_close(Tok::rparen, open, "')'");
  } else {
    fail_expected(peek(), "a name or '(' right after '$'");
  }
  return node;
}

}  // namespace ytape::tracer::parse_internal
