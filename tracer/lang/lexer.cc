#include "tracer/lang/lexer.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <charconv>
#include <limits>

#include "tape/error.h"
#include "tracer/lang/unicode.h"

namespace ytape::tracer {

namespace {

// Sorted, for binary search. The unsupported ones (try, macro, module, ...) are keywords so
// that the parser can say they are not supported instead of misreading them.
constexpr std::array<std::string_view, 35> kKeywords = {
    "abstract", "baremodule", "begin",  "break",   "catch",   "const",     "continue",
    "do",       "else",       "elseif", "end",     "export",  "false",     "finally",
    "for",      "function",   "global", "if",      "import",  "in",        "let",
    "local",    "macro",      "module", "mutable", "nothing", "primitive", "quote",
    "return",   "struct",     "true",   "try",     "using",   "where",     "while",
};

// Every operator but `...`, the dotted forms and `'`. Unicode aliases map to their ASCII
// spelling so that the parser and the interpreter know one name per operator.
struct OpSpelling {
  std::string_view source;
  std::string_view name;
  bool dottable;
};
constexpr OpSpelling kOps[] = {
    {">>>=", ">>>=", true}, {"===", "===", true}, {"!==", "!==", true}, {">>>", ">>>", true},
    {"<<=", "<<=", true},   {">>=", ">>=", true}, {"//=", "//=", true}, {"->", "->", false},
    {"=>", "=>", true},     {"==", "==", true},   {"!=", "!=", true},   {"<=", "<=", true},
    {">=", ">=", true},     {"<:", "<:", false},  {">:", ">:", false},  {"&&", "&&", true},
    {"||", "||", true},     {"|>", "|>", true},   {"<|", "<|", true},   {"<<", "<<", true},
    {">>", ">>", true},     {"//", "//", true},   {"::", "::", false},  {"+=", "+=", true},
    {"-=", "-=", true},     {"*=", "*=", true},   {"/=", "/=", true},   {"\\=", "\\=", true},
    {"^=", "^=", true},     {"%=", "%=", true},   {"|=", "|=", true},   {"&=", "&=", true},
    {"÷=", "÷=", true},     {"⊻=", "⊻=", true},   {"+", "+", true},     {"-", "-", true},
    {"*", "*", true},       {"/", "/", true},     {"\\", "\\", true},   {"^", "^", true},
    {"%", "%", true},       {"&", "&", true},     {"|", "|", true},     {"<", "<", true},
    {">", ">", true},       {"=", "=", true},     {"!", "!", true},     {"~", "~", true},
    {":", ":", false},      {"?", "?", false},    {"÷", "÷", true},     {"√", "√", true},
    {"⊻", "⊻", true},       {"∘", "∘", false},    {"≈", "≈", true},     {"≤", "<=", true},
    {"≥", ">=", true},      {"≠", "!=", true},    {"∉", "∉", true},     {"⋅", "⋅", true},
    {"∈", "in", true},      {"⊠", "⊠", true},
};

// The longest operator `text` starts with (only those that take a dot when `dotted`).
const OpSpelling* longest_op(std::string_view text, bool dotted) {
  const OpSpelling* best = nullptr;
  if (text.empty()) return nullptr;
  for (const OpSpelling& op : kOps) {
    if (op.source[0] == text[0] && (!dotted || op.dottable) && text.starts_with(op.source) &&
        (!best || op.source.size() > best->source.size())) {
      best = &op;
    }
  }
  return best;
}

bool is_digit(char c) {
  return c >= '0' && c <= '9';
}
bool is_ascii_letter(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z');
}
// The value of a hexadecimal digit, or 99.
int hex_value(char c) {
  if (is_digit(c)) return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  return c >= 'A' && c <= 'F' ? c - 'A' + 10 : 99;
}

// Julia accepts any Unicode letter in names; these ranges cover what model code uses
// (accented Latin, IPA letters, µ, Greek such as σ and η, combining marks, letters with
// marks such as ẋ, ∇, primes, sub- and superscripts, math letters).
bool is_unicode_letter(uint32_t cp) {
  if (cp == 0xD7 || cp == 0xF7) return false;  // × and ÷ are operators
  return cp == 0xB5 || (cp >= 0xC0 && cp <= 0x2AF) || (cp >= 0x300 && cp <= 0x3FF) ||
         (cp >= 0x1D00 && cp <= 0x1DBF) || (cp >= 0x1E00 && cp <= 0x1FFF) ||
         (cp >= 0x2032 && cp <= 0x2037) || (cp >= 0x2070 && cp <= 0x209F) ||
         (cp >= 0x2100 && cp <= 0x214F) || cp == 0x2207 || (cp >= 0x1D400 && cp <= 0x1D7FF);
}

class Lexer {
 public:
  Lexer(const Sources& sources, uint32_t file, uint32_t begin, uint32_t end, Pos start)
      : sources_(sources),
        file_(file),
        text_(sources.file(file).text),
        i_(begin),
        end_(end),
        line_(start.line),
        col_(start.col) {}

