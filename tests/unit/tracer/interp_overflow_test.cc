// Integer arithmetic at its limits (issue #42, item 10): Julia's DivideError, InexactError
// and OverflowError where Julia raises them, wrapping where Julia wraps, never C's
// undefined behaviour. Expected values and messages are Julia's (1.10, and its rational.jl
// of 1.11 for the checked denominators).
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

namespace {

bool fails_with(const std::string& program, const std::string& message) {
  std::string m = run_error(program);
  bool found = m.find(message) != std::string::npos;
  if (!found) MESSAGE(program << ": " << m);
  return found;
}

}  // namespace

TEST_CASE("integer division: DivideError by zero and for typemin(Int) ÷ -1") {
  const std::string divide = "DivideError: integer division error";
  // 2^63 wraps around to typemin(Int), whose quotient by -1 no Int64 holds.
  CHECK(fails_with("(2^63) ÷ -1", divide));
  for (std::string e : {"1 ÷ 0", "div(1, 0)", "7 % 0", "rem(7, 0)", "mod(7, 0)", "fld(7, 0)",
                        "cld(7, 0)", "fld(typemin(Int), -1)", "cld(typemin(Int), -1)",
                        "checked_div(1, 0)", "checked_rem(1, false)"}) {
    CHECK(fails_with(e, divide));
  }
  // The remainders of typemin(Int) by -1 are 0, as Julia's (no quotient is needed).
  CHECK(eval_show("", "rem(typemin(Int), -1), mod(typemin(Int), -1), typemin(Int) ÷ 1") ==
        "(0, 0, -9223372036854775808)");
  CHECK(eval_show("", "-7 ÷ 2, -7 % 2, mod(-7, 2), fld(-7, 2), cld(-7, 2)") ==
        "(-3, -1, 1, -4, -3)");
  CHECK(eval_show("", "@test_throws DivideError 1 ÷ 0") == "nothing");
}

TEST_CASE("a float into an Int: exact or InexactError, as Julia's") {
  CHECK(fails_with("Int(1e30)", "InexactError: Int64(1.0e30)"));
  CHECK(fails_with("Int(Inf)", "InexactError: Int64(Inf)"));
  CHECK(fails_with("Int(-Inf)", "InexactError: Int64(-Inf)"));
  CHECK(fails_with("Int(NaN)", "InexactError: Int64(NaN)"));
  CHECK(fails_with("Int(2.5)", "InexactError: Int64(2.5)"));
  CHECK(fails_with("Int(1f30)", "InexactError: Int64(1.0f30)"));
  // 2^63 as a float is just past typemax(Int); -2^63 is typemin(Int).
  CHECK(fails_with("Int(9.223372036854775807e18)", "InexactError: Int64(9.223372036854776e18)"));
  CHECK(eval_show("", "Int(-9.223372036854775808e18), Int(3.0), convert(Int, -0.0)") ==
        "(-9223372036854775808, 3, 0)");
  CHECK(fails_with("Bool(2)", "InexactError: Bool(2)"));
  CHECK(fails_with("Bool(0.5)", "InexactError: Bool(0.5)"));
  // round(Int, x) is trunc(Int, round(x)) in Julia, and says so.
  CHECK(fails_with("round(Int, 1e30)", "InexactError: trunc(Int64, 1.0e30)"));
  CHECK(fails_with("floor(Int, Inf)", "InexactError: trunc(Int64, Inf)"));
  CHECK(fails_with("trunc(Int, NaN32)", "InexactError: trunc(Int64, NaN32)"));
  CHECK(eval_show("", "round(Int, 2.5), floor(Int, -1.5), ceil(Int, 1.2)") == "(2, -2, 2)");
  // Arrays, converted or written into, alike.
  CHECK(fails_with("Int.([1.0, 1e30])", "InexactError: Int64(1.0e30)"));
  CHECK(fails_with("round.(Int, [0.5, 1e30])", "InexactError: trunc(Int64, 1.0e30)"));
  CHECK(fails_with("Bool.([0.0, 2.0])", "InexactError: Bool(2.0)"));
  CHECK(fails_with("x = [1, 2]; x[1] = Inf", "InexactError: Int64(Inf)"));
  CHECK(fails_with("x = [true]; x[1] = 2", "InexactError: Bool(2)"));
  CHECK(eval_show("", "Int.([1.0, -2.0]), round.(Int, [1.5, 2.5])") == "([1, -2], [2, 2])");
}

TEST_CASE("a range's length past Int64 is Julia's checked_length OverflowError") {
  CHECK(fails_with("length(-2^63:2^63-1)",
                   "OverflowError: 9223372036854775807 - -9223372036854775808 overflowed for type "
                   "Int64"));
  CHECK(fails_with("length(0:2^63-1)", "OverflowError: 9223372036854775807 + 1 overflowed"));
  CHECK(fails_with("length(2^63-1:-1:-2^63)",
                   "OverflowError: 9223372036854775807 - -9223372036854775808 overflowed"));
  // A for loop does not take it for empty: it fails at the range.
  CHECK(fails_with("for i in typemin(Int):typemax(Int)\nend", "t.jl:1:22: OverflowError"));
  // The elements are computed without overflow on the way.
  CHECK(eval_show("r = typemin(Int)+1:4:typemax(Int)",
                  "length(r), r[2], last(r), length(typemax(Int):typemin(Int))") ==
        "(4611686018427387904, -9223372036854775803, 9223372036854775805, 0)");
  // first, last, isempty and `in` read the bounds of a range, whatever its length.
  CHECK(eval_show("r = 1:3:2^62",
                  "first(r), last(r), isempty(r), 4 in r, 5 in r, 2^62 in r, 2^62 - 2 in r, "
                  "isempty(2:1)") ==
        "(1, 4611686018427387904, false, true, false, true, false, true)");
}

