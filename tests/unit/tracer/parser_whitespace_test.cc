// Julia's whitespace and newline rules: where spaces separate array elements, where a line
// break ends a statement and where it is just whitespace.
#include "helpers.h"

using namespace ytape::tracer::testing;

TEST_CASE("inside [ ], spaces separate elements unless an operator has space on both sides") {
  CHECK(sexpr("[1 -2]") == "(matrix (row (int 1) (call - (int 2))))");
  CHECK(sexpr("[1 - 2]") == "(vect (call - (int 1) (int 2)))");
  CHECK(sexpr("[1-2]") == "(vect (call - (int 1) (int 2)))");
  CHECK(sexpr("[1 -2 + 3]") == "(matrix (row (int 1) (call + (call - (int 2)) (int 3))))");
  CHECK(sexpr("[1 +2]") == "(matrix (row (int 1) (call + (int 2))))");
  CHECK(sexpr("[a .-b]") == "(matrix (row (id a) (broadcast - (id b))))");
  CHECK(sexpr("[a * b c]") == "(matrix (row (call * (id a) (id b)) (id c)))");
  CHECK(sexpr("[a' b']") == "(matrix (row (call ' (id a)) (call ' (id b))))");
  CHECK(sexpr("[f (x)]") == "(matrix (row (id f) (id x)))");
  CHECK(sexpr("[f(x)]") == "(vect (call f (id x)))");
  CHECK(sexpr("[x [1]]") == "(matrix (row (id x) (vect (int 1))))");
  CHECK(sexpr("[x[1]]") == "(vect (index (id x) (int 1)))");
  CHECK(sexpr("[2x y]") == "(matrix (row (call * (int 2) (id x)) (id y)))");
  CHECK(sexpr("[(1 -2)]") == "(vect (call - (int 1) (int 2)))");
  CHECK(sexpr("[f(1 -2)]") == "(vect (call f (call - (int 1) (int 2))))");
  CHECK(sexpr("[[1 -2] 3]") == "(matrix (row (matrix (row (int 1) (call - (int 2)))) (int 3)))");
}

TEST_CASE("inside [ ], line breaks separate rows like ';'") {
  CHECK(sexpr("[1 2\n 3 4]") == "(matrix (row (int 1) (int 2)) (row (int 3) (int 4)))");
  CHECK(sexpr("[1 2;\n 3 4]") == "(matrix (row (int 1) (int 2)) (row (int 3) (int 4)))");
  CHECK(sexpr("[\n  1 2\n  3 4\n]") == "(matrix (row (int 1) (int 2)) (row (int 3) (int 4)))");
  CHECK(sexpr("[x\n y]") == "(matrix (row (id x)) (row (id y)))");
  CHECK(sexpr("[\n  x\n]") == "(vect (id x))");
  CHECK(sexpr("[1,\n 2,\n]") == "(vect (int 1) (int 2))");
  CHECK(sexpr("[\n  1, 2,\n  3\n]") == "(vect (int 1) (int 2) (int 3))");
  CHECK(sexpr("[f(x)\n for x in xs]") ==
        "(comprehension (call f (id x)) (iteration (in (id x) (id xs))))");
  CHECK(sexpr("[1 +\n 2]") == "(vect (call + (int 1) (int 2)))");
}

TEST_CASE("inside ( ) and { }, line breaks are whitespace") {
  CHECK(sexpr("f(a,\n  b)") == "(call f (id a) (id b))");
  CHECK(sexpr("(a\n + b)") == "(call + (id a) (id b))");
  CHECK(sexpr("f(\n  a;\n  k = 1\n)") == "(call f (id a) (kw k (int 1)))");
  CHECK(sexpr("x::Dict{\n  A,\n  B}") == "(:: (id x) (curly (id Dict) (id A) (id B)))");
  CHECK(sexpr("(\n  a = 1,\n  b = 2,\n)") == "(named_tuple (kw a (int 1)) (kw b (int 2)))");
  CHECK(sexpr("function f(a,\n           b)\nend") == "(function f (a b) (block))");
}

