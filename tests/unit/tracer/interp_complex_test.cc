// Complex numbers in the model language (the prelude's complex.jl): literals, promotion,
// arithmetic, printing, types, vectors of them, broadcasting, the errors where one meets
// what takes real numbers only, and gradients through complex arithmetic of traced reals.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("complex literals and promotion follow Julia") {
  CHECK(eval_show("", "2im, 1.0 + 2im, 0 + 0im, im, 1 - 2im") ==
        "(0 + 2im, 1.0 + 2.0im, 0 + 0im, im, 1 - 2im)");
  CHECK(eval_show("", "typeof(0 + 0im), typeof(1.0 + 2im), typeof(1f0 + 2im), typeof(im)") ==
        "(Complex{Int64}, ComplexF64, ComplexF32, Complex{Bool})");
  CHECK(eval_show("", "typeof((1 + 2im) + 1.5), typeof(complex(1, 2.0)), complex(3)") ==
        "(ComplexF64, ComplexF64, 3 + 0im)");
  CHECK(eval_show("", "ComplexF64(1), Complex{Float32}(1, 2), convert(ComplexF64, 2)") ==
        "(1.0 + 0.0im, 1.0f0 + 2.0f0im, 2.0 + 0.0im)");
}

TEST_CASE("complex arithmetic and functions") {
  CHECK(eval_show("", "(1 + 2im) * (3 - 1im), (1 + 2im) / (1 + 1im), -(1 + 2im), (1 + 2im)^2") ==
        "(5 + 5im, 1.5 + 0.5im, -1 - 2im, -3 + 4im)");
  CHECK(eval_show("", "(1 + 2im)^-1, 2 * (1 + 2im) - 1, (1 + 2im) / 2, 1 / (1 + 1im)") ==
        "(0.2 - 0.4im, 1 + 4im, 0.5 + 1.0im, 0.5 - 0.5im)");
  CHECK(eval_show("", "real(3 + 4im), imag(3 + 4im), conj(3 + 4im), abs(3 + 4im), abs2(3 + 4im)") ==
        "(3, 4, 3 - 4im, 5.0, 25)");
  CHECK(eval_show("", "angle(-1 + 0im), angle(1im), angle(0im), sqrt(-4 + 0im), sqrt(3 - 4im)") ==
        "(3.141592653589793, 1.5707963267948966, 0.0, 0.0 + 2.0im, 2.0 - 1.0im)");
  CHECK(eval_show("", "exp(0im), abs(exp(im * π) + 1) < 1e-15, 1 + 2im + 3, reim(1 + 2im)") ==
        "(1.0 + 0.0im, true, 4 + 2im, (1, 2))");
}

TEST_CASE("complex comparisons, predicates and types") {
  CHECK(eval_show("", "(1 + 2im) == (1.0 + 2.0im), (1 + 0im) == 1, 1 == (1 + 0im), im != im") ==
        "(true, true, true, false)");
  CHECK(eval_show("", "(1 + 1im) ≈ (1 + 1.0000000001im), isapprox(1 + 1im, 1 + 1.1im; atol=0.2)") ==
        "(true, true)");
  CHECK(eval_show("", "zero(1.0 + 2im), one(1 + 2im), iszero(0im), isreal(1 + 0im), isreal(2)") ==
        "(0.0 + 0.0im, 1 + 0im, true, true, true)");
  CHECK(eval_show("", "eltype(1 + 2im), float(1 + 2im), real(ComplexF32), float(Complex{Int})") ==
        "(Complex{Int64}, 1.0 + 2.0im, Float32, ComplexF64)");
  CHECK(eval_show("",
                  "ComplexF64 == Complex{Float64}, 1im isa Complex, 1im isa Number, "
                  "1im isa Real, 1im isa Complex{Int}, 1im isa ComplexF64") ==
        "(true, true, true, false, true, false)");
  CHECK(eval_show("f(z::Complex{T}) where T = T", "f(1f0 + 0im), zero(ComplexF32)") ==
        "(Float32, 0.0f0 + 0.0f0im)");
}

