// Syntax errors: each names file:line:col, says what was expected, and shows the line with a
// caret. Unclosed constructs name the line where they were opened.
#include <string>

#include "helpers.h"

using namespace ytape::tracer;
using namespace ytape::tracer::testing;

TEST_CASE("unclosed blocks name their opening line") {
  CHECK(parse_error("function f(x)\n  y = x\n") ==
        "t.jl:2:8: expected 'end' to close 'function' at line 1\n"
        "  y = x\n"
        "       ^");
  CHECK(parse_error("if x\n  y") == "t.jl:2:4: expected 'end' to close 'if' at line 1\n  y\n   ^");
  CHECK(parse_error("for i in 1:n\n  x)\nend") ==
        "t.jl:2:4: expected 'end' to close 'for' at line 1, found ')'\n  x)\n   ^");
  CHECK(parse_error("if x\n  1\nelse\n  2\nelse\n  3\nend") ==
        "t.jl:5:1: expected 'end' to close 'if' at line 1, found 'else'\nelse\n^");
  CHECK(parse_error("mutable struct A\n  x") ==
        "t.jl:2:4: expected 'end' to close 'mutable struct' at line 1\n  x\n   ^");
  CHECK(parse_error("f(x) = begin\n  x") ==
        "t.jl:2:4: expected 'end' to close 'begin' at line 1\n  x\n   ^");
}

TEST_CASE("unclosed brackets name their opening line") {
  CHECK(parse_error("f(a, b") ==
        "t.jl:1:7: expected ',' or ')' to close '(' at line 1, found end of file\n"
        "f(a, b\n"
        "      ^");
  CHECK(parse_error("x = [1, 2\ny = 3") ==
        "t.jl:2:1: expected ',' or ']' to close '[' at line 1, found 'y'\ny = 3\n^");
  CHECK(parse_error("x = (1,\n     2\ny = 3") ==
        "t.jl:3:1: expected ',' or ')' to close '(' at line 1, found 'y'\ny = 3\n^");
  CHECK(parse_error("[1 2\n 3 4") ==
        "t.jl:2:5: expected ']' to close '[' at line 1, found end of file\n 3 4\n    ^");
  CHECK(parse_error("f(x y)") ==
        "t.jl:1:5: expected ',' or ')' to close '(' at line 1, found 'y'\nf(x y)\n    ^");
}

TEST_CASE("closers with nothing to close") {
  CHECK(parse_error("x = 1\nend") ==
        "t.jl:2:1: unexpected 'end'; there is no open block to close\nend\n^");
  CHECK(parse_error("x = 1)") ==
        "t.jl:1:6: unexpected ')'; there is nothing to close\nx = 1)\n     ^");
  CHECK(parse_error("else") == "t.jl:1:1: unexpected 'else' without a matching 'if'\nelse\n^");
}

TEST_CASE("malformed expressions") {
  CHECK(parse_error("x =") == "t.jl:1:4: expected an expression, found end of file\nx =\n   ^");
  CHECK(parse_error("x = 1 y = 2") ==
        "t.jl:1:7: expected a newline or ';' before 'y'\nx = 1 y = 2\n      ^");
  CHECK(parse_error("x.1") == "t.jl:1:2: expected a newline or ';' before '.1'\nx.1\n ^");
  CHECK(parse_error("f (x)") ==
        "t.jl:1:3: space before '(' is not allowed here; write 'f(x)' for a call\nf (x)\n  ^");
  CHECK(parse_error("x [1]") ==
        "t.jl:1:3: space before '[' is not allowed here; write 'x[i]' for indexing\nx [1]\n  ^");
  CHECK(parse_error("a ? b") ==
        "t.jl:1:6: expected ':' in 'condition ? a : b', found end of file\na ? b\n     ^");
  CHECK(parse_error("1:2:3:4") ==
        "t.jl:1:6: a range has at most two ':', as in 'start:step:stop'\n1:2:3:4\n     ^");
  CHECK(parse_error("s = \"$(x +)\"") ==
        "t.jl:1:11: expected an expression, found end of file\ns = \"$(x +)\"\n          ^");
  CHECK(parse_error("x = {1, 2}") ==
        "t.jl:1:5: braces are only used for type parameters, as in 'Vector{Float32}'\n"
        "x = {1, 2}\n    ^");
  CHECK(parse_error("[1 2;; 3 4]") ==
        "t.jl:1:6: ';;' (concatenation in higher dimensions) is not supported; use "
        "cat(...; dims=3)\n[1 2;; 3 4]\n     ^");
  CHECK(parse_error("(->)") == "t.jl:1:2: expected an expression, found '->'\n(->)\n ^");
  CHECK(parse_error("x = ?") == "t.jl:1:5: expected an expression, found '?'\nx = ?\n    ^");
  CHECK(parse_error(":(a + b)") ==
        "t.jl:1:1: quoted expressions ':( ... )' are not supported\n:(a + b)\n^");
}

