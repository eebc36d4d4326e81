// f16 in the JSON form: types, constants in shortest round-trip form, dtype attributes.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "io/json.h"
#include "tape/error.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

std::string tape_json(std::string_view ops, std::string_view outputs) {
  return fmt::format(
      "{{\"format\":\"ytape-tape\",\"version\":1,\"name\":\"t\",\n\"meta\":{{}},\n\"ops\":[\n"
      "{}\n],\n\"outputs\":[\n{}\n]}}\n",
      ops, outputs);
}

}  // namespace

TEST_CASE("json: f16 values, constants and conversions round trip") {
  std::string text = tape_json(
      R"({"out":[1],"op":"input","name":"x","type":["f16[3]"]},
{"out":[2],"op":"const","value":[0.1,65500.0,6e-08,"nan","-inf",-0.0],"type":["f16[6]"]},
{"out":[3],"op":"convert","args":[1],"attrs":{"dtype":"f32"},"type":["f32[3]"]},
{"out":[4],"op":"fill","args":[],"attrs":{"value":0.5,"dtype":"f16","shape":[2]},"type":["f16[2]"]},
{"out":[5],"op":"tanh","args":[1],"type":["f16[3]"]})",
      R"({"var":5,"name":"y"},
{"var":2,"name":"c"})");
  Tape t = read_tape_json(text, "t.json");
  validate(t);
  CHECK(t.type(t.ops[1].outs[0]) == Type{DType::f16, {6}});
  CHECK(write_tape_json(t) == text);
}

TEST_CASE("json: an f16 constant out of f16's range is refused") {
  auto read = [](std::string_view value) {
    return read_tape_json(
        tape_json(
            fmt::format(R"({{"out":[1],"op":"const","value":[{}],"type":["f16[1]"]}})", value),
            R"({"var":1,"name":"c"})"),
        "t.json");
  };
  CHECK_THROWS_WITH_AS(
      read("70000"),
      "t.json:4: 70000 is out of range for f16 (infinities are written \"inf\" and \"-inf\")",
      UserError);
  CHECK_THROWS_WITH_AS(read("1e-9"),
                       "t.json:4: 1e-9 is too small for f16: it would round to 0 (write 0 if "
                       "that is meant)",
                       UserError);
  CHECK(read("0.1").ops[0].value.size() == 2);
}
