// cond and while_loop (docs/regions.md): built, printed, written to JSON and read back to the
// same bytes, and each rule of their signatures refused with its message.
#include <doctest/doctest.h>
#include <fmt/format.h>

#include "io/json.h"
#include "tape/builder.h"
#include "tape/digest.h"
#include "tape/error.h"
#include "tape/print.h"
#include "tape/validate.h"
#include "unit/tape/branch_tapes.h"

using namespace ytape;
using namespace ytape::testing;

namespace {

// A region taking `params` and yielding the first of them `yields` times (or a bool[] const
// where `flag`).
Tape passing(const std::vector<Type>& params, size_t yields, bool flag = false) {
  Builder r;
  std::vector<Var> in;
  for (const Type& t : params) in.push_back(r.input(fmt::format("p{}", in.size()), t));
  for (size_t k = 0; k < yields; ++k) r.output(flag ? r.constant(DType::boolean, 1.0) : in[0], "");
  return r.finish();
}

// The message of the UserError that recording `p` on these operands and regions throws.
std::string region_error(Prim p, const std::vector<Type>& operands, std::vector<Tape> regions,
                         const Attrs& attrs = {}) {
  Builder b;
  VarList args;
  for (const Type& t : operands) args.push_back(b.input(fmt::format("a{}", args.size()), t));
  try {
    b.record(p, args, attrs, std::move(regions));
  } catch (const UserError& e) {
    return e.what();
  }
  return "";
}

const Type kF{DType::f64, {3}}, kB{DType::boolean, {}}, kI{DType::i64, {}};

}  // namespace

TEST_CASE("cond and while_loop print their regions under them and round-trip through JSON") {
  for (const Tape& t : {branchy(), branchy(true), newton(50)}) {
    validate(t);
    std::string text = write_tape_json(t);
    CHECK(text.starts_with(R"({"format":"ytape-tape","version":2,)"));
    Tape back = read_tape_json(text, "t.json");
    CHECK(write_tape_json(back) == text);
    CHECK(print_tape(back) == print_tape(t));
    CHECK(tape_digest(back) == tape_digest(t));
  }
  std::string printed = print_tape(newton(50));
  CHECK(printed.find("= while_loop(%1, %2; consts=1, max_trips=50)::f64[]\n    cond\n") !=
        std::string::npos);
  CHECK(printed.find("\n    body\n") != std::string::npos);
  std::string two = print_tape(branchy());
  CHECK(two.find("\n    then\n") != std::string::npos);
  CHECK(two.find("\n    else\n") != std::string::npos);
  CHECK(print_tape(branchy(true)).find("\n    case3\n") != std::string::npos);
}

TEST_CASE("a cond's signature: its selector, its branches' names and types") {
  auto two = [](Tape a, Tape b) {
    std::vector<Tape> r;
    a.name = "then";
    b.name = "else";
    r.push_back(std::move(a));
    r.push_back(std::move(b));
    return r;
  };
  CHECK(region_error(Prim::cond, {kF, kF}, two(passing({kF}, 1), passing({kF}, 1))) ==
        "cond: its selector (the first operand) is f64[3]; a cond chooses by a bool[] or an i64[]");
  std::vector<Tape> one;
  one.push_back(passing({kF}, 1));
  one[0].name = "then";
  CHECK(region_error(Prim::cond, {kB, kF}, std::move(one)) ==
        "cond: a cond on bool[] holds two regions, then and else; got 1 regions");
  std::vector<Tape> swapped = two(passing({kF}, 1), passing({kF}, 1));
  std::swap(swapped[0].name, swapped[1].name);
  CHECK(region_error(Prim::cond, {kB, kF}, std::move(swapped)) ==
        "cond: its region 1 is named else; it must be then");
  CHECK(region_error(Prim::cond, {kB, kF}, two(passing({kF}, 1), passing({kI}, 1))) ==
        "cond: its region else takes (i64[]), but the operands after the selector are (f64[3])");
  CHECK(region_error(Prim::cond, {kB, kF}, two(passing({kF}, 1), passing({kF}, 2))) ==
        "cond: its region else yields (f64[3], f64[3]), but then yields (f64[3]); every branch "
        "yields the same types");
  std::vector<Tape> cases;
  cases.push_back(passing({kF}, 1));
  cases[0].name = "then";
  CHECK(region_error(Prim::cond, {kI, kF}, std::move(cases)) ==
        "cond: its region 1 is named then; it must be case1");
}

TEST_CASE("a while_loop's signature: cond then body, a bool[] condition, carries kept") {
  auto regions = [](Tape c, Tape b) {
    c.name = "cond";
    b.name = "body";
    std::vector<Tape> r;
    r.push_back(std::move(c));
    r.push_back(std::move(b));
    return r;
  };
  Attrs a = AttrsOf<Prim::while_loop>{.consts = 0, .max_trips = 5}.to_attrs();
  CHECK(region_error(Prim::while_loop, {kF}, regions(passing({kF}, 1, true), passing({kF}, 1)),
                     a) == "");
  CHECK(region_error(Prim::while_loop, {kF}, regions(passing({kF}, 1), passing({kF}, 1)), a) ==
        "while_loop: its region cond yields (f64[3]); it must yield one bool[]");
  CHECK(
      region_error(Prim::while_loop, {kF}, regions(passing({kF}, 1, true), passing({kF}, 2)), a) ==
      "while_loop: its region body yields (f64[3], f64[3]), but the carries "
      "are (f64[3])");
  CHECK(
      region_error(Prim::while_loop, {kF}, regions(passing({kI}, 1, true), passing({kF}, 1)), a) ==
      "while_loop: its region cond takes (i64[]), but the operands give it "
      "(f64[3]) (consts, then carries)");
  Attrs negative = AttrsOf<Prim::while_loop>{.consts = 0, .max_trips = -1}.to_attrs();
  CHECK(region_error(Prim::while_loop, {kF}, regions(passing({kF}, 1, true), passing({kF}, 1)),
                     negative) == "while_loop: max_trips=-1 is negative; 0 means unbounded");
  std::vector<Tape> swapped = regions(passing({kF}, 1), passing({kF}, 1, true));
  std::swap(swapped[0].name, swapped[1].name);
  CHECK(region_error(Prim::while_loop, {kF}, std::move(swapped), a) ==
        "while_loop: a while_loop holds two regions, cond then body; got (body, cond)");
}