TEST_CASE("tuples, calls and keyword arguments") {
  CHECK(parse_error("(a = 1, 2)") ==
        "t.jl:1:1: a tuple cannot mix 'name = value' fields with plain values\n(a = 1, 2)\n^");
  CHECK(parse_error("f(a; b; c)") ==
        "t.jl:1:7: a call has one ';', before its keyword arguments\nf(a; b; c)\n      ^");
  CHECK(parse_error("f(; 1)") ==
        "t.jl:1:5: expected a keyword argument after ';': 'name = value', 'name' or 'kws...'\n"
        "f(; 1)\n    ^");
  CHECK(parse_error("f(x[1] = 2)") ==
        "t.jl:1:3: expected a plain name before '=' here\nf(x[1] = 2)\n  ^");
}

TEST_CASE("assignments") {
  CHECK(parse_error("f(x) + 1 = 2") ==
        "t.jl:1:6: cannot assign to this with '='; the left side must be a name, a tuple of "
        "names, an index or a field\nf(x) + 1 = 2\n     ^");
  CHECK(parse_error("a, b += 1") ==
        "t.jl:1:6: '+=' cannot update a tuple; update each variable\na, b += 1\n     ^");
  CHECK(parse_error("f(x)::Int = x") ==
        "t.jl:1:5: return type annotations ('f(x)::T = ...') are not supported\n"
        "f(x)::Int = x\n    ^");
  CHECK(parse_error("const x") ==
        "t.jl:1:7: expected 'name = value' after 'const'\nconst x\n      ^");
  CHECK(parse_error("global f(x)") ==
        "t.jl:1:8: expected a variable name after 'global'\nglobal f(x)\n       ^");
  CHECK(parse_error("let x + 1\nend") ==
        "t.jl:1:7: expected a name or 'name = value' in 'let'\nlet x + 1\n      ^");
}

TEST_CASE("function definitions") {
  CHECK(parse_error("function f(x)::Int\nend") ==
        "t.jl:1:14: return type annotations ('f(x)::T') are not supported\n"
        "function f(x)::Int\n             ^");
  CHECK(parse_error("f(a=1, b) = a") ==
        "t.jl:1:8: a parameter without a default value cannot follow one with a default\n"
        "f(a=1, b) = a\n       ^");
  CHECK(parse_error("f(xs..., y) = 1") ==
        "t.jl:1:3: the varargs parameter 'xs...' must be the last positional one\n"
        "f(xs..., y) = 1\n  ^");
  CHECK(parse_error("f(xs...=1) = 1") ==
        "t.jl:1:8: a varargs parameter cannot have a default value\nf(xs...=1) = 1\n       ^");
  CHECK(parse_error("function f(; a, b...; c)\nend") ==
        "t.jl:1:21: parameters have one ';', before the keyword parameters\n"
        "function f(; a, b...; c)\n                    ^");
  CHECK(parse_error("function f end") ==
        "t.jl:1:12: expected '(' after 'f', found 'end'\nfunction f end\n           ^");
  CHECK(parse_error("(m)(x) = 1") ==
        "t.jl:1:2: a callable struct method is written '(m::Type)(x) = ...'\n(m)(x) = 1\n ^");
  CHECK(parse_error("map(xs) do x y\nend") ==
        "t.jl:1:14: expected ',' or a newline after the 'do' parameters, found 'y'\n"
        "map(xs) do x y\n             ^");
  CHECK(parse_error("x = 1 do\nend") ==
        "t.jl:1:7: 'do' must follow a function call, as in 'map(xs) do x'\nx = 1 do\n      ^");
}

