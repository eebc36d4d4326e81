#include "io/json.h"

#include <doctest/doctest.h>
#include <fmt/format.h>

#include <cstring>
#include <fstream>
#include <limits>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "tape/builder.h"
#include "tape/error.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

Type f32(Shape s) {
  return Type{DType::f32, std::move(s)};
}

template <typename T>
std::vector<uint8_t> bytes_of(std::vector<T> values) {
  std::vector<uint8_t> out(values.size() * sizeof(T));
  if (!values.empty()) std::memcpy(out.data(), values.data(), out.size());
  return out;
}

constexpr float kInf = std::numeric_limits<float>::infinity();

// Every kind of op the format has: inputs, consts of each dtype (non-finite floats
// included), calls with and without attributes, a multi-output op, a zero-output effect,
// locations and metadata.
Tape sample() {
  Builder b("loss");
  b.add_meta("seed", "1");
  b.add_meta("entry", "loss");
  Var x = b.input("x", f32({3}));
  Var img = b.input("img", f32({2, 2, 1, 1}));
  Var c = b.constant(f32({5}), bytes_of<float>({1.5f, 0.1f, std::nanf(""), kInf, -kInf}));
  b.constant({DType::f64, {2}}, bytes_of<double>({0.1, -2.0}));
  b.constant({DType::i64, {2, 2}}, bytes_of<int64_t>({1, -2, 3, INT64_MAX}));
  b.constant({DType::boolean, {2}}, std::vector<uint8_t>{1, 0});
  b.set_loc({b.intern_file("samples/model.jl"), 3});
  Var s = b.sin(x);
  b.set_loc({});
  b.convert(s, {.dtype = DType::f64});
  b.fill({.value = 0.5, .dtype = DType::f32, .shape = Shape{2}});
  std::vector<Var> pooled =
      b.max_pool2d_with_indices(img, {.window = Shape{2, 2}, .stride = Shape{2, 2}});
  b.print({s}, {.format = std::string("s={}")});
  b.output(s, "y");
  b.output(pooled[1], "where");
  (void)c;
  return b.finish();
}

const char* const kSampleJson =
    R"({"format":"ytape-tape","version":1,"name":"loss",
"meta":{"seed":"1","entry":"loss"},
"ops":[
{"out":[1],"op":"input","name":"x","type":["f32[3]"]},
{"out":[2],"op":"input","name":"img","type":["f32[2,2,1,1]"]},
{"out":[3],"op":"const","value":[1.5,0.1,"nan","inf","-inf"],"type":["f32[5]"]},
{"out":[4],"op":"const","value":[0.1,-2.0],"type":["f64[2]"]},
{"out":[5],"op":"const","value":[1,-2,3,9223372036854775807],"type":["i64[2,2]"]},
{"out":[6],"op":"const","value":[true,false],"type":["bool[2]"]},
{"out":[7],"op":"sin","args":[1],"type":["f32[3]"],"loc":"samples/model.jl:3"},
{"out":[8],"op":"convert","args":[7],"attrs":{"dtype":"f64"},"type":["f64[3]"]},
{"out":[9],"op":"fill","args":[],"attrs":{"value":0.5,"dtype":"f32","shape":[2]},"type":["f32[2]"]},
{"out":[10,11],"op":"max_pool2d_with_indices","args":[2],"attrs":{"window":[2,2],"stride":[2,2],"pad":[0,0,0,0]},"type":["f32[1,1,1,1]","i64[1,1,1,1]"]},
{"out":[],"op":"print","args":[7],"attrs":{"format":"s={}"},"type":[]}
],
"outputs":[
{"var":7,"name":"y"},
{"var":11,"name":"where"}
]}
)";

// A tape of the given op lines (the first on line 4) and output lines.
std::string tape_json(std::string_view ops, std::string_view outputs = "") {
  return fmt::format(
      "{{\"format\":\"ytape-tape\",\"version\":1,\"name\":\"t\",\n\"meta\":{{}},\n\"ops\":[\n"
      "{}\n],\n\"outputs\":[\n{}{}]}}\n",
      ops, outputs, outputs.empty() ? "" : "\n");
}

constexpr const char* kInputX = R"({"out":[1],"op":"input","name":"x","type":["f32[3]"]})";

// Reads, checks the result is valid, and writes again.
std::string round_trip(std::string_view text) {
  Tape t = read_tape_json(text, "t.json");
  validate(t);
  return write_tape_json(t);
}

}  // namespace

TEST_CASE("json: the canonical text of a tape") {
  CHECK(write_tape_json(sample()) == kSampleJson);
}