TEST_CASE("complex numbers print and show as Julia's") {
  CHECK(eval_show("", "string(1 + 2im), string(1.5 - 2.0im), repr(1f0 + 2im), sprint(show, im)") ==
        "(\"1 + 2im\", \"1.5 - 2.0im\", \"1.0f0 + 2.0f0im\", \"im\")");
  CHECK(eval_show("", "string(1.0 + NaN * im), string(Complex(1.0, -Inf)), \"$(2 - 0.0im)\"") ==
        "(\"NaN + NaN*im\", \"1.0 - Inf*im\", \"2.0 - 0.0im\")");
  CHECK(eval_show("", "string([1 + 2im, 3]), string([1.0im])") ==
        "(\"Complex{Int64}[1 + 2im, 3 + 0im]\", \"ComplexF64[0.0 + 1.0im]\")");
}

TEST_CASE("vectors of complex numbers: literals, indexing, writes, reductions") {
  std::string x = "x = [1.0+0im, 2.0+1im, 3.0+3im]";
  CHECK(eval_show(x, "typeof(x), eltype(x), length(x), size(x), x[2], x[end], x[2:3]") ==
        "(Vector{ComplexF64}, ComplexF64, 3, (3,), 2.0 + 1.0im, 3.0 + 3.0im, "
        "ComplexF64[2.0 + 1.0im, 3.0 + 3.0im])");
  CHECK(eval_show(x, "zero(x), similar(x) == zero(x), sum(x), mean(x), x == copy(x)") ==
        "(ComplexF64[0.0 + 0.0im, 0.0 + 0.0im, 0.0 + 0.0im], true, 6.0 + 4.0im, "
        "2.0 + 1.3333333333333333im, true)");
  CHECK(eval_show(x + "\ny = copy(x)\ny[1] = 5im", "y[1], x[1], ComplexF64[1, 2]") ==
        "(0.0 + 5.0im, 1.0 + 0.0im, ComplexF64[1.0 + 0.0im, 2.0 + 0.0im])");
  CHECK(eval_show(x, "[z^2 for z in x], sum(abs2, x), x ≈ x .+ 1e-12, [1.5, 2im]") ==
        "(ComplexF64[1.0 + 0.0im, 3.0 + 4.0im, 0.0 + 18.0im], 24.0, true, "
        "ComplexF64[1.5 + 0.0im, 0.0 + 2.0im])");
}

TEST_CASE("broadcasting and arithmetic of complex vectors are elementwise") {
  std::string x = "x = [1.0+0im, 2.0+1im]";
  CHECK(eval_show(x, "abs2.(x), x .* [2.0, 0.0], x .- x, real(x), imag.(x)") ==
        "([1.0, 5.0], ComplexF64[2.0 + 0.0im, 0.0 + 0.0im], "
        "ComplexF64[0.0 + 0.0im, 0.0 + 0.0im], [1.0, 2.0], [0.0, 1.0])");
  CHECK(eval_show(x, "x + x, -x, 2x, x / 2, conj(x)") ==
        "(ComplexF64[2.0 + 0.0im, 4.0 + 2.0im], ComplexF64[-1.0 - 0.0im, -2.0 - 1.0im], "
        "ComplexF64[2.0 + 0.0im, 4.0 + 2.0im], ComplexF64[0.5 + 0.0im, 1.0 + 0.5im], "
        "ComplexF64[1.0 - 0.0im, 2.0 - 1.0im])");
  CHECK(eval_show("re = [1.0, 2.0]",
                  "complex.(re, [0.5, -1.0]), Complex.(re, 0), (a -> a * im).(re)") ==
        "(ComplexF64[1.0 + 0.5im, 2.0 - 1.0im], ComplexF64[1.0 + 0.0im, 2.0 + 0.0im], "
        "ComplexF64[0.0 + 1.0im, 0.0 + 2.0im])");
  CHECK(eval_show("", "[1.0, 2.0] .* im, (1 + 1im) .- (1 + 1im), abs2.(1 + 2im)") ==
        "(ComplexF64[0.0 + 1.0im, 0.0 + 2.0im], 0 + 0im, 5)");
}