TEST_CASE("structs, loops and top-level declarations") {
  CHECK(parse_error("struct A\n  x = 1\nend") ==
        "t.jl:2:5: struct fields have default values only in a '@kwdef struct'\n  x = 1\n    ^");
  CHECK(parse_error("struct A\n  x\n  f(x) = new(x)\nend") ==
        "t.jl:3:3: a struct holds fields and constructors of its own name, as in 'A(x) = "
        "new(x)'; define other functions after the struct\n  f(x) = new(x)\n  ^");
  CHECK(parse_error("struct A{T}\n  x::T\n  A{T}(x) where {T} = new(x)\nend") ==
        "t.jl:3:3: inner constructors with type parameters ('A{T}(...)') are not supported; "
        "write 'A(x::T, ...) where {T} = new(x, ...)'\n  A{T}(x) where {T} = new(x)\n  ^");
  CHECK(parse_error("struct A\n  x\n  x\nend") == "t.jl:3:3: duplicate field 'x'\n  x\n  ^");
  CHECK(parse_error("function f()\n  struct B end\nend") ==
        "t.jl:2:3: 'struct' is only allowed at top level, not inside a function, let or loop\n"
        "  struct B end\n  ^");
  CHECK(parse_error("for i in 1:2\n  using X\nend") ==
        "t.jl:2:3: 'using' is only allowed at top level, not inside a function, let or loop\n"
        "  using X\n  ^");
  CHECK(parse_error("mutable x") ==
        "t.jl:1:9: expected 'struct' after 'mutable', found 'x'\nmutable x\n        ^");
  CHECK(parse_error("abstract Foo end") ==
        "t.jl:1:10: expected 'type' after 'abstract', found 'Foo'\nabstract Foo end\n         ^");
  CHECK(parse_error("for 1 in xs end") ==
        "t.jl:1:5: expected a loop variable (a name or a tuple of names), found '1'\n"
        "for 1 in xs end\n    ^");
  CHECK(parse_error("for i of xs end") ==
        "t.jl:1:7: expected 'in', '=' or '∈' after the loop variable, found 'of'\n"
        "for i of xs end\n      ^");
  CHECK(parse_error("using") ==
        "t.jl:1:6: expected a module name after 'using', found end of file\nusing\n     ^");
  CHECK(parse_error("using A B") ==
        "t.jl:1:9: expected a module path after 'using', as in 'A.B' or 'A: x, y', found 'B'\n"
        "using A B\n        ^");
  CHECK(parse_error("import A,") ==
        "t.jl:1:10: expected a module name after 'import', found end of file\nimport A,\n"
        "         ^");
  CHECK(parse_error("x = using A") ==
        "t.jl:1:5: 'using' must start a statement\nx = using A\n    ^");
  CHECK(parse_error("f(x) = struct A end") ==
        "t.jl:1:8: 'struct' must start a statement\nf(x) = struct A end\n       ^");
}

TEST_CASE("unsupported Julia features say so") {
  CHECK(parse_error("try\n  x\ncatch\nend") ==
        "t.jl:1:1: 'try' is not supported by ytape's model language\ntry\n^");
  CHECK(parse_error("module M end") ==
        "t.jl:1:1: 'module' is not supported by ytape's model language\nmodule M end\n^");
}

TEST_CASE("nesting is bounded instead of overflowing the stack") {
  std::string deep = "x = " + std::string(600, '(') + "1" + std::string(600, ')');
  std::string message = parse_error(deep);
  CHECK(
      message.starts_with("t.jl:1:504: the program nests too deeply here; the limit is 500 "
                          "levels\n"));
  CHECK(parse_error("y = " + std::string(1000, '-') + "x").find("nests too deeply") !=
        std::string::npos);
  std::string ifs;
  for (int i = 0; i < 300; ++i) ifs += "if a\n";
  for (int i = 0; i < 300; ++i) ifs += "end\n";
  CHECK(parse_error(ifs).find("nests too deeply") != std::string::npos);
  // Flat sums and long statement lists are not nesting.
  std::string sum = "x = a";
  for (int i = 0; i < 5000; ++i) sum += " + a";
  CHECK(parse_error(sum) == "no error");
  CHECK(parse_error(std::string(5000, '\n') + "x") == "no error");
  std::string nested = "x = " + std::string(200, '(') + "1" + std::string(200, ')');
  CHECK(parse_error(nested) == "no error");
}
