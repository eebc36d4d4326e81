// Rational numbers (prelude/rational.jl): exact with integers and rationals, a float of
// the other operand's type with floats, as Julia's Rational{Int64}. Expected values are
// Julia's.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("a // b: reduced, the sign on the numerator, exact arithmetic and comparisons") {
  CHECK(eval_show("", "2 // 4, -3 // 6, 3 // -6, 6 // 3, 1 // 0") ==
        "(1//2, -1//2, -1//2, 2//1, 1//0)");
  CHECK(eval_show("", "typeof(1 // 3), numerator(4 // 6), denominator(4 // 6)") ==
        "(Rational{Int64}, 2, 3)");
  CHECK(eval_show("", "1//3 + 1//6, 1//2 - 1, 2 * (3//4), (1//2) / (3//4), 1 / (1//2)") ==
        "(1//2, -1//2, 3//2, 2//3, 2//1)");
  CHECK(eval_show("", "(2//3)^2, (2//3)^-2, inv(-2//3), -(1//2), abs(-1//2)") ==
        "(4//9, 9//4, -3//2, -1//2, 1//2)");
  CHECK(
      eval_show("", "1//3 == 2//6, 1//3 + 1//3 == 2//3, 1//2 < 2//3, 2//3 <= 1//2, 1//2 == 0.5") ==
      "(true, true, true, false, true)");
  CHECK(eval_show("", "1//2 < 1, 2 <= 5//2, 4//2 == 2, iszero(0//5), isinteger(4//2)") ==
        "(true, true, true, true, true)");
  CHECK(eval_show("", "sum([1//2, 1//3]), [1//2, 1//3]") == "(5//6, Rational{Int64}[1//2, 1//3])");
}

TEST_CASE("comparisons of rationals are exact where cross products overflow Int64") {
  // Julia compares by widemul; 2^62 * 3 wraps around in Int64.
  std::string big = "a = (2^62 + 1) // 7\nb = (2^62 - 1) // 3\n";
  CHECK(eval_show(big, "a < b, b < a, a <= b, b <= a, a < a, a <= a") ==
        "(true, false, true, false, false, true)");
  CHECK(eval_show("",
                  "(2^62 - 1) // (2^61 + 1) < (2^62 - 3) // (2^61), "
                  "-(2^62 - 1) // 7 < -(2^62 - 2) // 7, 1//0 < 5//1, -1//0 < 5//1, "
                  "5//1 <= 1//0, 1//0 <= 1//0, 1//0 < 1//0") ==
        "(false, true, false, true, true, true, false)");
}

TEST_CASE("a rational with a float is a float of that float's type, rounded once") {
  // Julia: 0.5 * (1//3) == 0.16666666666666666; Float32(1) * 1//3 == 0.33333334f0.
  CHECK(eval_show("", "0.5 * (1 // 3), 1.0f0 * 1 // 3, float(1 // 3), convert(Float32, 2 // 3)") ==
        "(0.16666666666666666, 0.33333334f0, 0.3333333333333333, 0.6666667f0)");
  // Flux's label_smoothing writes α * 1 // size(y, 1).
  CHECK(eval_show("y = [1.0 0.0; 0.0 1.0]", "y .* (1 - 0.2) .+ 0.2 * 1 // size(y, 1)") ==
        "[0.9 0.1; 0.1 0.9]");
  // Traced: the float's dtype, and its gradient through the product.
  check_gradient("f(x) = sum(x .* (1 - 0.2) .+ 2x .* (1 // 3))\nx = [0.5, -1.0, 2.0]");
  CHECK(run_error("0 // 0").find("ArgumentError: invalid rational: zero(Int64)//zero(Int64)") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