TEST_CASE("Flux's losses and dropout layers take complex numbers") {
  CHECK(eval_show("", "mse(0 + 0im, 1 + 1im) == 2") == "true");
  std::string x = "x = [1.0+0im, 2.0+1im, 3.0+3im]\nevalwgrad(f, x...) = pullback(f, x...)[1]";
  CHECK(eval_show(x,
                  "x == Dropout(0.1)(x), x == evalwgrad(Dropout(0), x), "
                  "zero(x) == evalwgrad(Dropout(1), x)") == "(true, true, true)");
  CHECK(eval_show(x,
                  "x == AlphaDropout(0.5)(x), x == evalwgrad(AlphaDropout(0), x), "
                  "zero(x) == evalwgrad(AlphaDropout(1), x)") == "(true, true, true)");
  CHECK(
      eval_show(x, "evalwgrad(Dropout(0.5; rng = MersenneTwister(1)), x) isa Vector{ComplexF64}") ==
      "true");
}

TEST_CASE("complex numbers where the tape takes real numbers only are errors that say so") {
  const std::string note =
      "complex numbers have no dtype on the tape: a Complex is a struct of its real and "
      "imaginary parts, with + - * / ^, abs, abs2, angle, conj, exp and sqrt, and an array of "
      "them a vector of values; write this step on real(z) and imag(z)";
  CHECK(run_error("tanh(1 + 2im)")
            .starts_with("t.jl:1:1: tanh is not defined for a "
                         "Complex{Int64}; " +
                         note + "\n"));
  CHECK(run_error("Float32(1 + 2im)").find("cannot convert a Complex{Int64} to Float32; " + note) !=
        std::string::npos);
  CHECK(run_error("Dense(2 => 2)([1.0 + 0im, 2im])").find(note) != std::string::npos);
  CHECK(run_error("[1 + 2im 3; 4 5]")
            .find("expected a number or an array, got a Complex{Int64}; " + note) !=
        std::string::npos);
  CHECK(run_error("ones(2, 2) .* im")
            .find("broadcasting complex numbers with an Array{Float64, "
                  "2}: an array of complex numbers is a vector of values "
                  "here, so only vectors take part") != std::string::npos);
  CHECK(run_error("x = [1.0 + 0im]\nback = pullback(identity, x)[2]\nback(x)")
            .find("back(Δ) of a pullback whose value is complex is not supported") !=
        std::string::npos);
}

TEST_CASE("a complex argument of a traced entry is its real and imaginary parts") {
  std::string program = "z = 1.0 + 2.0im\nzs = [1.0 + 0im, 2im]\nf(z, zs) = z * zs[2]\n";
  std::string tape = trace_text(program, "f", {"z", "zs"});
  for (const char* input : {"f64[] z.re", "f64[] z.im", "f64[] zs.2.re", "f64[] zs.2.im"}) {
    CHECK(tape.find(input) != std::string::npos);
  }
  CHECK(tape.find("out.re") != std::string::npos);
}

TEST_CASE("gradients through complex arithmetic of traced reals are exact") {
  check_gradient(
      "x = [0.7, -1.3, 0.4]\n"
      "function f(x)\n"
      "  z = complex(x[1], x[2])\n"
      "  w = z * (2.0 - 1.0im) / (1 + 0.5im) + exp(z / 4) - x[3]\n"
      "  zs = [complex(a, b) for (a, b) in zip(x, reverse(x))] .* [1.0, 2.0, 3.0]\n"
      "  abs2(w) + abs(z^3) + sum(abs2.(zs .- z)) + angle(w) + imag(sqrt(z)) + real(inv(z))\n"
      "end\n");
}

}  // namespace ytape::tracer::testing
