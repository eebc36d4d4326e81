// Regions in the JSON form (docs/regions.md): written as format version 2 with each body's
// ops one per line, read back to the same bytes; malformed regions refused with their line.
#include <doctest/doctest.h>

#include <string>

#include "io/json.h"
#include "tape/digest.h"
#include "tape/error.h"
#include "tape/print.h"
#include "unit/tape/scan_tapes.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

// rnn(2) in canonical JSON with `body` in place of its region's text.
std::string rnn_json(const std::string& region) {
  return R"({"format":"ytape-tape","version":2,"name":"rnn",
"meta":{},
"ops":[
{"out":[1],"op":"input","name":"w","type":["f32[4,4]"]},
{"out":[2],"op":"input","name":"h0","type":["f32[4,1]"]},
{"out":[3],"op":"input","name":"xs","type":["f32[4,1,2]"]},
{"out":[4,5],"op":"scan","args":[1,2,3],"attrs":{"consts":1,"carries":1,"length":2,"reverse":false,"running":0,"mask":0},"type":["f32[4,1]","f32[4,1,2]"],"regions":[)" +
         region + R"(]}
],
"outputs":[
{"var":4,"name":"h"},
{"var":5,"name":"hs"}
]}
)";
}

const std::string kBody = R"(
{"name":"body","ops":[
{"out":[1],"op":"input","name":"w","type":["f32[4,4]"]},
{"out":[2],"op":"input","name":"h","type":["f32[4,1]"]},
{"out":[3],"op":"input","name":"x","type":["f32[4,1]"]},
{"out":[4],"op":"matmul","args":[1,2],"attrs":{"transpose_a":false,"transpose_b":false},"type":["f32[4,1]"]},
{"out":[5],"op":"add","args":[4,3],"type":["f32[4,1]"]},
{"out":[6],"op":"tanh","args":[5],"type":["f32[4,1]"]}
],"yield":[6,6]})";

}  // namespace

TEST_CASE("a tape with a scan is written as version 2, its body's ops one per line") {
  std::string text = write_tape_json(rnn(2));
  CHECK(text == rnn_json(kBody));
  Tape back = read_tape_json(text, "rnn.json");
  CHECK(write_tape_json(back) == text);
  CHECK(print_tape(back) == print_tape(rnn(2)));
  CHECK(tape_digest(back) == tape_digest(rnn(2)));
}

TEST_CASE("a tape without regions is still written as version 1") {
  Builder b("plain");
  b.output(b.exp(b.input("x", {DType::f32, {2}})), "y");
  CHECK(write_tape_json(b.finish()).starts_with(R"({"format":"ytape-tape","version":1,)"));
}

TEST_CASE("a body's locations name the outermost tape's files") {
  Builder body;
  body.set_loc({body.intern_file("ignored.jl"), 1});
  Tape inner = cell_body();
  inner.ops[4].loc = {1, 7};  // the tanh of the cell, at line 7 of the outer tape's file 1
  Builder b("located");
  b.set_loc({b.intern_file("rnn.jl"), 3});
  Var w = b.input("w", {DType::f32, {4, 4}});
  Var h0 = b.input("h0", {DType::f32, {4, 1}});
  Var xs = b.input("xs", {DType::f32, {4, 1, 2}});
  b.output(b.scan({w}, {h0}, {xs}, inner, 2)[0], "h");
  std::string text = write_tape_json(b.finish());
  CHECK(text.find(R"("op":"add","args":[4,3],"type":["f32[4,1]"],"loc":"rnn.jl:7"})") !=
        std::string::npos);
  Tape back = read_tape_json(text, "t.json");
  CHECK(back.files.size() == 1);
  CHECK(back.ops.back().regions[0].files.empty());
  CHECK(write_tape_json(back) == text);
}

TEST_CASE("malformed regions are refused with the line that is wrong") {
  auto error = [](const std::string& region) {
    try {
      read_tape_json(rnn_json(region), "r.json");
    } catch (const UserError& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error(R"({"name":"body","ops":[],"yield":[],"colour":1})") ==
        R"(r.json:7: unknown key "colour" in a region (expected name, ops, yield))");
  CHECK(error(R"({"name":"body","ops":[]})") == R"(r.json:7: a region has no "yield")");
  CHECK(error(R"({"name":"body","ops":[],"yield":[3]})") ==
        "r.json:7: the region yields var 3, which no op of it defines");
  CHECK(
      error(
          R"({"name":"body","ops":[{"out":[1],"op":"input","name":"w","type":["f32[4,4]"]}],"yield":[1]})") ==
      "r.json:7: scan: the body takes (f32[4,4]), but the operands give it (f32[4,4], f32[4,1], "
      "f32[4,1]) (consts, carries, then a slice of each xs)");
  // A region reads nothing of the tape around it: var 1 of the tape is not the body's.
  CHECK(
      error(
          R"({"name":"body","ops":[{"out":[1],"op":"exp","args":[2],"type":["f32[4,4]"]}],"yield":[1]})")
          .find("r.json:7:") == 0);
  // Nested 40 deep: refused at the 33rd level, never a deep recursion.
  std::string nested =
      R"({"name":"body","ops":[{"out":[1],"op":"scan","args":[],"attrs":{"consts":0,"carries":0,"length":0},"regions":[)";
  std::string deep;
  for (int i = 0; i < 40; ++i) deep += nested;
  CHECK(error(deep).find("regions nest deeper than 32") != std::string::npos);
}