  std::vector<Token> run();

 private:
  char peek(size_t ahead = 0) const { return i_ + ahead < end_ ? text_[i_ + ahead] : '\0'; }
  Pos here() const { return {file_, line_, col_}; }
  [[noreturn]] void fail(Pos pos, const std::string& message) const { sources_.fail(pos, message); }
  void advance(size_t n = 1);
  /// Advances over one code point.
  void advance_char();
  uint32_t code_point(size_t at, size_t* length) const;
  bool at_ident_char(bool first) const;

  bool skip_blanks();
  void skip_block_comment();
  Token& emit(Tok kind, Pos pos, size_t begin, bool space);
  void lex_token(bool space);
  void lex_word(bool space);
  void lex_number(bool space);
  void lex_radix_number(bool space);
  void set_number_value(Token& token) const;
  void lex_quote(bool space);
  void lex_macro(bool space);
  void lex_operator(bool space);
  void lex_string(bool space);
  void lex_raw_string(bool space);
  // Steps over the opening quote(s) of a string; whether it is triple-quoted.
  bool open_string();
  void lex_command(bool space);
  void lex_string_escape(std::string& out);
  StringPart lex_interpolation();
  bool skip_nested_string(int depth);
  void skip_parenthesized(Pos start, int depth);

  const Sources& sources_;
  uint32_t file_;
  std::string_view text_;
  size_t i_;
  size_t end_;
  uint32_t line_;
  uint32_t col_;
  Pos last_end_;
  std::vector<Token> tokens_;
};

void Lexer::advance(size_t n) {
  for (; n > 0 && i_ < end_; --n, ++i_) {
    char c = text_[i_];
    if (c == '\n') {
      ++line_;
      col_ = 1;
    } else if ((static_cast<unsigned char>(c) & 0xC0) != 0x80) {
      ++col_;
    }
  }
}

void Lexer::advance_char() {
  size_t length = 1;
  if (static_cast<unsigned char>(peek()) >= 0x80) code_point(i_, &length);
  advance(length);
}

uint32_t Lexer::code_point(size_t at, size_t* length) const {
  uint32_t cp = decode_utf8(text_.substr(0, end_), at, length);
  if (*length == 0) fail(here(), "invalid UTF-8 in source text");
  return cp;
}

bool Lexer::at_ident_char(bool first) const {
  char c = peek();
  if (is_ascii_letter(c) || c == '_') return true;
  if (!first && is_digit(c)) return true;
  if (!first && c == '!') return peek(1) != '=';
  if (static_cast<unsigned char>(c) < 0x80) return false;
  size_t length = 0;
  uint32_t cp = code_point(i_, &length);
  // ¹ ² ³ sit apart from the other superscripts, among Latin-1's symbols: `σ²` is a name.
  if (!first && (cp == 0xB2 || cp == 0xB3 || cp == 0xB9)) return true;
  return is_unicode_letter(cp);
}

std::vector<Token> Lexer::run() {
  tokens_.reserve((end_ - i_) / 3 + 2);  // model code has about a token per 2-4 bytes
  last_end_ = here();
  bool space = false;
  while (true) {
    space = skip_blanks() || space;
    if (i_ >= end_) break;
    if (peek() == '\n') {
      if (!tokens_.empty() && tokens_.back().kind != Tok::newline) {
        emit(Tok::newline, here(), i_, space).length = 1;
      }
      advance();
      space = true;
      continue;
    }
    lex_token(space);
    last_end_ = here();
    space = false;
  }
  emit(Tok::eof, last_end_, i_, space);
  return std::move(tokens_);
}

bool Lexer::skip_blanks() {
  bool skipped = false;
  while (i_ < end_) {
    char c = peek();
    if (c == ' ' || c == '\t' || c == '\r') {
      advance();
    } else if (c == '#' && peek(1) == '=') {
      skip_block_comment();
    } else if (c == '#') {
      while (i_ < end_ && peek() != '\n') advance();
    } else {
      break;
    }
    skipped = true;
  }
  return skipped;
}

void Lexer::skip_block_comment() {
  Pos start = here();
  int depth = 0;
  do {
    if (i_ >= end_) fail(start, "unterminated '#=' comment; the closing '=#' is missing");
    if (peek() == '#' && peek(1) == '=') {
      ++depth;
      advance(2);
    } else if (peek() == '=' && peek(1) == '#') {
      --depth;
      advance(2);
    } else {
      advance();
    }
  } while (depth > 0);
}

Token& Lexer::emit(Tok kind, Pos pos, size_t begin, bool space) {
  Token& token = tokens_.emplace_back();
  token.kind = kind;
  token.pos = pos;
  token.offset = static_cast<uint32_t>(begin);
  token.length = static_cast<uint32_t>(i_ - begin);
  token.space_before = space;
  return token;
}

void Lexer::lex_token(bool space) {
  char c = peek();
  Pos pos = here();
  size_t begin = i_;
  if (is_digit(c) || (c == '.' && is_digit(peek(1)))) return lex_number(space);
  if (at_ident_char(true)) return lex_word(space);
  if (c == '"') return lex_string(space);
  if (c == '\'') return lex_quote(space);
  static constexpr std::string_view kPunct = "()[]{},;";
  static constexpr Tok kPunctTok[] = {Tok::lparen, Tok::rparen, Tok::lbracket, Tok::rbracket,
                                      Tok::lbrace, Tok::rbrace, Tok::comma,    Tok::semicolon};
  if (size_t k = kPunct.find(c); k != std::string_view::npos && c != '\0') {
    advance();
    emit(kPunctTok[k], pos, begin, space).text = c;
    return;
  }
  if (c == '@') return lex_macro(space);
  if (c == '$') {  // interpolation, inside @eval (the parser says where else)
    advance();
    emit(Tok::op, pos, begin, space).text = "$";
    return;
  }
  if (c == '`') return lex_command(space);
  lex_operator(space);
}

void Lexer::lex_word(bool space) {
  Pos pos = here();
  size_t begin = i_;
  while (i_ < end_ && at_ident_char(i_ == begin)) {
    advance_char();
  }
  std::string_view word = text_.substr(begin, i_ - begin);
  if (peek() == '"') {
    // Julia's non-standard string literals: `lazy"..."` (Base's LazyString) is a string;
    // `raw"..."` and the documentation ones keep their backslashes and `$`s.
    if (word == "lazy") return lex_string(space);
    if (word == "raw" || word == "L" || word == "md" || word == "doc" || word == "html" ||
        word == "text")
      return lex_raw_string(space);
  }
  Token& token = emit(is_keyword(word) ? Tok::keyword : Tok::ident, pos, begin, space);
  token.text = normalize_name(word);
}

// `raw"..."`, at its quote: the text as written, but that backslashes before a quote are
// halved (an odd run escapes the quote), as Julia reads it.
void Lexer::lex_raw_string(bool space) {
  Pos pos = here();
  size_t begin = i_;
  bool triple = open_string();
  std::string literal;
  size_t slashes = 0;
  while (true) {
    if (i_ >= end_) {
      fail(pos, fmt::format("unterminated string; the closing '{}' is missing",
                            triple ? "\"\"\"" : "\""));
    }
    char c = peek();
    if (c == '\\') {
      ++slashes;
      advance();
      continue;
    }
    if (c == '"') {
      literal.append(slashes / 2, '\\');
      bool escaped = slashes % 2 == 1;
      slashes = 0;
      if (!escaped && (!triple || (peek(1) == '"' && peek(2) == '"'))) {
        advance(triple ? 3 : 1);
        break;
      }
      literal += c;
      advance();
      continue;
    }
    literal.append(slashes, '\\');
    slashes = 0;
    literal += c;
    advance();
  }
  emit(Tok::string, pos, begin, space).text = std::move(literal);
}

// `@name`, and `@.`; the parser knows which macros there are.
void Lexer::lex_macro(bool space) {
  Pos pos = here();
  size_t begin = i_;
  advance();
  if (peek() == '.') {
    advance();
  } else if (at_ident_char(true)) {
    while (i_ < end_ && at_ident_char(i_ == begin + 1)) advance_char();
  } else {
    fail(pos, "expected a macro name after '@', as in '@assert' or '@.'");
  }
  Token& token = emit(Tok::macro, pos, begin, space);
  token.text.assign(text_.data() + begin, i_ - begin);
}

void Lexer::lex_quote(bool space) {
  Pos pos = here();
  size_t begin = i_;
  const Token* prev = tokens_.empty() ? nullptr : &tokens_.back();
  bool after_value =
      prev && !space &&
      (prev->kind == Tok::ident || prev->kind == Tok::integer || prev->kind == Tok::floating ||
       prev->kind == Tok::rparen || prev->kind == Tok::rbracket || prev->kind == Tok::rbrace ||
       (prev->kind == Tok::keyword &&
        (prev->text == "end" || prev->text == "true" || prev->text == "false")) ||
       (prev->kind == Tok::op && prev->text == "'"));
  if (!after_value) {
    fail(pos,
         "character literals are not supported; use a string (\"a\"). A ' right after a "
         "value is the adjoint");
  }
  advance();
  emit(Tok::op, pos, begin, space).text.assign(1, '\'');
}

void Lexer::lex_operator(bool space) {
  Pos pos = here();
  size_t begin = i_;
  std::string_view rest = text_.substr(i_, end_ - i_);
  std::string name;
  size_t length = 0;
  if (rest.starts_with("...")) {
    name = "...";
    length = 3;
  } else if (rest.starts_with("..")) {
    fail(pos, "unexpected '..'; did you mean '...' (splat) or ':' (range)?");
  } else if (rest.starts_with(".")) {
    const OpSpelling* op = longest_op(rest.substr(1), true);
    name = op ? fmt::format(".{}", op->name) : ".";
    length = op ? op->source.size() + 1 : 1;
  } else if (const OpSpelling* op = longest_op(rest, false)) {
    name = op->name;
    length = op->source.size();
  } else {
    uint32_t cp = code_point(i_, &length);
    fail(pos, cp < 0x80 && cp >= 0x20
                  ? fmt::format("unexpected character '{}'", static_cast<char>(cp))
                  : fmt::format("unexpected character U+{:04X}", cp));
  }
  advance(length);
  Tok kind = name == "in" ? Tok::keyword : Tok::op;
  emit(kind, pos, begin, space).text = std::move(name);
}

void Lexer::lex_number(bool space) {
  Pos pos = here();
  size_t begin = i_;
  if (peek() == '0' && (peek(1) == 'x' || peek(1) == 'b' || peek(1) == 'o')) {
    lex_radix_number(space);
    return;
  }
  // `_` separates digits (1_000) and may not start or end a group.
  auto digits = [&] {
    while (is_digit(peek()) ||
           (peek() == '_' && i_ > begin && is_digit(text_[i_ - 1]) && is_digit(peek(1)))) {
      advance();
    }
  };
  digits();
  bool is_float = false;
  if (peek() == '.' && peek(1) != '.') {
    if (!is_digit(peek(1)) && longest_op(text_.substr(i_ + 1, end_ - i_ - 1), true)) {
      std::string_view spelling = text_.substr(begin, i_ + 2 - begin);
      fail(pos, fmt::format("'{}' is ambiguous; write '{}0 {}' or '{} .{}'", spelling,
                            spelling.substr(0, spelling.size() - 1), spelling.back(),
                            spelling.substr(0, spelling.size() - 2), spelling.back()));
    }
    is_float = true;
    advance();
    digits();
  }
  char e = peek();
  bool f32 = false;
  if ((e == 'e' || e == 'E' || e == 'f') &&
      (is_digit(peek(1)) || ((peek(1) == '+' || peek(1) == '-') && is_digit(peek(2))))) {
    is_float = true;
    f32 = e == 'f';
    advance(2);
    digits();
  }
  Token& token = emit(is_float ? Tok::floating : Tok::integer, pos, begin, space);
  token.text.assign(text_.data() + begin, i_ - begin);
  token.float32 = f32;
  set_number_value(token);
}

void Lexer::set_number_value(Token& token) const {
  std::string clean;
  for (char c : token.text) {
    if (c != '_') clean += c == 'f' ? 'e' : c;
  }
  const char* first = clean.data();
  const char* last = first + clean.size();
  std::from_chars_result result{};
  if (token.kind == Tok::integer) {
    result = std::from_chars(first, last, token.int_value);
  } else if (token.float32) {
    float value = 0;
    result = std::from_chars(first, last, value);
    token.float_value = value;
  } else {
    result = std::from_chars(first, last, token.float_value);
  }
  if (result.ec == std::errc::result_out_of_range) {
    fail(token.pos, token.kind == Tok::integer
                        ? fmt::format("integer literal '{}' does not fit in 64 bits", token.text)
                        : fmt::format("float literal '{}' is out of range", token.text));
  }
  if (result.ec != std::errc() || result.ptr != last) {
    internal_error("lexer: cannot convert number '{}'", token.text);
  }
}

void Lexer::lex_radix_number(bool space) {
  Pos pos = here();
  size_t begin = i_;
  int base = peek(1) == 'x' ? 16 : peek(1) == 'b' ? 2 : 8;
  auto digit = [&](char c) { return hex_value(c) < base ? hex_value(c) : -1; };
  advance(2);
  size_t digits_begin = i_;
  uint64_t value = 0;
  bool overflow = false;
  while (digit(peek()) >= 0 || (peek() == '_' && i_ > digits_begin && digit(peek(1)) >= 0)) {
    if (peek() != '_') {
      overflow = overflow || value > (std::numeric_limits<uint64_t>::max() >> 4);
      value = value * base + digit(peek());
    }
    advance();
  }
  std::string_view spelling = text_.substr(begin, i_ - begin);
  if (i_ == digits_begin) fail(pos, fmt::format("'{}' must be followed by digits", spelling));
  if (overflow || value > static_cast<uint64_t>(std::numeric_limits<int64_t>::max())) {
    fail(pos, fmt::format("integer literal '{}' does not fit in 64 bits", spelling));
  }
  Token& token = emit(Tok::integer, pos, begin, space);
  token.text = spelling;
  token.int_value = static_cast<int64_t>(value);
}

bool Lexer::open_string() {
  bool triple = text_.substr(i_, end_ - i_).starts_with("\"\"\"");
  advance(triple ? 3 : 1);
  if (triple && peek() == '\r' && peek(1) == '\n') advance();
  if (triple && peek() == '\n') advance();  // as in Julia, a leading line break is dropped
  return triple;
}

void Lexer::lex_string(bool space) {
  Pos pos = here();
  size_t begin = i_;
  bool triple = open_string();
  std::string literal;
  std::vector<StringPart> parts;
  while (true) {
    if (i_ >= end_) {
      fail(pos, fmt::format("unterminated string; the closing '{}' is missing",
                            triple ? "\"\"\"" : "\""));
    }
    char c = peek();
    if (c == '"' && (!triple || (peek(1) == '"' && peek(2) == '"'))) {
      advance(triple ? 3 : 1);
      break;
    }
    if (c == '\\') {
      lex_string_escape(literal);
    } else if (c == '$') {
      if (!literal.empty()) parts.push_back({false, std::move(literal), 0, 0, {}});
      literal.clear();
      parts.push_back(lex_interpolation());
    } else {
      literal += c;
      advance();
    }
  }
  Token& token = emit(Tok::string, pos, begin, space);
  if (parts.empty()) {
    token.text = std::move(literal);
    return;
  }
  if (!literal.empty()) parts.push_back({false, std::move(literal), 0, 0, {}});
  token.parts = std::move(parts);
}

// A command literal, `...` or ```...``` (Flux's sources open with a ```@meta``` block for
// their doctests): its text, as a string token, for nothing here runs commands.
void Lexer::lex_command(bool space) {
  Pos pos = here();
  size_t begin = i_;
  bool triple = text_.substr(i_, end_ - i_).starts_with("```");
  std::string_view close = triple ? "```" : "`";
  advance(close.size());
  size_t text_begin = i_;
  while (i_ < end_ && !text_.substr(i_, end_ - i_).starts_with(close)) advance_char();
  if (i_ >= end_)
    fail(pos, fmt::format("unterminated command literal; the closing '{}' is missing", close));
  std::string text(text_.substr(text_begin, i_ - text_begin));
  advance(close.size());
  emit(Tok::string, pos, begin, space).text = std::move(text);
}

void Lexer::lex_string_escape(std::string& out) {
  Pos pos = here();
  advance();
  char c = peek();
  // A view of the whole array, since the replacements hold a NUL.
  static constexpr std::string_view kFrom = "ntr0abfve\\\"'$";
  static constexpr char kToChars[] = "\n\t\r\0\a\b\f\v\x1b\\\"'$";
  static constexpr std::string_view kTo(kToChars, sizeof kToChars - 1);
  if (size_t k = kFrom.find(c); k != std::string_view::npos && c != '\0') {
    out += kTo[k];
    advance();
    return;
  }
  if (c == '\n') {  // a backslash at the end of a line joins it to the next, as in Julia
    advance();
    while (peek() == ' ' || peek() == '\t') advance();
    return;
  }
  if (c == 'x' || c == 'u') {
    advance();
    uint32_t cp = 0;
    int count = 0;
    for (; count < (c == 'x' ? 2 : 4); ++count) {
      int d = hex_value(peek());
      if (d > 15) break;
      cp = cp * 16 + d;
      advance();
    }
    if (count == 0) fail(pos, fmt::format("'\\{}' must be followed by hexadecimal digits", c));
    if (c == 'x') out += static_cast<char>(cp);
    if (c == 'u' && cp >= 0xD800 && cp <= 0xDFFF) fail(pos, "invalid Unicode escape (surrogate)");
    if (c == 'u') encode_utf8(cp, out);
    return;
  }
  if (i_ >= end_) return;
  size_t length = 1;
  if (static_cast<unsigned char>(c) >= 0x80) code_point(i_, &length);
  fail(pos, fmt::format("invalid escape sequence '\\{}' in a string; write '\\\\' for a backslash",
                        text_.substr(i_, length)));
}

StringPart Lexer::lex_interpolation() {
  Pos dollar = here();
  advance();
  StringPart part;
  part.is_expr = true;
  if (peek() == '(') {
    advance();
    part.begin = static_cast<uint32_t>(i_);
    part.pos = here();
    skip_parenthesized(dollar, 0);
    part.end = static_cast<uint32_t>(i_ - 1);
    std::string_view inside = text_.substr(part.begin, part.end - part.begin);
    if (inside.find_first_not_of(" \t\r\n") == std::string_view::npos) {
      fail(dollar, "empty interpolation '$()'");
    }
    return part;
  }
  if (!at_ident_char(true)) {
    fail(dollar,
         "'$' in a string must be followed by a name or '('; write '\\$' for a dollar sign");
  }
  part.begin = static_cast<uint32_t>(i_);
  part.pos = here();
  while (i_ < end_ && at_ident_char(i_ == part.begin)) {
    advance_char();
  }
  part.end = static_cast<uint32_t>(i_);
  return part;
}

// Finds the `)` that closes an interpolation, stepping over strings (which may hold
// parentheses and interpolations of their own) so that `$(f(")"))` works.
void Lexer::skip_parenthesized(Pos start, int depth) {
  if (depth > 32) fail(start, "string interpolations nested too deeply");
  int parens = 1;
  while (parens > 0) {
    if (i_ >= end_) fail(start, "unterminated interpolation; the ')' closing '$(' is missing");
    char c = peek();
    if (c == '"' && !skip_nested_string(depth + 1)) {
      fail(start, "unterminated interpolation; the ')' closing '$(' is missing");
    }
    if (c == '"') continue;
    parens += c == '(' ? 1 : c == ')' ? -1 : 0;
    advance();
  }
}

// False if the text ends first; the unclosed `$(` around it is the likelier mistake.
bool Lexer::skip_nested_string(int depth) {
  bool triple = text_.substr(i_, end_ - i_).starts_with("\"\"\"");
  advance(triple ? 3 : 1);
  while (true) {
    if (i_ >= end_) return false;
    char c = peek();
    if (c == '\\') {
      advance(2);
    } else if (c == '"' && (!triple || (peek(1) == '"' && peek(2) == '"'))) {
      advance(triple ? 3 : 1);
      return true;
    } else if (c == '$' && peek(1) == '(') {
      Pos open = here();
      advance(2);
      skip_parenthesized(open, depth);
    } else {
      advance();
    }
  }
}

}  // namespace

bool is_keyword(std::string_view word) {
  return std::binary_search(kKeywords.begin(), kKeywords.end(), word);
}

std::vector<Token> lex(const Sources& sources, uint32_t file) {
  const SourceFile& source = sources.file(file);
  return Lexer(sources, file, 0, static_cast<uint32_t>(source.text.size()), {file, 1, 1}).run();
}

std::vector<Token> lex_range(const Sources& sources, uint32_t file, uint32_t begin, uint32_t end,
                             Pos start) {
  return Lexer(sources, file, begin, end, start).run();
}

std::string describe(const Token& token) {
  switch (token.kind) {
    case Tok::eof:
      return "end of file";
    case Tok::newline:
      return "end of line";
    case Tok::string:
      return "a string";
    default:
      return fmt::format("'{}'", token.text);
  }
}

}  // namespace ytape::tracer