TEST_CASE("json: an empty tape") {
  CHECK(write_tape_json(Builder("").finish()) ==
        "{\"format\":\"ytape-tape\",\"version\":1,\"name\":\"\",\n\"meta\":{},\n\"ops\":[\n],\n"
        "\"outputs\":[\n]}\n");
  CHECK(round_trip(write_tape_json(Builder("").finish())) == write_tape_json(Builder("").finish()));
}

TEST_CASE("json: reading gives the same tape, writing it again the same bytes") {
  Tape t = read_tape_json(kSampleJson, "t.json");
  validate(t);
  Tape original = sample();
  CHECK(t.name == original.name);
  CHECK(t.meta == original.meta);
  CHECK(t.files == original.files);
  CHECK(t.types == original.types);
  CHECK(t.outputs == original.outputs);
  REQUIRE(t.ops.size() == original.ops.size());
  for (size_t i = 0; i < t.ops.size(); ++i) {
    CHECK(t.ops[i].attrs == original.ops[i].attrs);
    CHECK(t.ops[i].loc == original.ops[i].loc);
  }
  CHECK(write_tape_json(t) == kSampleJson);
}

TEST_CASE("json: the text written in pieces is the text written whole") {
  // About 14 MB of text: pieces of a megabyte, and the whole text big enough to have its
  // pages faulted in on another core as it is written (PageWarmer).
  Builder b("chain");
  Var s = b.input("x", Type{DType::f32, {}});
  for (int i = 0; i < 80000; ++i) s = b.add(b.sin(s), b.constant(DType::f32, 0.5 + i));
  b.output(s, "y");
  Tape t = b.finish();
  std::string whole = write_tape_json(t), joined;
  int pieces = 0;
  write_tape_json(t, [&](std::string_view piece) {
    joined += piece;
    ++pieces;
  });
  CHECK(pieces > 1);
  CHECK(joined == whole);
}

