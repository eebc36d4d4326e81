#include "tracer/lang/source.h"

#include <doctest/doctest.h>

#include "tape/error.h"

using namespace ytape;
using namespace ytape::tracer;

TEST_CASE("source files keep their lines, without line breaks") {
  Sources sources;
  uint32_t a = sources.add("a.jl", "x = 1\r\ny = 2\n\nz");
  uint32_t b = sources.add("b.jl", "");
  CHECK(a == 0);
  CHECK(b == 1);
  const SourceFile& file = sources.file(a);
  CHECK(file.line_text(1) == "x = 1");
  CHECK(file.line_text(2) == "y = 2");
  CHECK(file.line_text(3) == "");
  CHECK(file.line_text(4) == "z");
  CHECK(file.line_text(5) == "");
  CHECK(file.line_text(0) == "");
  CHECK(sources.file(b).line_text(1) == "");
}

TEST_CASE("errors name path:line:col and put a caret under the column") {
  Sources sources;
  sources.add("model.jl", "function f(x)\n  y = x +* 2\nend\n");
  CHECK(sources.where({0, 2, 9}) == "model.jl:2:9");
  CHECK(sources.format({0, 2, 9}, "unexpected '*'") ==
        "model.jl:2:9: unexpected '*'\n"
        "  y = x +* 2\n"
        "        ^");
  CHECK(sources.format({0, 1, 1}, "here") == "model.jl:1:1: here\nfunction f(x)\n^");
}

TEST_CASE("the caret counts code points and copies tabs") {
  Sources sources;
  sources.add("u.jl", "σ = α + β\n\tx = 1 +\n");
  CHECK(sources.format({0, 1, 9}, "m") == "u.jl:1:9: m\nσ = α + β\n        ^");
  CHECK(sources.format({0, 2, 7}, "m") == "u.jl:2:7: m\n\tx = 1 +\n\t     ^");
  // A column past the end of the line (the end of the file) still gets its caret.
  CHECK(sources.format({0, 2, 9}, "m") == "u.jl:2:9: m\n\tx = 1 +\n\t       ^");
}

TEST_CASE("an unknown position gives just the message") {
  Sources sources;
  sources.add("a.jl", "x");
  CHECK(!Pos{}.known());
  CHECK(sources.where({}) == "");
  CHECK(sources.format({}, "no position") == "no position");
  CHECK_THROWS_WITH_AS(sources.fail({0, 1, 1}, "bad"), "a.jl:1:1: bad\nx\n^", UserError);
}

TEST_CASE("loading a missing file is a user error") {
  Sources sources;
  CHECK_THROWS_WITH_AS(sources.load("/nonexistent/model.jl"),
                       "cannot read '/nonexistent/model.jl': No such file or directory", UserError);
  CHECK(sources.size() == 0);
}
