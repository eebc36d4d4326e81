// The language of test files: Test's macros and keywords, exceptions, Julia's === and ==,
// and the small Base functions tests call. Expected values are Julia's.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("=== is egal: immutable values by content, mutable ones by identity") {
  std::string p = R"(
struct R
  e
  t
end
mutable struct M
  x
end
a = [1.0]
m = M(1)
)";
  CHECK(eval_show(p, "R(1, a) === R(1, a), R(1, [1.0]) === R(1, [1.0]), (1, a) === (1, a)") ==
        "(true, false, true)");
  CHECK(eval_show(p, "m === m, M(1) === M(1), [] === [], a === a, a === [1.0]") ==
        "(true, false, false, true, false)");
  // == compares numbers and arrays by value, collections item by item, the rest as ===.
  CHECK(eval_show(p, "R(1, a) == R(1, a), R(1, [1.0]) == R(1, [1.0]), ([1.0],) == ([1.0],)") ==
        "(true, false, true)");
  CHECK(eval_show(p, "(1, 2) == (1, 2.0), Any[1, [2.0]] == Any[1.0, [2]], (a=1,) == (b=1,)") ==
        "(true, true, false)");
  CHECK(eval_show(p, "M(1) == M(1), (x = R(1, a),) == (x = R(1, a),), (1, a) != (1, [2.0])") ==
        "(false, true, true)");
  check_trace_matches("f(x, y) = ifelse((x, 1) == (y, 1), 1f0, 0f0)\nx = [1f0]\ny = [1f0]", "f",
                      {"x", "y"});
}

TEST_CASE("@test_throws names the exception type; @test_broken, @test_skip, @test_nowarn") {
  CHECK(run_error("@test_throws DimensionMismatch [1.0 2.0] * [1.0, 2.0, 3.0]\n"
                  "@test_throws MethodError Dense(10, 10.5)\n"
                  "@test_throws ArgumentError throw(ArgumentError(\"no\"))\n"
                  "@test_throws Exception error(\"any\")\n"
                  "@test_throws ErrorException error(\"plain\")\n"
                  "@test_throws KeyError Dict(:a => 1)[:b]\n"
                  "@test_throws DimensionMismatch [1.0, 2.0] .+ [1.0, 2.0, 3.0]\n"
                  "@test_broken 1 == 2\n@test_broken error(\"x\")\n@test_skip error(\"x\")\n"
                  "@test_nowarn sum([1])") == "no error");
  CHECK(run_error("@test_throws ArgumentError error(\"plain\")")
            .find("Test Failed: error(\"plain\") threw ErrorException (plain); expected "
                  "ArgumentError") != std::string::npos);
  CHECK(run_error("@test_throws MethodError sum([1])")
            .find("Test Failed: sum([1]) did not throw; expected MethodError") !=
        std::string::npos);
  CHECK(run_error("@test_broken 1 == 1").find("Unexpected Pass: 1 == 1 holds now") !=
        std::string::npos);
  // throw(e) ends the program with e's type and message, as Julia prints it.
  CHECK(run_error("throw(DomainError(-1, \"negative\"))").find("DomainError with -1: negative") !=
        std::string::npos);
}

TEST_CASE("Base odds and ends Flux's tests use") {
  CHECK(eval_show("", "eltype([]), eltype((1, 2)), eltype((1, 2.0)), typeof(sin)") ==
        "(Any, Int64, Union{Int64, Float64}, typeof(sin))");
  CHECK(eval_show("seed!(1)\nb = rand(Bool, 2, 3)", "size(b), eltype(b)") == "((2, 3), Bool)");
  // isapprox compares at the precision of the less precise float type, as Julia's.
  CHECK(eval_show("", "Float32[1] ≈ [1.0 + 1e-5], [1.0] ≈ [1.0 + 1e-5], 1f0 ≈ 1.00001") ==
        "(true, false, true)");
  // Keywords splatted from :name => value pairs.
  CHECK(eval_show("g(; kw...) = kw", "g(; [:a => 1, :b => 2]...)") == "(a = 1, b = 2)");
  CHECK(run_error("g(; kw...) = kw\ng(; [1, 2]...)")
            .find("keywords are splatted from a named tuple or from :name => value pairs") !=
        std::string::npos);
}

TEST_CASE("ranges broadcast as arrays; strings concatenate; typeof(f) as a type parameter") {
  CHECK(eval_show("", "(1:4) .== 2, eltype(1:3), (1:3) .* 2") ==
        "(Bool[0, 1, 0, 0], Int64, [2, 4, 6])");
  CHECK(eval_show("", "\"a\" * \"b\" * \"c\", inv(4), inv(2f0), hcat(), vcat()") ==
        "(\"abc\", 0.25, 0.5f0, Any[], Any[])");
  CHECK(eval_show("struct P{F, T}\n  f::F\n  t::T\nend",
                  "P(hcat, ()) isa P{typeof(hcat), Tuple{}}") == "true");
}

TEST_CASE(
    "Test's syntax as Flux's tests write it: do ... end[1], @test keywords, exception values") {
  std::string p = R"(
g = gradient([1.0, 2.0]) do v
  sum(abs2, v)
end[1]
@test [1.0, 1.0] ≈ [1.0, 1.0 + 1e-9] rtol=1e-6
@test 1.0 ≈ 1.1 atol=0.2
@test 1 == 2 skip=true
@test 1 == 2 broken=true
@test_throws DomainError(-1, "no") throw(DomainError(-1, "no"))
)";
  CHECK(eval_show(p, "g") == "[2.0, 4.0]");
  CHECK(run_error("@test 1.0 ≈ 1.1 atol=0.01").find("Test Failed: 1.0 ≈ 1.1") != std::string::npos);
  CHECK(run_error("@test_throws DomainError(-1, \"yes\") throw(DomainError(-1, \"no\"))")
            .find("threw DomainError with -1: no; expected DomainError with -1: yes") !=
        std::string::npos);
  CHECK(run_error("@test 1 == 1 atol").find("@test takes keywords after its expression") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
