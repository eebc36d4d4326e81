// custom_rule (docs/rules.md): built, printed, written to JSON and read back to the same
// bytes, and each rule of its signature refused with its message.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "io/json.h"
#include "tape/builder.h"
#include "tape/digest.h"
#include "tape/error.h"
#include "tape/op_attrs.h"
#include "tape/print.h"
#include "tape/validate.h"

using namespace ytape;

namespace {

const Type kF{DType::f64, {3}}, kI{DType::i64, {3}};

// A region named `name` taking `params`, yielding `yields` (indices into its parameters;
// -1 for the square of the first).
Tape region(const std::string& name, const std::vector<Type>& params,
            const std::vector<int>& yields) {
  Builder r;
  std::vector<Var> in;
  for (const Type& t : params) in.push_back(r.input(fmt::format("p{}", in.size() + 1), t));
  for (int k : yields) r.output(k < 0 ? r.mul(in[0], in[0]) : in[static_cast<size_t>(k)], "");
  Tape t = r.finish();
  t.name = name;
  return t;
}

std::vector<Tape> two(Tape a, Tape b) {
  std::vector<Tape> r;
  r.push_back(std::move(a));
  r.push_back(std::move(b));
  return r;
}

Attrs named(const std::string& name) {
  return AttrsOf<Prim::custom_rule>{.name = name, .rule = "t.jl:3"}.to_attrs();
}

// The message of the UserError that recording a custom_rule on `operands` throws.
std::string rule_error(const std::vector<Type>& operands, std::vector<Tape> regions,
                       const Attrs& attrs = named("sq")) {
  Builder b;
  VarList args;
  for (const Type& t : operands) args.push_back(b.input(fmt::format("a{}", args.size()), t));
  try {
    b.record(Prim::custom_rule, args, attrs, std::move(regions));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

}  // namespace

TEST_CASE("a custom_rule prints its regions and round-trips through JSON") {
  Builder b;
  Var x = b.input("x", kF);
  Var n = b.input("n", kI);
  // sq(x, n): body x*x; pullback (x, n, y, dy) -> dy (a wrong rule, as any may be).
  VarList outs =
      b.record(Prim::custom_rule, {x, n}, named("sq"),
               two(region("body", {kF, kI}, {-1}), region("pullback", {kF, kI, kF, kF}, {3})))
          .outs;
  b.output(outs[0], "y");
  Tape t = b.finish();
  validate(t);
  std::string text = write_tape_json(t);
  Tape back = read_tape_json(text, "t.json");
  CHECK(write_tape_json(back) == text);
  CHECK(tape_digest(back) == tape_digest(t));
  std::string printed = print_tape(back);
  CHECK(printed.find("= custom_rule(%1, %2; name=\"sq\", rule=\"t.jl:3\")::f64[3]\n    body\n") !=
        std::string::npos);
  CHECK(printed.find("\n    pullback\n") != std::string::npos);
}

TEST_CASE("a custom_rule's signature: its regions' names and types") {
  CHECK(rule_error({kF}, two(region("body", {kF}, {-1}), region("pullback", {kF, kF, kF}, {2})),
                   named("")) ==
        "custom_rule: its name is empty; it names the function the rule is for");
  CHECK(rule_error({kF}, two(region("pullback", {kF}, {-1}), region("body", {kF, kF, kF}, {2}))) ==
        "custom_rule: a custom_rule holds body, then pullback, and optionally pushforward; got "
        "(pullback, body)");
  CHECK(rule_error({kF}, two(region("body", {kI}, {-1}), region("pullback", {kF, kF, kF}, {2}))) ==
        "custom_rule: its region body takes (i64[3]), but the operands are (f64[3])");
  CHECK(rule_error({kF}, two(region("body", {kF}, {}), region("pullback", {kF}, {}))) ==
        "custom_rule: its region body yields nothing; a rule is for a function's results");
  CHECK(rule_error({kF}, two(region("body", {kF}, {-1}), region("pullback", {kF, kF}, {1}))) ==
        "custom_rule: its region pullback takes (f64[3], f64[3]), but it is given (f64[3], f64[3], "
        "f64[3]) "
        "(the operands, the results, then a cotangent per float result)");
  CHECK(rule_error({kF, kI}, two(region("body", {kF, kI}, {-1}),
                                 region("pullback", {kF, kI, kF, kF}, {3, 1}))) ==
        "custom_rule: its region pullback yields (f64[3], i64[3]); it must yield a cotangent per "
        "float "
        "operand, (f64[3])");
  // A third region, pushforward (an frule): (operands, their float tangents) -> tangents.
  auto with_pushforward = [](Tape pushforward) {
    std::vector<Tape> r = two(region("body", {kF}, {-1}), region("pullback", {kF, kF, kF}, {2}));
    r.push_back(std::move(pushforward));
    return r;
  };
  CHECK(rule_error({kF}, with_pushforward(region("pushforward", {kF, kF}, {1}))).empty());
  CHECK(rule_error({kF}, with_pushforward(region("pushforward", {kF}, {0}))) ==
        "custom_rule: its region pushforward takes (f64[3]), but it is given (f64[3], f64[3]) "
        "(the operands, then a tangent per float operand)");
  CHECK(rule_error({kF}, with_pushforward(region("jvp", {kF, kF}, {1}))) ==
        "custom_rule: a custom_rule holds body, then pullback, and optionally pushforward; got "
        "(body, pullback, jvp)");
}