TEST_CASE("json: floats, integers and strings survive a round trip exactly") {
  Builder b("weird \"name\"\n\\ \xc3\xa9");
  b.add_meta("tab\there", "\x01 control");
  Var x = b.input("x.layer1.1.weight", f32({}));
  float tiny = std::numeric_limits<float>::denorm_min();
  b.constant(f32({6}),
             bytes_of<float>({tiny, -0.0f, 3.4028235e38f, 1e-10f, 16777216.0f, 1.0f / 3}));
  b.constant({DType::f64, {4}},
             bytes_of<double>({5e-324, 1.7976931348623157e308, 0.1 + 0.2, 1e21}));
  b.constant({DType::i64, {2}}, bytes_of<int64_t>({INT64_MIN, 0}));
  b.constant({DType::f32, {0, 3}}, {});
  Var f = b.fill(
      {.value = -std::numeric_limits<double>::infinity(), .dtype = DType::f64, .shape = Shape{}});
  b.guard(b.lt(x, x), {.message = std::string("line 1\nline \"2\"")});
  b.output(f, "f \xe2\x86\x92 g");
  std::string text = write_tape_json(b.finish());
  CHECK(text.find(R"("value":[1e-45,-0.0,3.4028235e+38,1e-10,16777216.0,0.33333334])") !=
        std::string::npos);
  CHECK(text.find(R"("value":[5e-324,1.7976931348623157e+308,0.30000000000000004,1e+21])") !=
        std::string::npos);
  CHECK(text.find(R"("value":[-9223372036854775808,0])") != std::string::npos);
  CHECK(text.find(R"("attrs":{"value":"-inf","dtype":"f64","shape":[]})") != std::string::npos);
  CHECK(text.find(R"("name":"weird \"name\"\n\\ é")") != std::string::npos);
  CHECK(text.find(R"("meta":{"tab\there":"\u0001 control"})") != std::string::npos);
  CHECK(round_trip(text) == text);
  CHECK(round_trip(round_trip(text)) == text);
}

TEST_CASE("json: attributes of every kind and ops of every family survive a round trip") {
  Builder b("families");
  b.set_loc({b.intern_file("samples/resnet18.jl"), 42});
  Var img = b.input("img", f32({6, 6, 2, 1}));
  Var w = b.input("w", f32({3, 3, 2, 4}));
  Var a = b.input("a", f32({3, 5}));
  Var scale = b.input("scale", f32({4}));
  Var conv = b.conv2d(img, w, {.pad = Shape{1, 1, 1, 1}});
  b.set_loc({b.intern_file("samples/other \"file\".jl"), 7});
  std::vector<Var> bn = b.batchnorm_with_stats(conv, scale, scale, {.eps = 1e-3});
  Var pooled = b.avg_pool2d(bn[0], {.window = Shape{2, 2}, .stride = Shape{2, 2}});
  Var flat = b.reshape(pooled, {.shape = {36, 1}});
  Var mm = b.matmul(a, a, {.transpose_a = true});
  Var padded = b.pad(mm, {.lo = Shape{1, 0},
                          .hi = Shape{0, 2},
                          .interior = Shape{0, 0},
                          .value = std::numeric_limits<double>::quiet_NaN()});
  Var idx = b.iota({.dtype = DType::i64, .shape = Shape{1, 5}, .dim = 2});
  Var picked = b.gather(mm, idx, {.dim = 1});
  Var total =
      b.sum(b.add(b.sum(flat, {.dims = {1, 2}}), b.sum(picked, {.dims = {1, 2}})), {.dims = {}});
  b.set_loc({});
  b.guard(b.lt(total, b.constant(DType::f32, 1e30)), {.message = std::string("big")});
  b.output(total, "loss");
  b.output(padded, "padded");
  b.output(bn[2], "invstd");
  std::string text = write_tape_json(b.finish());
  CHECK(text.find(R"("attrs":{"transpose_a":true,"transpose_b":false})") != std::string::npos);
  CHECK(text.find(R"("interior":[0,0],"value":"nan"})") != std::string::npos);
  CHECK(text.find(R"("loc":"samples/other \"file\".jl:7")") != std::string::npos);
  CHECK(round_trip(text) == text);
}

TEST_CASE("json: a hand-written file reads to the canonical bytes") {
  // Pretty-printed, keys in another order, sparse var ids, outputs first, omitted default
  // attributes and call types, escapes in strings.
  const char* pretty = R"(
  {
    "outputs": [ { "name": "y", "var": 70 }, {"var": 110, "name" : "where"} ],
    "version": 1,
    "meta": { "seed": "1", "entry": "\u006coss" },
    "format": "ytape-tape",
    "ops": [
      { "type": [ "f32[3]" ], "name": "x", "op": "input", "out": [ 10 ] },
      { "op": "input", "out": [20], "name": "img", "type": ["f32[2,2,1,1]"] },
      { "value": [ 1.5, 0.1, "nan", "inf", "-inf" ],
        "out": [ 30 ], "op": "const", "type": [ "f32[5]" ] },
      { "out": [40], "op": "const", "type": ["f64[2]"], "value": [1e-1, -2] },
      { "out": [50], "op": "const", "type": ["i64[2,2]"], "value": [1, -2, 3, 9223372036854775807] },
      { "out": [60], "op": "const", "type": ["bool[2]"], "value": [true, false] },
      { "loc": "samples/model.jl:3", "args": [10], "op": "sin", "out": [70] },
      { "out": [80], "op": "convert", "attrs": { "dtype": "f64" }, "args": [70], "type": ["f64[3]"] },
      { "out": [90], "op": "fill", "args": [],
        "attrs": { "shape": [2], "dtype": "f32", "value": 0.5 } },
      { "out": [100, 110], "op": "max_pool2d_with_indices", "args": [20],
        "attrs": { "stride": [2, 2], "window": [2, 2] } },
      { "out": [], "op": "print", "args": [70], "attrs": { "format": "s={}" } }
    ],
    "name": "loss"
  }
)";
  CHECK(round_trip(pretty) == kSampleJson);
  // Windows line ends and tabs are whitespace too.
  std::string crlf;
  for (char c : std::string(kSampleJson)) {
    crlf += c == '\n' ? std::string("\r\n\t") : std::string(1, c);
  }
  CHECK(round_trip(crlf) == kSampleJson);
}

TEST_CASE("json: meta is a list of pairs; a repeated key is kept in order") {
  Builder b("m");
  b.add_meta("k", "1");
  b.add_meta("j", "2");
  b.add_meta("k", "3");
  std::string text = write_tape_json(b.finish());
  CHECK(text.find(R"("meta":{"k":"1","j":"2","k":"3"})") != std::string::npos);
  CHECK(round_trip(text) == text);
}

TEST_CASE("json: a print with the default format has no outputs and an attribute") {
  std::string text =
      tape_json(std::string(kInputX) + ",\n" + R"({"out":[],"op":"print","args":[1,1]})");
  CHECK(round_trip(text) ==
        tape_json(std::string(kInputX) + ",\n" +
                  R"({"out":[],"op":"print","args":[1,1],"attrs":{"format":""},"type":[]})"));
}

// ---- malformed input: each is refused with one message naming the source and line -------

TEST_CASE("json errors: not JSON") {
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-tape\",,", "t.json"),
                       "t.json:1: expected a key (a string), got ','", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n{\"out\":[2] \"op\""), "t.json"),
      "t.json:5: expected ',' or '}', got a string", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-tape\",\n\"version\":1", "t.json"),
                       "t.json:2: expected ',' or '}', got end of input", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-tape\",\"version\":01}", "t.json"),
                       "t.json:1: a number cannot have a leading 0", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-tape\",\"version\":1.}", "t.json"),
                       "t.json:1: a number needs digits after its '.'", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-tape\",\"version\":null}", "t.json"),
                       "t.json:1: \"version\" must be an integer, got 'n'", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{'format':1}", "t.json"),
                       "t.json:1: expected a key (a string), got '''", UserError);
}