TEST_CASE("the values of a huge range or ntuple count against the step limit, made or not") {
  const std::string past = "would take the program past its limit of 100000000 steps";
  CHECK(fails_with("[i for i in 1:2^62]", "the 4611686018427387904 values of 1:" +
                                              std::string("4611686018427387904 " + past)));
  CHECK(fails_with("sum(1:2^62)", past));
  CHECK(fails_with("prod(1:10^9)", "the 1000000000 values of 1:1000000000 " + past));
  CHECK(fails_with("ntuple(identity, 2^62)", "ntuple's 4611686018427387904 values " + past));
  CHECK(fails_with("permutedims(ones(2, 2), 1:2^40)", "must be a few integers, got a range of"));
  CHECK(eval_show("", "sum(1:100), ntuple(identity, 3), ntuple(identity, -1)") ==
        "(5050, (1, 2, 3), ())");
}

TEST_CASE("wrapping where Julia wraps; integers compare exactly") {
  CHECK(eval_show("", "abs(typemin(Int)), -typemin(Int), typemax(Int) + 1, 2^64, 3 * 2^62") ==
        "(-9223372036854775808, -9223372036854775808, -9223372036854775808, 0, "
        "-4611686018427387904)");
  // As doubles these compared equal.
  CHECK(eval_show("", "2^62 == 2^62 + 1, 2^53 + 1 > 2^53, typemax(Int) - 1 < typemax(Int)") ==
        "(false, true, true)");
  CHECK(
      eval_show("", "typemin(Int), typemax(Int), typemin(1.0), typemax(Float32), typemax(Bool)") ==
      "(-9223372036854775808, 9223372036854775807, -Inf, Inf32, true)");
}

TEST_CASE("Base.Checked: OverflowError where Int64 cannot hold the result") {
  CHECK(fails_with("checked_add(typemax(Int), 1)",
                   "OverflowError: 9223372036854775807 + 1 overflowed for type Int64"));
  CHECK(fails_with("checked_sub(typemin(Int), 1)",
                   "OverflowError: -9223372036854775808 - 1 overflowed for type Int64"));
  CHECK(fails_with("checked_mul(2^32, 2^31)",
                   "OverflowError: 4294967296 * 2147483648 overflowed for type Int64"));
  const std::string negation =
      "OverflowError: checked arithmetic: cannot compute -x for x = -9223372036854775808::Int64";
  CHECK(fails_with("checked_neg(typemin(Int))", negation));
  CHECK(fails_with("checked_abs(typemin(Int))", negation));
  CHECK(fails_with("checked_add(1.0, 2)", "checked_add takes integers, got a Float64"));
  CHECK(eval_show("",
                  "checked_add(1, 2), checked_sub(1, 2), checked_mul(-3, 4), "
                  "checked_neg(5), checked_abs(-5), checked_add(true, 1)") ==
        "(3, -1, -12, -5, 5, 2)");
  CHECK(eval_show("", "@test_throws OverflowError checked_add(typemax(Int), 1)") == "nothing");
}

TEST_CASE("rationals: normalized as Julia's, OverflowError where a part overflows") {
  const std::string negation =
      "OverflowError: checked arithmetic: cannot compute -x for x = -9223372036854775808::Int64";
  // The denominator typemin(Int) cannot move its sign to the numerator.
  CHECK(fails_with("-1 // 2^63", negation));
  CHECK(fails_with("1 // typemin(Int)", negation));
  CHECK(fails_with("typemin(Int) // -1", negation));
  CHECK(fails_with("inv(typemin(Int) // 1)", negation));
  CHECK(fails_with("abs(typemin(Int) // 1)", negation));
  CHECK(fails_with("-(typemin(Int) // 1)", "OverflowError: rational numerator is typemin(Int64)"));
  CHECK(fails_with("(2^62 // 3) * 4", "OverflowError: 4611686018427387904 * 4 overflowed"));
  CHECK(fails_with("(2 // 3)^70", "OverflowError"));
  CHECK(fails_with("(0 // 1) // 0", "DivideError: integer division error"));
  CHECK(
      fails_with("gcd(typemin(Int), 0)", "OverflowError: gcd(-9223372036854775808, 0) overflows"));
  // Reduced first, so that these fit; Julia's divgcd makes typemin(Int) over itself 1.
  CHECK(eval_show("", "2 // typemin(Int), typemin(Int) // typemin(Int), typemin(Int) // 2") ==
        "(-1//4611686018427387904, 1//1, -4611686018427387904//1)");
  CHECK(eval_show("", "(2^62 // 3) * (3 // 2^61), 1//0 + 1//0, (1//2)^-3, -3 // 0") ==
        "(2//1, 1//0, 8//1, -1//0)");
  CHECK(eval_show("", "gcd(typemin(Int), 6), gcd(-4, 6), gcd(0, -5), gcd(0, 0)") == "(2, 2, 5, 0)");
}

TEST_CASE("the prelude's exception types print as Julia's") {
  CHECK(fails_with("throw(DivideError())", "DivideError: integer division error"));
  CHECK(fails_with("throw(OverflowError(\"too big\"))", "OverflowError: too big"));
  CHECK(fails_with("throw(InexactError(:trunc, Int64, 2.5))", "InexactError: trunc(Int64, 2.5)"));
  CHECK(fails_with("throw(InexactError(:Int64, Int64, 2.5))", "InexactError: Int64(2.5)"));
  CHECK(eval_show("", "@test_throws InexactError Int(2.5)") == "nothing");
}

}  // namespace ytape::tracer::testing
