// The lexer of the model language: turns a source file into tokens. It is context-free
// except for two Julia rules it settles itself: `'` right after a value is the adjoint
// operator (there are no character literals), and `!` ends an identifier (`push!`) unless
// `=` follows (`a!=b`). Everything else that depends on context (newlines inside brackets,
// `end` in indexing, `[1 -2]`) is the parser's, helped by Token::space_before.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "tracer/lang/source.h"

namespace ytape::tracer {

enum class Tok : uint8_t {
  ident,     ///< text: the name
  keyword,   ///< text: the keyword (`function`, `end`, `in`, `true`, `nothing`, ...)
  integer,   ///< int_value
  floating,  ///< float_value; float32 for `1f0`-style literals
  string,    ///< text: the unescaped contents; parts when it interpolates
  macro,     ///< text: `@` and the macro's name ("@assert", "@.")
  op,        ///< text: the operator, canonical (`≤` is "<=", `∈` is "in"), dotted forms
             ///< keep their dot (".+", ".="); "." is field access or a dot call
  lparen,
  rparen,
  lbracket,
  rbracket,
  lbrace,
  rbrace,
  comma,
  semicolon,
  newline,  ///< one or more line breaks (comments and blank lines folded in)
  eof,
};

/// One piece of an interpolated string: literal text, or the source range of an
/// interpolated expression (`$name` or the inside of `$( ... )`) for the parser to lex and
/// parse with lex_range().
struct StringPart {
  bool is_expr = false;
  std::string text;    ///< literal pieces: the unescaped text
  uint32_t begin = 0;  ///< expression pieces: byte range in the file
  uint32_t end = 0;
  Pos pos;  ///< expression pieces: position of `begin`
};

struct Token {
  Tok kind = Tok::eof;
  Pos pos;
  uint32_t offset = 0;        ///< byte offset in the file
  uint32_t length = 0;        ///< bytes of source text
  bool space_before = false;  ///< whitespace, a comment or a line break comes right before
  std::string text;
  int64_t int_value = 0;
  double float_value = 0;
  bool float32 = false;
  std::vector<StringPart> parts;  ///< strings with `$` only; empty otherwise
};

/// The keywords. `type` is not one (it only means something after `abstract`); `isa` is
/// an identifier that the parser reads as an operator.
bool is_keyword(std::string_view word);

/// The tokens of file `file`, ending with one eof token. Throws UserError (formatted by
/// Sources::format) on an unexpected character, a bad number, an unterminated string or
/// `#=` comment (pointing at where it starts), a character literal or an `@` without a name.
std::vector<Token> lex(const Sources& sources, uint32_t file);

/// The tokens of bytes [begin, end) of file `file`, whose first byte is at `start`; used
/// for the expressions inside interpolated strings.
std::vector<Token> lex_range(const Sources& sources, uint32_t file, uint32_t begin, uint32_t end,
                             Pos start);

/// How a token reads in a message: its spelling in quotes ('x', '1.5', '+='), or "end of
/// file", "end of line", "a string".
std::string describe(const Token& token);

}  // namespace ytape::tracer