TEST_CASE("json errors: empty input and trailing garbage") {
  CHECK_THROWS_WITH_AS(read_tape_json("", "t.json"),
                       "t.json:1: empty input; expected a tape (a JSON object)", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(" \n\n", "<stdin>"),
                       "<stdin>:3: empty input; expected a tape (a JSON object)", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(kInputX) + "\n{}", "t.json"),
                       "t.json:9: unexpected '{' after the end of the tape object", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("[1,2]", "t.json"),
                       "t.json:1: expected '{' (a tape is a JSON object), got '['", UserError);
}

TEST_CASE("json errors: format and version") {
  CHECK_THROWS_WITH_AS(read_tape_json(R"({"format":"onnx","version":1})", "t.json"),
                       R"(t.json:1: not a ytape tape: "format" is "onnx", not "ytape-tape")",
                       UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"version\":1,\"ops\":[],\n\"outputs\":[]}", "t.json"),
                       R"(t.json:2: not a ytape tape: it has no "format":"ytape-tape")", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(R"({"format":"ytape-tape","version":4,"ops":[{"new":"field"}]})", "t.json"),
      "t.json:1: written by a newer ytape (format version 4); this one reads version 3", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(R"({"format":"ytape-tape","version":0})", "t.json"),
                       "t.json:1: format version 0 does not exist; this ytape reads version 3",
                       UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(R"({"format":"ytape-tape","version":1.5})", "t.json"),
                       "t.json:1: \"version\" must be an integer, got 1.5", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(R"({"format":"ytape-tape","ops":[],"outputs":[]})", "t.json"),
                       "t.json:1: the tape has no \"version\"", UserError);
}

TEST_CASE("json errors: unknown, duplicate and missing keys") {
  CHECK_THROWS_WITH_AS(
      read_tape_json(R"({"format":"ytape-tape","version":1,"files":[]})", "t.json"),
      "t.json:1: unknown key \"files\" in the tape (expected format, version, name, meta, "
      "scopes, ops, outputs)",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","shape":[3]})"), "t.json"),
      "t.json:4: unknown key \"shape\" in an op (expected out, op, name, value, args, attrs, type, "
      "loc, scope, regions)",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(kInputX, R"({"var":1,"name":"y","type":"f32[3]"})"), "t.json"),
      "t.json:7: unknown key \"type\" in an output (expected var, name)", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","name":"y"})"), "t.json"),
      "t.json:4: duplicate key \"name\" in an op", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(R"({"format":"ytape-tape","format":"ytape-tape"})", "t.json"),
                       "t.json:1: duplicate key \"format\" in the tape", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n" + R"({"out":[2],"op":"sin"})"),
                     "t.json"),
      "t.json:5: sin: missing key \"args\"", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x"})"), "t.json"),
      "t.json:4: input: missing key \"type\"", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(R"({"out":[1],"name":"x"})"), "t.json"),
                       "t.json:4: an op has no \"op\" (input, const or a primitive)", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[]"],"args":[]})"),
                     "t.json"),
      "t.json:4: input: unexpected key \"args\" (an input has out, op, name, type, loc, scope)",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json("{\"format\":\"ytape-tape\",\"version\":1,\n\"outputs\":[]\n}", "t.json"),
      "t.json:3: the tape has no \"ops\"", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(kInputX, R"({"name":"y"})"), "t.json"),
                       "t.json:7: an output has no \"var\"", UserError);
}

TEST_CASE("json errors: unknown primitive") {
  std::string x = std::string(kInputX) + ",\n";
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"sine","args":[1]})"), "t.json"),
      "t.json:5: unknown primitive \"sine\": it is not in ytape's op list (docs/primitives.md); "
      "did you mean 'sin'?",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"frobnicate","args":[1]})"), "t.json"),
      "t.json:5: unknown primitive \"frobnicate\": it is not in ytape's op list "
      "(docs/primitives.md)",
      UserError);
}

