// Scopes in the JSON form (docs/tape-format.md, "Scopes"): the layer calls that ops were
// recorded in, written as format version 3 and read back to the same bytes; malformed
// scopes refused with the line that is wrong; `show` lists them.
#include <doctest/doctest.h>

#include <string>

#include "io/json.h"
#include "tape/builder.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

// A Chain of one Dense layer: its matmul recorded in the Dense's scope, inside the Chain's.
Tape layered() {
  Builder b("f");
  uint32_t file = b.intern_file("model.jl");
  uint32_t chain = b.intern_scope({.path = "model",
                                   .layer = "Chain(Dense(2 => 3, relu))",
                                   .made = {file, 4},
                                   .call = {file, 9}});
  uint32_t dense = b.intern_scope({.path = "model.layers[1]",
                                   .layer = "Dense(2 => 3, relu)",
                                   .made = {file, 4},
                                   .call = {file, 9},
                                   .parent = chain});
  Var w = b.input("model.layers.1.weight", {DType::f32, {3, 2}});
  Var x = b.input("x", {DType::f32, {2, 5}});
  b.set_loc({file, 9, dense});
  Var h = b.relu(b.matmul(w, x));
  b.set_loc({file, 10});
  b.output(b.sum(h, {.dims = {1, 2}}), "y");
  return b.finish();
}

const std::string kLayered = R"json({"format":"ytape-tape","version":3,"name":"f",
"meta":{},
"scopes":[
{"path":"model","layer":"Chain(Dense(2 => 3, relu))","made":"model.jl:4","call":"model.jl:9"},
{"path":"model.layers[1]","layer":"Dense(2 => 3, relu)","made":"model.jl:4","call":"model.jl:9","parent":1}
],
"ops":[
{"out":[1],"op":"input","name":"model.layers.1.weight","type":["f32[3,2]"]},
{"out":[2],"op":"input","name":"x","type":["f32[2,5]"]},
{"out":[3],"op":"matmul","args":[1,2],"attrs":{"transpose_a":false,"transpose_b":false},"type":["f32[3,5]"],"loc":"model.jl:9","scope":2},
{"out":[4],"op":"relu","args":[3],"type":["f32[3,5]"],"loc":"model.jl:9","scope":2},
{"out":[5],"op":"sum","args":[4],"attrs":{"dims":[1,2]},"type":["f32[]"],"loc":"model.jl:10"}
],
"outputs":[
{"var":5,"name":"y"}
]}
)json";

std::string read_error(const std::string& text) {
  try {
    read_tape_json(text, "s.json");
  } catch (const UserError& e) {
    return e.what();
  }
  return "no error";
}

// kLayered with its scope list replaced by `scopes`.
std::string with_scopes(const std::string& scopes) {
  std::string text = kLayered;
  size_t from = text.find("\"scopes\":[");
  size_t to = text.find("],\n\"ops\"");
  return text.replace(from, to + 1 - from, "\"scopes\":[" + scopes + "]");
}

}  // namespace

TEST_CASE("a tape with scopes is written as version 3 and reads back to the same bytes") {
  Tape t = layered();
  std::string text = write_tape_json(t);
  CHECK(text == kLayered);
  Tape back = read_tape_json(text, "f.json");
  CHECK(back.scopes == t.scopes);
  CHECK(back.ops[2].loc.scope == 2);
  CHECK(write_tape_json(back) == text);
  // A copy keeps the table and the ops' scopes.
  CHECK(write_tape_json(copy_tape(back)) == text);
}

TEST_CASE("show lists the scopes and names each op's layer") {
  std::string text = print_tape(layered());
  CHECK(text.find("  scope 1 model: Chain(Dense(2 => 3, relu))  # made at model.jl:4, called at "
                  "model.jl:9\n") != std::string::npos);
  CHECK(text.find("  scope 2 model.layers[1]: Dense(2 => 3, relu) in 1  # made at model.jl:4, "
                  "called at model.jl:9\n") != std::string::npos);
  CHECK(text.find("= relu(%3)::f32[3,5]  # model.jl:9 in model.layers[1]\n") != std::string::npos);
  CHECK(text.find("= sum(%4; dims=[1,2])::f32[]  # model.jl:10\n") != std::string::npos);
}

TEST_CASE("a builder interns each scope once") {
  Builder b;
  Scope s{.layer = "Dense(2 => 3)"};
  CHECK(b.intern_scope(s) == 1);
  CHECK(b.intern_scope(s) == 1);
  s.path = "m";
  CHECK(b.intern_scope(s) == 2);
  CHECK(b.tape().scopes.size() == 2);
}

TEST_CASE("malformed scopes are refused with the line that is wrong") {
  CHECK(
      read_error(with_scopes(R"({"layer":"D","colour":1})")) ==
      R"x(s.json:3: unknown key "colour" in a scope (expected path, layer, made, call, parent))x");
  CHECK(read_error(with_scopes(R"({"path":"m"})")) == R"(s.json:3: a scope has no "layer")");
  CHECK(read_error(with_scopes(R"({"layer":"D","made":"nowhere"})")) ==
        R"(s.json:3: a scope's "made" is "nowhere", not "file:line")");
  CHECK(read_error(with_scopes(R"({"layer":"D","parent":1},{"layer":"E"})")) ==
        "s.json:3: scope 1 names scope 1 as its caller; a caller comes before");
  CHECK(read_error(with_scopes(R"({"layer":"D"},{"layer":"D"})")) ==
        "s.json:3: scope 2 repeats scope 1");
  // The ops name scope 2, and the list has one.
  CHECK(read_error(with_scopes(R"({"layer":"D"})")) ==
        "s.json:7: an op names scope 2, but the tape lists 1 scope");
  std::string zero = kLayered;
  zero.replace(zero.find("\"scope\":2"), 9, "\"scope\":0");
  CHECK(read_error(zero) == "s.json:10: matmul: \"scope\" is 0; scopes are numbered from 1");
}

TEST_CASE("the validator refuses an op that names a scope the tape does not list") {
  Tape t = layered();
  validate(t);
  t.scopes.pop_back();
  CHECK_THROWS_WITH_AS(validate(t),
                       doctest::Contains("names scope 2, which the tape does not list"), UserError);
  t = layered();
  t.scopes[0].parent = 2;
  CHECK_THROWS_WITH_AS(validate(t), doctest::Contains("a caller must come before"), UserError);
}
