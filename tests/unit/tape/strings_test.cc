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
  b.set_loc({b.intern_file(file), static_cast<uint32_t>(line)});
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

TEST_CASE("edit_distance counts a swap of neighbours as one edit") {
  CHECK(edit_distance("", "") == 0);
  CHECK(edit_distance("grad", "grad") == 0);
  CHECK(edit_distance("gard", "grad") == 1);
  CHECK(edit_distance("sinn", "sin") == 1);
  CHECK(edit_distance("kitten", "sitting") == 3);
  CHECK(edit_distance("", "abc") == 3);
  CHECK(edit_distance("@time", "@simd") == 2);
}

TEST_CASE("closest suggests only a likely typo, and did_you_mean words it one way") {
  std::vector<std::string> commands = {"run", "grad", "gradcheck", "trace", "train"};
  CHECK(closest("gard", commands) == "grad");
  CHECK(closest("runn", commands) == "run");
  CHECK(closest("traic", commands) == "train");
  CHECK(closest("abx", {"abd", "abc"}) == "abd");  // of equals, the first
  CHECK(closest("xyz", commands).empty());
  CHECK(closest("g", {"f"}).empty());  // a whole replacement shares nothing
  CHECK(closest("@time", {"@simd"}).empty());
  CHECK(closest("gradchek", commands) == "gradcheck");
  CHECK(did_you_mean("gard", commands) == "; did you mean 'grad'?");
  CHECK(did_you_mean("xyz", commands).empty());
}

TEST_CASE("closest prefers, of equally near names, the one that starts like the word") {
  CHECK(closest("sinn", {"sign", "sin"}) == "sin");
  CHECK(closest("sinn", {"sin", "sign"}) == "sin");
}