TEST_CASE("json errors: bad attributes") {
  std::string x = std::string(kInputX) + ",\n";
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(x + R"({"out":[2],"op":"convert","args":[1],"attrs":{"dtyp":"f64"}})"),
          "t.json"),
      "t.json:5: convert: has no attribute 'dtyp' (it takes dtype)", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(x + R"({"out":[2],"op":"convert","args":[1],"attrs":{"dtype":"f8"}})"),
          "t.json"),
      "t.json:5: convert: attribute 'dtype': unknown dtype \"f8\" (expected f32, f64, f16, i64 or "
      "bool)",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"convert","args":[1],"attrs":{"dtype":3}})"),
                     "t.json"),
      "t.json:5: convert: attribute 'dtype' must be dtype, not int 3", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"convert","args":[1]})"), "t.json"),
      "t.json:5: convert: needs attribute 'dtype' (dtype)", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"sin","args":[1],"attrs":{"a":1,"a":2}})"),
                     "t.json"),
      "t.json:5: duplicate attribute \"a\"", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"sin","args":[1],"attrs":{"a":{}}})"),
                     "t.json"),
      "t.json:5: expected an attribute value (a number, string, bool or list of integers), got "
      "'{'",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"fill","args":[],"attrs":{"value":1e999,
"dtype":"f32","shape":[]}})"),
                     "t.json"),
      "t.json:5: 1e999 is out of range for a float attribute (infinities are written \"inf\" and "
      "\"-inf\")",
      UserError);
}

TEST_CASE("json errors: vars used before, or never, defined; defined twice") {
  std::string x = std::string(kInputX) + ",\n";
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"sin","args":[7]})"), "t.json"),
      "t.json:5: sin: var 7 is not defined by an earlier op", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(x + "{\"out\":[2],\"op\":\"sin\",\"args\":[3]},\n" +
                                                R"({"out":[3],"op":"sin","args":[1]})"),
                                      "t.json"),
                       "t.json:5: sin: var 3 is not defined by an earlier op", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[1],"op":"sin","args":[1]})"), "t.json"),
      "t.json:5: sin: var 1 is defined twice (first on line 4)", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[0],"op":"sin","args":[1]})"), "t.json"),
      "t.json:5: var ids are positive integers, got 0", UserError);
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(kInputX, R"({"var":2,"name":"y"})"), "t.json"),
                       "t.json:7: output \"y\" is var 2, which no op defines", UserError);
}

TEST_CASE("json errors: outputs of a call") {
  std::string img = R"({"out":[1],"op":"input","name":"x","type":["f32[2,2,1,1]"]},)"
                    "\n";
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(img + R"({"out":[2,3],"op":"sin","args":[1]})"), "t.json"),
      "t.json:5: sin has 1 output, but \"out\" lists 2", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(img + R"({"out":[2],"op":"max_pool2d_with_indices","args":[1],
"attrs":{"window":[2,2],"stride":[2,2]}})"),
                     "t.json"),
      "t.json:5: max_pool2d_with_indices has 2 outputs, but \"out\" lists 1", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(img + R"({"out":[2],"op":"sin","args":[1],"type":[]})"), "t.json"),
      "t.json:5: sin: \"type\" lists 0 types for 1 output", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(img + R"({"out":[2],"op":"sin","args":[1,1]})"), "t.json"),
      "t.json:5: sin: takes 1 argument, got 2", UserError);
}

TEST_CASE("json errors: a type that disagrees with inference") {
  std::string x = std::string(kInputX) + ",\n";
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x + R"({"out":[2],"op":"sin","args":[1],"type":["f64[3]"]})"),
                     "t.json"),
      "t.json:5: sin: the file says f64[3] but the inferred type is f32[3]", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(
              R"({"out":[1],"op":"input","name":"x","type":["f32[2,2,1,1]"]},)"
              "\n"
              R"({"out":[2,3],"op":"max_pool2d_with_indices","args":[1],)"
              R"("attrs":{"window":[2,2],"stride":[2,2]},"type":["f32[1,1,1,1]","f32[1,1,1,1]"]})"),
          "t.json"),
      "t.json:5: max_pool2d_with_indices: output 2: the file says f32[1,1,1,1] but the inferred "
      "type is i64[1,1,1,1]",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(x +
                               R"({"out":[2],"op":"exp","args":[1],"loc":"m.jl:9"},)"
                               "\n" +
                               R"({"out":[3],"op":"add","args":[1,2],"type":["f32[3]"],)"
                               R"("loc":"m.jl:10"},)"
                               "\n" +
                               R"({"out":[4],"op":"log","args":[3],"type":["i64[3]"]})"),
                     "t.json"),
      "t.json:7: log: the file says i64[3] but the inferred type is f32[3]", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"i","type":["i64[3]"]},)"
                               "\n"
                               R"({"out":[2],"op":"exp","args":[1],"loc":"m.jl:9"})"),
                     "t.json"),
      "t.json:5: m.jl:9: exp: the argument must be f32 or f64, got i64[3]", UserError);
}

