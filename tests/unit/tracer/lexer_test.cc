#include "tracer/lang/lexer.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include "tape/error.h"
#include "tests/unit/tracer/helpers.h"

using namespace ytape;
using namespace ytape::tracer;

namespace {

std::vector<Token> tokens(const std::string& text) {
  Sources sources;
  sources.add("t.jl", text);
  return lex(sources, 0);
}

// The tokens as words: names bare, `kw:end`, `int:1`, `float:1.5`, `f32:1`, `str:"..."`,
// operators and punctuation as written, `NL`; a leading `_` marks space before.
std::string summary(const std::string& text) {
  std::string out;
  for (const Token& t : tokens(text)) {
    if (t.kind == Tok::eof) break;
    if (!out.empty()) out += ' ';
    if (t.space_before) out += '_';
    switch (t.kind) {
      case Tok::keyword:
        out += "kw:" + t.text;
        break;
      case Tok::integer:
        out += fmt::format("int:{}", t.int_value);
        break;
      case Tok::floating:
        out += fmt::format("{}:{}", t.float32 ? "f32" : "float", t.float_value);
        break;
      case Tok::string:
        out += t.parts.empty() ? "str:\"" + t.text + "\"" : "interp";
        break;
      case Tok::newline:
        out += "NL";
        break;
      default:
        out += std::string(describe(t)).substr(1, describe(t).size() - 2);
    }
  }
  return out;
}

std::string lex_error(const std::string& text) {
  try {
    tokens(text);
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

}  // namespace

TEST_CASE("names, keywords and Julia's `!` rule") {
  CHECK(summary("push!(xs, x)") == "push! ( xs , _x )");
  CHECK(summary("a!=b") == "a != b");
  CHECK(summary("a != b") == "a _!= _b");
  CHECK(summary("x_1 _y σ′ ∇f x̂") == "x_1 __y _σ′ _∇f _x̂");
  CHECK(summary("function end in type where") == "kw:function _kw:end _kw:in _type _kw:where");
  CHECK(summary("true false nothing isa") == "kw:true _kw:false _kw:nothing _isa");
  CHECK(is_keyword("mutable"));
  CHECK(!is_keyword("include"));
}

TEST_CASE("names are read in NFC form, as Julia's: a letter and a combining mark are one") {
  // conv_mnist.jl of FluxML's model zoo writes ŷ as y and U+0302; Julia reads either
  // spelling as the one character U+0177.
  CHECK(summary("y\u0302 + \u0177") == "\u0177 _+ _\u0177");
  // Latin letters with marks beyond Latin-1 (ẋ, U+1E8B), marks in a row (ǘ is ü and an
  // acute), a mark that composes with nothing (x̄ stays x and U+0304), Greek.
  CHECK(summary("x\u0307 u\u0308\u0301 x\u0304 \u03b1\u0301") == "\u1e8b _\u01d8 _x\u0304 _\u03ac");
  // Julia's own mappings: the micro sign is μ, ɛ is ε.
  CHECK(summary("\u00b5 \u025b") == "\u03bc _\u03b5");
}

TEST_CASE("bytes that are not UTF-8 are an error where they stand") {
  CHECK(lex_error("x = \xff").starts_with("t.jl:1:5: invalid UTF-8 in source text"));
  CHECK(lex_error("x = \xce\x41").starts_with("t.jl:1:5: invalid UTF-8 in source text"));
  CHECK(lex_error("x = \xce").starts_with("t.jl:1:5: invalid UTF-8 in source text"));
}

TEST_CASE("numbers") {
  CHECK(summary("1 1.0 1. .5 1e-3 1E3 2.5e+2") ==
        "int:1 _float:1 _float:1 _float:0.5 _float:0.001 _float:1000 _float:250");
  CHECK(summary("1f0 1.5f-1 2f") == "f32:1 _f32:0.15000000596046448 _int:2 f");
  CHECK(summary("0x1F 0b101 0o17 1_000 1_000.25 1__0") ==
        "int:31 _int:5 _int:15 _int:1000 _float:1000.25 _int:1 __0");
  CHECK(summary("2x 3(x) 1e") == "int:2 x _int:3 ( x ) _int:1 e");
  CHECK(summary("9223372036854775807") == "int:9223372036854775807");
  CHECK(lex_error("9223372036854775808") ==
        "t.jl:1:1: integer literal '9223372036854775808' does not fit in 64 bits\n"
        "9223372036854775808\n^");
  CHECK(lex_error("x = 0xFFFFFFFFFFFFFFFF") ==
        "t.jl:1:5: integer literal '0xFFFFFFFFFFFFFFFF' does not fit in 64 bits\n"
        "x = 0xFFFFFFFFFFFFFFFF\n    ^");
  CHECK(lex_error("1e400") == "t.jl:1:1: float literal '1e400' is out of range\n1e400\n^");
  CHECK(lex_error("0x") == "t.jl:1:1: '0x' must be followed by digits\n0x\n^");
  CHECK(lex_error("0x_1") == "t.jl:1:1: '0x' must be followed by digits\n0x_1\n^");
  CHECK(lex_error("y = 1.+x") ==
        "t.jl:1:5: '1.+' is ambiguous; write '1.0 +' or '1 .+'\ny = 1.+x\n    ^");
}

TEST_CASE("dots: fields, broadcasting, splats and numbers") {
  CHECK(summary("a.b") == "a . b");
  CHECK(summary("a .+ b") == "a _.+ _b");
  CHECK(summary("a.+b") == "a .+ b");
  CHECK(summary("f.(x)") == "f . ( x )");
  CHECK(summary("x.^2 .== y") == "x .^ int:2 _.== _y");
  CHECK(summary("x .= y .&& z .|| w") == "x _.= _y _.&& _z _.|| _w");
  CHECK(summary("f(xs...)") == "f ( xs ... )");
  CHECK(summary("x .≤ y") == "x _.<= _y");
  CHECK(lex_error("1..2") ==
        "t.jl:1:2: unexpected '..'; did you mean '...' (splat) or ':' "
        "(range)?\n1..2\n ^");
}

TEST_CASE("operators, longest match first, Unicode folded to ASCII names") {
  CHECK(summary("a->b => c == d === e !== f <: g >: h") ==
        "a -> b _=> _c _== _d _=== _e _!== _f _<: _g _>: _h");
  CHECK(summary("x += 1; y ^= 2; z .*= 3; w ÷= 4") ==
        "x _+= _int:1 ; _y _^= _int:2 ; _z _.*= _int:3 ; _w _÷= _int:4");
  CHECK(summary("a::T |> f <| g >>> 1 // 2 ? :") ==
        "a :: T _|> _f _<| _g _>>> _int:1 _// _int:2 _? _:");
  CHECK(summary("x ≤ y ≥ z ≠ w ∈ v ∉ u ÷ 2 √x") ==
        "x _<= _y _>= _z _!= _w _kw:in _v _∉ _u _÷ _int:2 _√ x");
}

TEST_CASE("a quote right after a value is the adjoint") {
  CHECK(summary("x'") == "x '");
  CHECK(summary("x''") == "x ' '");
  CHECK(summary("(a+b)' A[1]' 2' x[end]' m.W'") ==
        "( a + b ) ' _A [ int:1 ] ' _int:2 ' _x [ kw:end ] ' "
        "_m . W '");
  CHECK(lex_error("c = 'a'") ==
        "t.jl:1:5: character literals are not supported; use a string (\"a\"). A ' right after "
        "a value is the adjoint\nc = 'a'\n    ^");
  CHECK(lex_error("x '") ==
        "t.jl:1:3: character literals are not supported; use a string (\"a\"). A ' right after "
        "a value is the adjoint\nx '\n  ^");
}

TEST_CASE("strings and escapes") {
  CHECK(summary(R"("a\tb\n\"q\" \\ \$ \x41\u03c3")") == "str:\"a\tb\n\"q\" \\ $ Aσ\"");
  CHECK(summary("\"line\\\n     joined\"") == "str:\"linejoined\"");
  CHECK(summary("\"two\nlines\"") == "str:\"two\nlines\"");
  CHECK(summary("\"\"\"\n  doc \"quoted\"\n  \"\"\"") == "str:\"  doc \"quoted\"\n  \"");
  CHECK(lex_error("x = \"abc") ==
        "t.jl:1:5: unterminated string; the closing '\"' is missing\nx = \"abc\n    ^");
  CHECK(lex_error("\"\"\"abc\"\"") ==
        "t.jl:1:1: unterminated string; the closing '\"\"\"' is missing\n\"\"\"abc\"\"\n^");
  CHECK(lex_error(R"(s = "a\qb")") ==
        "t.jl:1:7: invalid escape sequence '\\q' in a string; write '\\\\' for a backslash\n"
        "s = \"a\\qb\"\n      ^");
}

TEST_CASE("interpolated strings keep the source range of each expression") {
  Sources sources;
  std::string text = "s = \"x=$x, sum=$(f(\")\") + 1)!\"";
  sources.add("t.jl", text);
  std::vector<Token> toks = lex(sources, 0);
  REQUIRE(toks[2].kind == Tok::string);
  const std::vector<StringPart>& parts = toks[2].parts;
  REQUIRE(parts.size() == 5);
  CHECK(parts[0].text == "x=");
  CHECK(parts[1].is_expr);
  CHECK(text.substr(parts[1].begin, parts[1].end - parts[1].begin) == "x");
  CHECK(parts[1].pos == Pos{0, 1, 9});
  CHECK(parts[2].text == ", sum=");
  CHECK(text.substr(parts[3].begin, parts[3].end - parts[3].begin) == "f(\")\") + 1");
  CHECK(parts[3].pos == Pos{0, 1, 18});
  CHECK(parts[4].text == "!");
  CHECK(lex_error("\"cost: $5\"") ==
        "t.jl:1:8: '$' in a string must be followed by a name or '('; write '\\$' for a dollar "
        "sign\n\"cost: $5\"\n       ^");
  CHECK(lex_error("\"$()\"") == "t.jl:1:2: empty interpolation '$()'\n\"$()\"\n ^");
  CHECK(lex_error("\"$(x\"") ==
        "t.jl:1:2: unterminated interpolation; the ')' closing '$(' is missing\n\"$(x\"\n ^");
}

TEST_CASE("comments, newlines and spacing") {
  CHECK(summary("a # comment\n\n# more\nb") == "a _NL _b");
  CHECK(summary("a #= block\n #= nested =# =# b") == "a _b");
  CHECK(summary("\n\na\r\nb\n") == "_a _NL _b NL");
  CHECK(summary("f(a,\n  b)") == "f ( a , NL _b )");
  CHECK(lex_error("x\n#= open #= =#\n") ==
        "t.jl:2:1: unterminated '#=' comment; the closing '=#' is missing\n#= open #= =#\n^");
}

TEST_CASE("positions count lines and code points; eof sits after the last token") {
  std::vector<Token> toks = tokens("σ = 1\n  β' # c\n");
  CHECK(toks[0].pos == Pos{0, 1, 1});
  CHECK(toks[1].pos == Pos{0, 1, 3});
  CHECK(toks[2].pos == Pos{0, 1, 5});
  CHECK(toks[3].kind == Tok::newline);
  CHECK(toks[4].pos == Pos{0, 2, 3});
  CHECK(toks[5].pos == Pos{0, 2, 4});
  CHECK(toks.back().kind == Tok::eof);
  CHECK(toks.back().pos == Pos{0, 2, 5});
}

TEST_CASE("command literals are strings of their text, which nothing runs") {
  // Flux's sources open with a ```@meta``` block for their doctests.
  std::vector<Token> toks = tokens("x = `ls $y`\n```@meta\nA = r\"[0-9]\"\n```");
  REQUIRE(toks[2].kind == Tok::string);
  CHECK(toks[2].text == "ls $y");
  REQUIRE(toks[4].kind == Tok::string);
  CHECK(toks[4].text == "@meta\nA = r\"[0-9]\"\n");
}

TEST_CASE("unsupported characters") {
  CHECK(lex_error("x = @ y") ==
        "t.jl:1:5: expected a macro name after '@', as in '@assert' or '@.'\nx = @ y\n    ^");
  // `$` outside strings is the parser's to refuse (it interpolates inside @eval).
  CHECK(testing::parse_error("x = $y") ==
        "t.jl:1:5: '$' is only allowed inside strings, for interpolation, and inside @eval\n"
        "x = $y\n    ^");
  CHECK(lex_error("x = `ls") ==
        "t.jl:1:5: unterminated command literal; the closing '`' is missing\nx = `ls\n    ^");
  CHECK(lex_error("x = a × b") == "t.jl:1:7: unexpected character U+00D7\nx = a × b\n      ^");
}
