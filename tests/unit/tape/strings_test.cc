#include "tape/strings.h"

#include <doctest/doctest.h>

#include "tape/builder.h"
#include "tape/digest.h"
#include "tape/print.h"

using namespace ytape;

TEST_CASE("printable escapes what a terminal would obey and keeps the rest") {
  CHECK(printable("model.layer1.weight") == "model.layer1.weight");
  CHECK(printable("x\x1b[2J\x1b]0;owned\x07") == "x\\x1b[2J\\x1b]0;owned\\x07");
  CHECK(printable("a\nb\tc\rd\x7f") == "a\\nb\\tc\\rd\\x7f");
  CHECK(printable("µ σ ∑ 🙂") == "µ σ ∑ 🙂");  // UTF-8 stays as it is
  CHECK(printable("\xc2\x9b"
                  "31m") == "\\xc2\\x9b31m");  // C1 CSI, in UTF-8
  CHECK(printable("\x9b"
                  "31m") == "\\x9b31m");         // a lone byte, not UTF-8
  CHECK(printable("\xe2\x82") == "\\xe2\\x82");  // a truncated sequence
  CHECK(printable("\xc0\xaf") == "\\xc0\\xaf");  // an overlong '/'
  CHECK(printable("a\\x1b") == "a\\x1b");        // backslashes are not escaped
  CHECK(printable_lines("one\ntwo\x1b") == "one\ntwo\\x1b");
}

TEST_CASE("the printer escapes control characters in names and file names") {
  Builder b("t\x1b[31m");
  Var x = b.input("x\x1b]0;title\x07", {DType::f32, {}});
  b.set_loc({b.intern_file("evil\x1b[2J.jl"), 3});
  b.output(b.sin(x), "y\n");
  CHECK(print_tape(b.finish()) ==
        "tape t\\x1b[31m\n"
        "  in  %1::f32[] x\\x1b]0;title\\x07\n"
        "  %2 = sin(%1)::f32[]  # evil\\x1b[2J.jl:3\n"
        "  out %2 y\\n\n");
}

namespace {

Tape scaled(double factor, const char* file, int line) {
  Builder b("t");
  Var x = b.input("x", {DType::f32, {3}});
  b.set_loc({b.intern_file(file), line});
  b.output(b.mul(x, b.constant(DType::f32, factor, {3})), "y");
  return b.finish();
}

}  // namespace

TEST_CASE("a tape's digest follows what it computes, not where it came from") {
  std::string digest = tape_digest(scaled(2, "a.jl", 1));
  CHECK(digest.size() == 16);
  CHECK(tape_digest(scaled(2, "b.jl", 7)) == digest);
  CHECK(tape_digest(scaled(3, "a.jl", 1)) != digest);  // one constant's bytes
  Tape renamed = scaled(2, "a.jl", 1);
  renamed.outputs[0].name = "z";
  CHECK(tape_digest(renamed) != digest);
  CHECK(fnv1a("") == kFnv1aBasis);
  CHECK(fnv1a("a") == 0xaf63dc4c8601ec8cull);  // FNV-1a's published value for "a"
}