TEST_CASE("json errors: malformed types and absurd shapes") {
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[3"]})"),
                     "t.json"),
      "t.json:4: 'f32[3' is not a type such as f32[3,4]", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[-1]"]})"),
                     "t.json"),
      "t.json:4: bad type 'f32[-1]': dimension -1 is negative", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(
              R"({"out":[1],"op":"input","name":"x","type":["f32[65536,65536,65536,65536]"]})"),
          "t.json"),
      "t.json:4: bad type 'f32[65536,65536,65536,65536]': shape [65536,65536,65536,65536] has "
      "more than 2^48 elements",
      UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","type":[""]})"), "t.json"),
      "t.json:4: '' is not a type such as f32[3,4]", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(R"({"out":[1],"op":"input","name":"x","type":[]})"), "t.json"),
      "t.json:4: input: \"type\" must list one type, not 0", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(
              R"({"out":[1],"op":"const","value":[],"type":["f32[1,65536,65536,65536,65536]"]})"),
          "t.json"),
      "t.json:4: bad type 'f32[1,65536,65536,65536,65536]': shape [1,65536,65536,65536,65536] "
      "has more than 2^48 elements",
      UserError);
}

TEST_CASE("json errors: const values") {
  auto konst = [](std::string_view value, std::string_view type) {
    return read_tape_json(
        tape_json(
            fmt::format(R"({{"out":[1],"op":"const","value":{},"type":["{}"]}})", value, type)),
        "t.json");
  };
  CHECK_THROWS_WITH_AS(konst("[1,2]", "f32[3]"),
                       "t.json:4: const: \"value\" has 2 elements, but type f32[3] has 3",
                       UserError);
  CHECK_THROWS_WITH_AS(konst("[1.5]", "i64[]"),
                       "t.json:4: const: value 1.5 is not an i64 (write an integer)", UserError);
  CHECK_THROWS_WITH_AS(konst("[\"inf\"]", "i64[]"),
                       "t.json:4: const: value \"inf\" is not an i64 (write an integer)",
                       UserError);
  CHECK_THROWS_WITH_AS(konst("[1]", "bool[]"),
                       "t.json:4: const: value 1 is not a bool (write true or false)", UserError);
  CHECK_THROWS_WITH_AS(konst("[true]", "f32[]"),
                       "t.json:4: const: value true is not an f32 (write a number)", UserError);
  CHECK_THROWS_WITH_AS(
      konst("[1e39]", "f32[]"),
      "t.json:4: 1e39 is out of range for f32 (infinities are written \"inf\" and \"-inf\")",
      UserError);
  CHECK_THROWS_WITH_AS(
      konst("[1e309]", "f64[]"),
      "t.json:4: 1e309 is out of range for f64 (infinities are written \"inf\" and \"-inf\")",
      UserError);
  CHECK_THROWS_WITH_AS(
      konst("[1e-50]", "f32[]"),
      "t.json:4: 1e-50 is too small for f32: it would round to 0 (write 0 if that is meant)",
      UserError);
  CHECK_THROWS_WITH_AS(
      konst("[-1e-400]", "f64[]"),
      "t.json:4: -1e-400 is too small for f64: it would round to 0 (write 0 if that is meant)",
      UserError);
  CHECK_THROWS_WITH_AS(konst("[\"Infinity\"]", "f32[]"),
                       "t.json:4: const value \"Infinity\" is not a number (the non-finite values "
                       "are \"nan\", \"inf\" and \"-inf\")",
                       UserError);
  CHECK_THROWS_WITH_AS(
      konst("[[1],[2]]", "f32[2]"),
      "t.json:4: \"value\" is a flat list of elements in column-major order, not nested lists",
      UserError);
  CHECK_THROWS_WITH_AS(konst("[9223372036854775808]", "i64[]"),
                       "t.json:4: integer 9223372036854775808 does not fit in 64 bits", UserError);
  CHECK(konst("[1e38,-3,\"nan\"]", "f32[3]").ops.size() == 1);
}

