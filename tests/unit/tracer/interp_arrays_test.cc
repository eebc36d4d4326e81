// Arrays as Julia's: products over dims (prod, with no product primitive), indexing with
// index arrays (a gather when traced), and + of arrays equal up to trailing dims of 1.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("prod of arrays, with dims, and of static collections") {
  CHECK(eval_show("", "prod([1.0 2.0; 3.0 4.0])") == "24.0");
  CHECK(eval_show("", "prod([1 2 3; 4 5 6]; dims=1)") == "[4 10 18]");
  CHECK(eval_show("", "prod([1 2 3; 4 5 6]; dims=2)") == "[6; 120;;]");
  CHECK(eval_show("", "prod(Float32[1, 2, 3, 4, 5])") == "120.0f0");
  CHECK(eval_show("", "prod(abs, [-2, 3]), prod(Bool[1, 1, 0]), prod(Float64[])") ==
        "(6, false, 1.0)");
  CHECK(eval_show("", "prod(ones(2, 0); dims=2), prod((2, 3.0)), prod(1:5), prod(())") ==
        "([1.0; 1.0;;], 6.0, 120, 1)");
  std::string program = R"(
x = Float32[0.5 -2 1.5; 3 0.25 -1; 2 2 0.5; -1 1 2; 1.5 0.5 4]
whole(x) = prod(x)
rows(x) = (prod(x; dims=1), prod(x; dims=2), prod(x; dims=(1, 2)), prod(abs2, x; dims=2))
)";
  check_trace_matches(program, "whole", {"x"});
  check_trace_matches(program, "rows", {"x"});
  // Halving: 15 elements take 4 muls (7 + 4 + 2 + 1 products), not 14.
  std::string text = trace_text(program, "whole", {"x"});
  size_t muls = 0;
  for (size_t at = text.find("mul("); at != std::string::npos; at = text.find("mul(", at + 1))
    ++muls;
  CHECK(muls == 4);
}

TEST_CASE("indexing with index arrays gathers") {
  CHECK(eval_show("", "x = [10, 20, 30, 40]; x[[4, 1, 1]]") == "[40, 10, 10]");
  CHECK(eval_show("", "x = [1 2 3; 4 5 6]; x[:, [3, 1]], x[[2], 2:3], x[2, [true, false, true]]") ==
        "([3 1; 6 4], [5 6], [4, 6])");
  CHECK(eval_show("", "x = [1 2 3; 4 5 6]; x[[1 2; 2 1]]") == "[1 4; 4 1]");
  CHECK(eval_show("", "(:a, :b, :c)[[3, 1]]") == "(:c, :a)");
  CHECK(run_error("x = [1, 2, 3]; x[[1, 4]]")
            .find("index 4 is out of bounds for dimension 1 of size 3") != std::string::npos);
  CHECK(run_error("x = [1, 2, 3]; x[[1.0]]").find("an index array must hold integers or Bools") !=
        std::string::npos);
  std::string program = R"(
x = Float32[1 2 3; 4 5 6; 7 8 9; 10 11 12]
labels = [3, 1, 2]
picks(x) = (x[[1, 3]], x[:, [2, 1]], x[[4, 2], 3], x[[2, 1], [3, 3]])
by_label(x, labels) = sum(x[labels, :])
)";
  check_trace_matches(program, "picks", {"x"});
  check_trace_matches(program, "by_label", {"x", "labels"});
  std::string text = trace_text(program, "by_label", {"x", "labels"});
  CHECK(text.find("gather(%1, %3; dim=1)::f32[3,3]") != std::string::npos);
  CHECK(trace_error("f(x) = x[x .> 0]", "f", {"f32[3]"}).find("a traced Bool mask") !=
        std::string::npos);
}

TEST_CASE("+ of arrays equal up to trailing dims of 1, as Julia's promote_shape") {
  CHECK(eval_show("", "[1.0, 2.0] + [1.0 2.0]', [1.0, 2.0] - ones(2, 1, 1)") ==
        "([2.0; 4.0;;], [0.0; 1.0;;;])");
  CHECK(run_error("[1.0, 2.0] + ones(2, 2)").find("the shapes must be equal") != std::string::npos);
  check_trace_matches("f(x, y) = sum(abs2, x + y)\nx = [1f0, 2f0]\ny = [3f0 4f0]'", "f",
                      {"x", "y"});
}

}  // namespace ytape::tracer::testing