TEST_CASE("blocks inside ( ) still end statements at line breaks") {
  CHECK(sexpr("map(function (x)\n  y = x\n  -y\nend, xs)") ==
        "(call map (-> (x) (block (= (id y) (id x)) (call - (id y)))) (id xs))");
  CHECK(sexpr("f(begin\n  a\n  b\nend)") == "(call f (block (id a) (id b)))");
  CHECK(sexpr("(if c\n  -1\nelse\n  1\nend)") ==
        "(if (id c) (block (call - (int 1))) (block (int 1)))");
}

TEST_CASE("a line ending in an operator continues; one starting with it does not") {
  CHECK(parse_sexpr("y = a +\n    b") == "(block (= (id y) (call + (id a) (id b))))");
  CHECK(parse_sexpr("y = a\n    + b") == "(block (= (id y) (id a)) (call + (id b)))");
  CHECK(parse_sexpr("ok = a &&\n  b ||\n  c") ==
        "(block (= (id ok) (|| (&& (id a) (id b)) (id c))))");
  CHECK(parse_sexpr("x = c ?\n  a :\n  b") == "(block (= (id x) (if (id c) (id a) (id b))))");
  CHECK(parse_sexpr("x =\n  1") == "(block (= (id x) (int 1)))");
  CHECK(parse_sexpr("f(x) =\n  x") == "(block (function f (x) (id x)))");
  CHECK(parse_sexpr("g = x ->\n  x") == "(block (= (id g) (-> (x) (id x))))");
  CHECK(parse_sexpr("r = 1:\n  10") == "(block (= (id r) (range (int 1) (int 10))))");
  CHECK(parse_sexpr("p = x .*\n  y") == "(block (= (id p) (broadcast * (id x) (id y))))");
  CHECK(parse_sexpr("if a >\n   b\n  1\nend") ==
        "(block (if (call > (id a) (id b)) (block (int 1))))");
}

TEST_CASE("dots: field access, broadcasting, dot calls and float literals") {
  CHECK(sexpr("a.b") == "(. (id a) b)");
  CHECK(sexpr("a .+ b") == "(broadcast + (id a) (id b))");
  CHECK(sexpr("a.+b") == "(broadcast + (id a) (id b))");
  CHECK(sexpr("f.(x)") == "(broadcast f (id x))");
  CHECK(sexpr("1.0") == "(float 1.0)");
  CHECK(sexpr("1.0.+x") == "(broadcast + (float 1.0) (id x))");
  CHECK(sexpr("x.^2") == "(broadcast ^ (id x) (int 2))");
  CHECK(sexpr("a.b.c") == "(. (. (id a) b) c)");
  CHECK(sexpr("Float32.(x)") == "(broadcast Float32 (id x))");
  CHECK(sexpr(".5x") == "(call * (float 0.5) (id x))");
}

TEST_CASE("end inside indexing is the last index; elsewhere it closes a block") {
  CHECK(sexpr("function f(x)\n  x[end]\nend") == "(function f (x) (block (index (id x) (end))))");
  CHECK(sexpr("if x[end] > 0\n  x[end-1:end]\nend") ==
        "(if (call > (index (id x) (end)) (int 0)) "
        "(block (index (id x) (range (call - (end) (int 1)) (end)))))");
  CHECK(sexpr("x[[1, end]]") == "(index (id x) (vect (int 1) (end)))");
  CHECK(sexpr("x[if c 1 else 2 end]") ==
        "(index (id x) (if (id c) (block (int 1)) (block (int 2))))");
  CHECK(parse_error("y = end") == "t.jl:1:5: expected an expression, found 'end'\ny = end\n    ^");
}

TEST_CASE("the ternary's ':' needs space around it, a range's may not have it") {
  CHECK(sexpr("c ? a : b") == "(if (id c) (id a) (id b))");
  CHECK(sexpr("c ? 1:n : 0") == "(if (id c) (range (int 1) (id n)) (int 0))");
  CHECK(sexpr("c ? x[1:2] : y") == "(if (id c) (index (id x) (range (int 1) (int 2))) (id y))");
  CHECK(sexpr("c ? (1 : 2) : 3") == "(if (id c) (range (int 1) (int 2)) (int 3))");
  CHECK(sexpr("1 : 3") == "(range (int 1) (int 3))");
}