TEST_CASE("json errors: duplicate input and output names") {
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n" +
                               R"({"out":[2],"op":"input","name":"x","type":["f32[]"]})"),
                     "t.json"),
      "t.json:5: two inputs are named 'x'", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(kInputX, "{\"var\":1,\"name\":\"y\"},\n{\"var\":1,\"name\":\"y\"}"),
                     "t.json"),
      "t.json:8: two outputs are named \"y\"", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n" +
                               R"({"out":[2],"op":"sin","args":[1]},)"
                               "\n" +
                               R"({"out":[3],"op":"input","name":"z","type":["f32[]"]})"),
                     "t.json"),
      "t.json:6: input 'z' comes after other ops; declare every input first", UserError);
}

TEST_CASE("json errors: integers that overflow int64") {
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n" +
                               R"({"out":[2],"op":"sin","args":[99999999999999999999]})"),
                     "t.json"),
      "t.json:5: integer 99999999999999999999 does not fit in 64 bits", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(R"({"format":"ytape-tape","version":-99999999999999999999})", "t.json"),
      "t.json:1: integer -99999999999999999999 does not fit in 64 bits", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(
              R"({"out":[1],"op":"fill","args":[],"attrs":{"value":0,"dtype":"f32","shape":[18446744073709551616]}})"),
          "t.json"),
      "t.json:4: integer 18446744073709551616 does not fit in 64 bits", UserError);
}

TEST_CASE("json errors: deep nesting is refused at once") {
  std::string deep(1000000, '[');
  CHECK_THROWS_WITH_AS(read_tape_json(deep, "t.json"),
                       "t.json:1: expected '{' (a tape is a JSON object), got '['", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(R"({"format":"ytape-tape","version":1,"ops":[[)" + deep, "t.json"),
      "t.json:1: expected an op (a JSON object), got '['", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(std::string(kInputX) + ",\n" +
                               R"({"out":[2],"op":"sin","args":[1],"attrs":{"a":[)" + deep),
                     "t.json"),
      "t.json:5: an element of a list attribute must be an integer, got '['", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(R"({"format":"ytape-tape","version":1,"meta":{"a":{)" + deep, "t.json"),
      "t.json:1: expected a string (meta values are strings), got '{'", UserError);
}

TEST_CASE("json errors: strings") {
  auto named = [](std::string_view name) {
    return read_tape_json(
        tape_json(fmt::format(R"({{"out":[1],"op":"input","name":"{}","type":["f32[]"]}})", name)),
        "t.json");
  };
  CHECK_THROWS_WITH_AS(
      named("a\\qb"),
      "t.json:4: bad escape in a string (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX)",
      UserError);
  CHECK_THROWS_WITH_AS(named("a\\u12"), "t.json:4: bad escape: \\u needs four hex digits",
                       UserError);
  CHECK_THROWS_WITH_AS(named("a\\ud800b"), "t.json:4: unpaired surrogate \\ud800 in a string",
                       UserError);
  CHECK_THROWS_WITH_AS(named("a\\udc00"), "t.json:4: unpaired surrogate \\udc00 in a string",
                       UserError);
  CHECK_THROWS_WITH_AS(named("tab\there"),
                       "t.json:4: raw control character 0x09 in a string; write it as \\u0009",
                       UserError);
  CHECK_THROWS_WITH_AS(named("bad \xff byte"), "t.json:4: invalid UTF-8 in a string", UserError);
  CHECK_THROWS_WITH_AS(named("overlong \xc0\xaf"), "t.json:4: invalid UTF-8 in a string",
                       UserError);
  CHECK_THROWS_WITH_AS(named("surrogate \xed\xa0\x80"), "t.json:4: invalid UTF-8 in a string",
                       UserError);
  CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"ytape-", "t.json"),
                       "t.json:1: unterminated string", UserError);
  CHECK(named("\\ud83d\\ude00 \\u00e9 \xf0\x9f\x98\x80").ops[0].name ==
        "\xf0\x9f\x98\x80 \xc3\xa9 \xf0\x9f\x98\x80");
}

