// Float16 in the model language: the type, its numbers (rounded as Julia rounds them),
// arrays, promotion, Flux's f16, and tapes of f16 values.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("Float16 numbers round as Julia's and show as Julia shows them") {
  CHECK(eval_show("", "Float16(0.1), Float16(1) + Float16(2), Float16(65519.0) == 65504") ==
        "(Float16(0.1), Float16(3.0), true)");
  CHECK(eval_show("", "Float16(65520.0), Float16(1.0) / Float16(3.0)") ==
        "(Inf16, Float16(0.3333))");
  // As Julia: 2048 + 1 is a tie, to even.
  CHECK(eval_show("", "Float16(2048) + Float16(1)") == "Float16(2048.0)");
  CHECK(
      eval_show("", "typeof(Float16(1) + 1), typeof(Float16(1) + 1f0), typeof(Float16(1) * 2.0)") ==
      "(Float16, Float32, Float16)");
  CHECK(eval_show("", "eps(Float16), floatmax(Float16) == 65504, Float16 <: AbstractFloat") ==
        "(Float16(0.000977), true, true)");
  CHECK(eval_show("", "convert(Float16, 0.5), Float16(0.1) isa Float16") == "(Float16(0.5), true)");
}

TEST_CASE("Float16 arrays: creation, literals, eltype, conversion") {
  CHECK(eval_show("", "zeros(Float16, 2), ones(Float16, 1, 2), fill(Float16(0.1), 2)") ==
        "(Float16[0.0, 0.0], Float16[1.0 1.0], Float16[0.1, 0.1])");
  CHECK(eval_show("", "Float16[1, 2.5], eltype(rand(Float16, 3)) == Float16") ==
        "(Float16[1.0, 2.5], true)");
  CHECK(eval_show("", "randn(Float16, 3) isa Vector{Float16}, Float32.(Float16[0.1])") ==
        "(true, Float32[0.099975586])");
  CHECK(eval_show("x = Float16[1, 2]", "x .+ 1f0, x .* 2, x .+ Float16(0.5)") ==
        "(Float32[2.0, 3.0], Float16[2.0, 4.0], Float16[1.5, 2.5])");
}

TEST_CASE("Flux: Dense and Bilinear keep Float16 weights' type; f16 converts a model") {
  CHECK(eval_show("", "Dense(rand(Float16, 100, 10), true).bias isa Vector{Float16}") == "true");
  CHECK(eval_show("b3 = Flux.Bilinear(randn(Float16, 3, 4, 5), true, tanh)",
                  "b3.bias isa Vector{Float16}, size(b3(rand(4), rand(5)))") == "(true, (3,))");
  CHECK(eval_show("m = f16(Dense(2 => 3))", "eltype(m.weight), eltype(m.bias)") ==
        "(Float16, Float16)");
}

TEST_CASE("a traced Float16 model runs to its interpreted values") {
  std::string program =
      "m = f16(Dense(3 => 2, tanh))\n"
      "x = rand(Float16, 3, 4)\n"
      "f(m, x) = sum(m(x) .* 2)\n";
  check_trace_matches(program, "f", {"m", "x"});
  CHECK(trace_text(program, "f", {"m", "x"}).find("f16[2,3] m.weight") != std::string::npos);
}

}  // namespace ytape::tracer::testing