// The reader's fast paths (strings scanned 16 bytes a step, var ids, keys in canonical
// order, a type repeated from the op before) must judge what the general ones judge.
TEST_CASE("json errors: past the reader's fast paths") {
  auto named = [](std::string_view name) {
    return read_tape_json(
        tape_json(fmt::format(R"({{"out":[1],"op":"input","name":"{}","type":["f32[]"]}})", name)),
        "t.json");
  };
  // A character that ends the plain run at every offset of the first two 16-byte steps.
  for (size_t at = 0; at < 40; ++at) {
    std::string pad(at, 'a');
    CHECK(named(pad + "\\u0041z").ops[0].name == pad + "Az");
    CHECK(named(pad + "\xc3\xa9").ops[0].name == pad + "\xc3\xa9");
    CHECK_THROWS_WITH_AS(named(pad + "\t"),
                         "t.json:4: raw control character 0x09 in a string; write it as \\u0009",
                         UserError);
    CHECK_THROWS_WITH_AS(named(pad + "\xff"), "t.json:4: invalid UTF-8 in a string", UserError);
    // The text ends inside the string, fewer than 16 bytes on.
    CHECK_THROWS_WITH_AS(read_tape_json("{\"format\":\"" + pad, "t.json"),
                         "t.json:1: unterminated string", UserError);
  }
  auto sin_of = [](std::string_view arg) {
    return read_tape_json(
        tape_json(std::string(kInputX) + ",\n" +
                  fmt::format(R"({{"out":[2],"op":"sin","args":[{}],"type":["f32[3]"]}})", arg)),
        "t.json");
  };
  CHECK(sin_of("1").ops.size() == 2);
  CHECK(sin_of(" 1 ").ops.size() == 2);
  CHECK_THROWS_WITH_AS(sin_of("01"), "t.json:5: a number cannot have a leading 0", UserError);
  CHECK_THROWS_WITH_AS(sin_of("1.5"), "t.json:5: a var id must be an integer, got 1.5", UserError);
  CHECK_THROWS_WITH_AS(sin_of("1e0"), "t.json:5: a var id must be an integer, got 1e0", UserError);
  CHECK_THROWS_WITH_AS(sin_of("0"), "t.json:5: var ids are positive integers, got 0", UserError);
  CHECK_THROWS_WITH_AS(sin_of("123456789012345678"),
                       "t.json:5: sin: var 123456789012345678 is not defined by an earlier op",
                       UserError);
  CHECK_THROWS_WITH_AS(sin_of("9223372036854775807"),
                       "t.json:5: sin: var 9223372036854775807 is not defined by an earlier op",
                       UserError);
  CHECK_THROWS_WITH_AS(sin_of("9223372036854775808"),
                       "t.json:5: integer 9223372036854775808 does not fit in 64 bits", UserError);
  // A key given again after later ones, and one out of canonical order.
  CHECK_THROWS_WITH_AS(read_tape_json(tape_json(R"({"out":[1],"op":"input","out":[2]})"), "t.json"),
                       "t.json:4: duplicate key \"out\" in an op", UserError);
  CHECK(read_tape_json(tape_json(R"({"op":"input","type":["f32[3]"],"out":[1],"name":"x"})"),
                       "t.json")
            .ops.size() == 1);
  // A type repeated, then another, then one that is not a type.
  std::string ops =
      std::string(kInputX) + ",\n" + R"({"out":[2],"op":"sin","args":[1],"type":["f32[3]"]},)" +
      "\n" + R"({"out":[3],"op":"sum","args":[2],"attrs":{"dims":[1]},"type":["f32[]"]},)" + "\n";
  CHECK(read_tape_json(tape_json(ops + R"({"out":[4],"op":"sin","args":[3],"type":["f32[]"]})"),
                       "t.json")
            .ops.size() == 4);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(ops + R"({"out":[4],"op":"sin","args":[3],"type":["f32[3]"]})"),
                     "t.json"),
      "t.json:7: sin: the file says f32[3] but the inferred type is f32[]", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(tape_json(ops + R"({"out":[4],"op":"sin","args":[3],"type":[""]})"), "t.json"),
      "t.json:7: '' is not a type such as f32[3,4]", UserError);
}

TEST_CASE("json errors: locations") {
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[]"],"loc":"m.jl"})"),
          "t.json"),
      "t.json:4: input: bad \"loc\" \"m.jl\" (expected \"file:line\")", UserError);
  CHECK_THROWS_WITH_AS(
      read_tape_json(
          tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[]"],"loc":"m.jl:-1"})"),
          "t.json"),
      "t.json:4: input: bad \"loc\" \"m.jl:-1\" (expected \"file:line\")", UserError);
  Tape t = read_tape_json(
      tape_json(R"({"out":[1],"op":"input","name":"x","type":["f32[]"],"loc":"C:\\m.jl:7"})"),
      "t.json");
  CHECK(t.loc_str(t.ops[0].loc) == "C:\\m.jl:7");
}

TEST_CASE("json: the schema lists every primitive") {
  std::ifstream in(YTAPE_SOURCE_DIR "/docs/tape.schema.json");
  REQUIRE(in.good());
  nlohmann::json schema = nlohmann::json::parse(in);
  std::set<std::string> listed;
  for (const auto& name : schema.at("$defs").at("call").at("properties").at("op").at("enum")) {
    listed.insert(name.get<std::string>());
  }
  std::set<std::string> prims;
  for (Prim p : all_prims()) prims.insert(std::string(prim_name(p)));
  CHECK(listed == prims);
}
