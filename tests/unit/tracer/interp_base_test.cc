// Names of Base, Statistics and LinearAlgebra that models use, as Julia defines them.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("pipes, composition and operator methods") {
  CHECK(eval_show("x = [1.0, 2.0, 3.0]", "x |> sum, (x |> reverse)[1]") == "(6.0, 3.0)");
  CHECK(eval_show("", "(sin ∘ cos)(1.0) == sin(cos(1.0)), (exp ∘ abs2)(2.0) == exp(4.0)") ==
        "(true, true)");
  // A program may define methods of operators, as the prelude does for |> and ∘.
  CHECK(eval_show("⋅(a, b) = a + 2b\nfunction ⊻(a, b)\n  a * b\nend", "1 ⋅ 2, ⊻(2, 3)") ==
        "(5, 6)");
  std::string money =
      "struct Money\n  v\nend\nBase.:+(a::Money, b::Money) = Money(a.v + b.v)\n"
      "function Base.:*(k::Real, m::Money)\n  Money(k * m.v)\nend";
  CHECK(eval_show(money, "(Money(1) + Money(2)).v, (2 * Money(3)).v, 1 + 2, [1.0] .* 2") ==
        "(3, 6, 3, [2.0])");
}

TEST_CASE("small Base functions") {
  CHECK(eval_show("x = Float32[1, 2]", "eltype(x), eltype(1.0), eltype([1, 2])") ==
        "(Float32, Float64, Int64)");
  CHECK(eval_show("", "eps(Float32), eps(Float64), eps(), eps(1000.0), eps(1f0)") ==
        "(1.1920929f-7, 2.220446049250313e-16, 2.220446049250313e-16, 1.1368683772161603e-13, "
        "1.1920929f-7)");
  CHECK(eval_show("", "iszero(0.0), iszero(1), isnothing(nothing), isnothing(0)") ==
        "(true, false, true, false)");
  CHECK(eval_show("x = [1.0 2.0; 3.0 4.0]", "vec(x)") == "[1.0, 3.0, 2.0, 4.0]");
  CHECK(eval_show("", "clamp(5, 1, 3), clamp(-1.5, -1.0, 1.0), clamp.([0.5, 2.0], 1.0, 1.5)") ==
        "(3, -1.0, [1.0, 1.5])");
  CHECK(eval_show("", "repr(\"a\"), repr(1f0), repr((1, :b))") ==
        "(\"\\\"a\\\"\", \"1.0f0\", \"(1, :b)\")");
}

TEST_CASE("Statistics and LinearAlgebra, also under their module names") {
  std::string x = "x = [1.0, 2.0, 4.0]; m = [1.0 2.0; 3.0 5.0]";
  CHECK(eval_show(x, "var(x), std(x), var(x; corrected=false)") ==
        "(2.333333333333333, 1.5275252316519465, 1.5555555555555554)");
  CHECK(eval_show(x, "var(m; dims=1), std(m; dims=2)") ==
        "([2.0 4.5], [0.7071067811865476; 1.4142135623730951;;])");
  CHECK(eval_show(x, "norm(x), norm(x, 1), norm(x, Inf), dot(x, x)") ==
        "(4.58257569495584, 7.0, 4.0, 21.0)");
  CHECK(eval_show(x, "Statistics.mean(x), LinearAlgebra.norm(x) == norm(x), Base.sum(x)") ==
        "(2.3333333333333335, true, 7.0)");
  CHECK(eval_show(x, "Flux.Losses.mse(x, 2x), NNlib.relu(-1.0), Base.Math.sin(0.0)") ==
        "(7.0, 0.0, 0.0)");
  CHECK(run_error("Flux.Losses.nope(1)").find("undefined variable 'Flux.Losses.nope'") !=
        std::string::npos);
  // A mistyped name gets the closest one defined: a layer, a function in a module, a local.
  CHECK(run_error("m = Dnese(2 => 3)").find("undefined variable 'Dnese'; did you mean 'Dense'?") !=
        std::string::npos);
  CHECK(
      run_error("Flux.mes(1.0, 2.0)").find("undefined variable 'Flux.mes'; did you mean 'mse'?") !=
      std::string::npos);
  CHECK(run_error("function f(x)\n  total = x\n  totl + 1\nend\nf(1)")
            .find("undefined variable 'totl'; did you mean 'total'?") != std::string::npos);
}

TEST_CASE("the adjoint of a vector contracts with a vector to a number, as in Julia") {
  std::string p = "x = [1.0, 2.0]; y = [3.0, 4.0]; f(x, y) = x'y + x' * y";
  CHECK(eval_show(p, "x'y, x' * y, size(x'), size((x')'), x' * [1.0 2.0; 3.0 4.0]") ==
        "(11.0, 11.0, (1, 2), (2,), [7.0 10.0])");
  check_trace_matches(p, "f", {"x", "y"});
  CHECK(eval_show("σ² = 2.0; x³ = 3", "σ² + x³") == "5.0");
}

TEST_CASE("the gradients of var, std and norm match finite differences") {
  check_gradient(
      "f(x) = var(x) + std(x; dims=1)[1] + norm(x) + norm(x, 1) + x'x\n"
      "x = [0.3, -1.2, 2.5, 0.7]");
}

TEST_CASE("more of Base: mapreduce, dropdims, cumsum, kron, repeat, isapprox, rounding") {
  std::string p = "x = [1.0, 2.0, 3.0]; m = [1.0 2.0; 3.0 4.0]";
  CHECK(eval_show(p,
                  "mapreduce(abs2, +, x), mapreduce(a -> 2a, max, x), "
                  "mapreduce(abs2, +, m; dims=1), size(dropdims(ones(2, 1, 3); dims=2))") ==
        "(14.0, 6.0, [10.0 20.0], (2, 3))");
  CHECK(eval_show(p,
                  "cumsum(x), cumsum(m; dims=2), cumsum([1, 2, 3]), kron([1, 2], [1, 10]), "
                  "kron([1 2; 3 4], [1 1]), repeat([1, 2], 2), repeat([1 2], 2, 2)") ==
        "([1.0, 3.0, 6.0], [1.0 3.0; 3.0 7.0], [1, 3, 6], [1, 10, 2, 20], [1 1 2 2; 3 3 4 4], "
        "[1, 2, 1, 2], [1 2 1 2; 1 2 1 2])");
  CHECK(eval_show(p,
                  "1.0 ≈ 1.0 + 1e-10, x ≈ x .+ 0.1, isapprox(1.0, 1.1; atol=0.2), "
                  "round(2.5), round(3.5), round(Int, 2.7), floor(-1.5), ceil(1.2), "
                  "trunc(-1.7), round(3.14159; digits=2), round.([1.4, 1.6])") ==
        "(true, false, true, 2.0, 4.0, 3, -2.0, 2.0, -1.0, 3.14, [1.0, 2.0])");
  CHECK(eval_show(p, "eachcol(m), eachrow(m), iterate((5, 6)), iterate((5, 6), 3)") ==
        "([[1.0, 3.0], [2.0, 4.0]], [[1.0, 2.0], [3.0, 4.0]], (5, 2), nothing)");
  check_gradient(
      "f(x) = sum(cumsum(x) .^ 2) + sum(kron(x, [1.0, -2.0])) + sum(repeat(x, 2) .* (1:6)) + "
      "mapreduce(abs2, +, x)\nx = [0.5, -1.0, 2.0]");
}

TEST_CASE("round, floor and ceil of traced values record the rounding primitives") {
  std::string p = R"(
x = [-2.5, -2.0, -0.5, 0.0, 0.5, 1.5, 2.5, 1.0e20, -3.0e19]
y = Float32[-1.5, 1.5, 0.5, 3.0f20]
f(x) = (floor.(x), ceil.(x), round.(x), trunc.(x[1:7]), floor(x[1]), ceil(Int, x[7]))
g(y) = (floor.(y), ceil.(y), round.(y), round(Int, y[2]))
h(x) = round(sum(x); digits=1)
)";
  check_trace_matches(p, "f", {"x"});
  check_trace_matches(p, "g", {"y"});
  // Beyond i64 (1e20, -3e19) rounding keeps the value, as Julia's does; ties go to even.
  CHECK(eval_show(p, "f(x)") ==
        "([-3.0, -2.0, -1.0, 0.0, 0.0, 1.0, 2.0, 1.0e20, -3.0e19], "
        "[-2.0, -2.0, -0.0, 0.0, 1.0, 2.0, 3.0, 1.0e20, -3.0e19], "
        "[-2.0, -2.0, -0.0, 0.0, 0.0, 2.0, 2.0, 1.0e20, -3.0e19], "
        "[-2.0, -2.0, -0.0, 0.0, 0.0, 1.0, 2.0], -3.0, 3)");
  std::string tape = trace_text(p, "f", {"x"});
  for (const char* prim : {"= floor(", "= ceil(", "= round("}) {
    CAPTURE(prim);
    CHECK(tape.find(prim) != std::string::npos);
  }
  CHECK(trace_error(p, "h", {"x"}).find("round with digits of a traced value is not supported") !=
        std::string::npos);
  // Their gradient is zero (off the jumps), as sign's: d/dx x floor(3x) = floor(3x).
  check_gradient(
      "f(x) = sum(x .* floor.(3 .* x) .+ ceil.(x) .* round.(x) .+ x .* round.(x))\n"
      "x = [0.3, -1.2, 2.45]");
}

TEST_CASE("asin, acos and atan of traced values record the primitives") {
  std::string p = R"(
x = [-0.9, -0.2, 0.0, 0.5, 0.99]
f(x) = (asin.(x), acos.(x), atan.(40 .* x), asin(x[2]), acos(x[5]), atan(x[1]))
)";
  check_trace_matches(p, "f", {"x"});
  std::string tape = trace_text(p, "f", {"x"});
  for (const char* prim : {"= asin(", "= acos(", "= atan("}) {
    CAPTURE(prim);
    CHECK(tape.find(prim) != std::string::npos);
  }
  CHECK(eval_show("", "asin(0.5), acos(-1.0), atan(1.0), atan(1), asin(Float32(1))") ==
        "(0.5235987755982989, 3.141592653589793, 0.7853981633974483, 0.7853981633974483, "
        "1.5707964f0)");
  CHECK(eval_show("", "atan.([-Inf, 0.0])") == "[-1.5707963267948966, 0.0]");
  check_gradient("f(x) = sum(asin.(x) .* acos.(x) .+ atan.(3 .* x))\nx = [-0.6, 0.1, 0.7]");
}

TEST_CASE("rem, % and mod as Julia's: integers, floats, and traced floats as rem") {
  CHECK(eval_show("", "rem(7, -3), -7 % 3, mod(-7, 3), mod(7, -3), mod(6, -3), 7 ÷ -2") ==
        "(1, -1, 2, -2, 0, -3)");
  // mod of floats moves rem's result by y where their signs differ, and signs a zero as y.
  CHECK(eval_show("",
                  "rem(7.5, 2), -7.5 % 2.0, mod(-7.5, 2), mod(7.5, -2.0), mod(-4.0, 2.0), "
                  "mod(4.0, -2.0), rem(1.0e30, 3.0), mod(Float32(-1), 3)") ==
        "(1.5, -1.5, 0.5, -0.5, 0.0, -0.0, 1.0, 2.0f0)");
  std::string p = R"(
x = [-7.5, -2.0, -0.3, 0.0, 0.3, 4.5, 7.9]
f(x) = (rem.(x, 2.0), mod.(x, 2.0), mod.(x, -2.0), x .% 3, mod(x[1], 2.5), rem.(x, reverse(x) .+ 10))
g(x) = rem(x, 2.0)
h(x) = mod.(round.(Int, x), 2)
)";
  check_trace_matches(p, "f", {"x"});
  CHECK(eval_show(p, "f(x)[2], f(x)[3]") ==
        "([0.5, 0.0, 1.7, 0.0, 0.3, 0.5, 1.9000000000000004], "
        "[-1.5, -0.0, -0.3, -0.0, -1.7, -1.5, -0.09999999999999964])");
  CHECK(trace_text(p, "f", {"x"}).find("= rem(") != std::string::npos);
  CHECK(
      trace_error(p, "g", {"x"}).find("rem of arrays: write rem.(a, b) to apply it elementwise") !=
      std::string::npos);
  CHECK(trace_error(p, "h", {"x"}).find("mod of integer arrays is not supported") !=
        std::string::npos);
  // d/dx rem(x, y) = 1, d/dy = -trunc(x / y); mod's d/dy = -floor(x / y).
  check_gradient(
      "f(x) = sum(rem.(x, 0.7) .* x .+ mod.(3 .* x, reverse(x) .+ 2.0) .+ mod.(x, -1.3))\n"
      "x = [0.31, -1.22, 2.45, -0.77]");
}

TEST_CASE("map and broadcasting over vectors give Vectors, over tuples tuples") {
  // Over a vector of values they gave tuples: push! on the result failed, and a Vector
  // method did not apply.
  std::string p = "struct P; a; end\nv = [P(1.0), P(2.0)]\nw = Any[1, 2]";
  CHECK(eval_show(p,
                  "map(p -> p.a, v), map(x -> 2x, w), (x -> 2x).(w), map(p -> P(p.a), v) isa "
                  "Vector, push!(map(x -> 2x, w), 5), map(i -> i^2, 1:3), map(x -> 2x, (1, 2)), "
                  "(x -> 2x).((1, 2)), count(Any[]), map(identity, Any[])") ==
        "([1.0, 2.0], [2, 4], [2, 4], true, [2, 4, 5], [1, 4, 9], (2, 4), (2, 4), 0, Any[])");
}

TEST_CASE("map over named tuples keeps the names; merge and getfields") {
  CHECK(eval_show("",
                  "map(x -> 2x, (a = 1, b = 2)), map(+, (a = 1,), (a = 2,)), "
                  "map(+, (a = 1,), (b = 2,))") == "((a = 2, b = 4), (a = 3,), (3,))");
  CHECK(eval_show("", "merge((a = 1, b = 2), (b = 3, c = 4)), merge((a = 1,), ())") ==
        "((a = 1, b = 3, c = 4), (a = 1,))");
  CHECK(eval_show("struct P\n  x\n  y\nend", "getfields(P(1, [2.0]))") == "(x = 1, y = [2.0])");
}

TEST_CASE("end and begin in indexing; x'A; Flux promotions") {
  CHECK(eval_show("c = Chain(sin, cos, tan); x = [1.0, 2.0, 3.0]",
                  "c[end](0.5) == tan(0.5), x[begin], x[begin:end-1]") ==
        "(true, 1.0, [1.0, 2.0])");
  CHECK(run_error("struct S\n  a\nend\ns = S(1)\ns[end]")
            .find("'end' of this value is not known: define lastindex(x)") != std::string::npos);
  // x'A is a row vector, so x'A * y is a number, as Julia's Adjoint.
  CHECK(eval_show("v = [1.0, 2.0]; A = [1.0 2.0; 3.0 4.0]; w = [1.0, -1.0]",
                  "v'A * w, size(v'A), (v'A)', v' * A * w + 1") ==
        "(-3.0, (1, 2), [7.0, 10.0], -2.0)");
  CHECK(eval_show("", "onecold(Bool[0 1; 1 0]), eltype(BatchNorm(2)(randn(3, 2, 4)))") ==
        "([2, 1], Float64)");
}

TEST_CASE("syntax of real code: @test, @testset, using with macros, (x += v), (; a, b) = x") {
  std::string p = R"(
using Flux: @functor, Chain
mutable struct M
  x
end
m = M(1)
acc = Ref(0.0)
add!(v) = (acc[] += v)
bump!(t) = (t.x += 1; t.x)
nt = (rnn = 1, r = 2.0, g = :x)
(; rnn, g) = nt
@testset "arithmetic" begin
  @test 1 + 1 == 2
  add!(2.5)
end
)";
  CHECK(eval_show(p, "acc[], bump!(m), m.x, (d = [1, 2]; d[1] = 7; d), rnn, g") ==
        "(2.5, 2, 2, [7, 2], 1, :x)");
  CHECK(run_error(p + "@test 1 == 2").find("Test Failed: 1 == 2") != std::string::npos);
  CHECK(run_error(p + "(; zz) = nt")
            .find("the named tuple has no field 'zz'; its fields are "
                  "rnn, r, g") != std::string::npos);
}

TEST_CASE("@kwdef structs, logging macros, @showprogress") {
  std::string p = R"jl(
Base.@kwdef mutable struct Args
    η = 3e-4             ## learning rate
    batchsize = 128
    name::String = "x"
    twice = batchsize * 2
end
a = Args(; batchsize = 4)
@info "batch $(a.batchsize)" loss=1
@debug "hidden"
n = 0
@showprogress for i in 1:3
  global n += i
end
)jl";
  Program in;
  in.run_text("t.jl", p);
  CHECK(in.output() == "[ Info: batch 4\n");
  CHECK(show(in.eval_text("a.η, a.batchsize, a.name, a.twice, Args().batchsize, "
                          "Args(1.0, 2, \"y\", 3).twice, n")) ==
        "(0.0003, 4, \"x\", 8, 128, 3, 6)");
  CHECK(run_error(p + "Args(; zz = 1)")
            .find("Args has no field 'zz'; its fields are η, "
                  "batchsize, name, twice") != std::string::npos);
  CHECK(run_error("struct B\n  x = 1\nend")
            .find("struct fields have default values only in a "
                  "'@kwdef struct'") != std::string::npos);
}

TEST_CASE("negating a Bool, iterating a matrix, comprehensions over arrays") {
  // -true read its Int result as a float: an internal error.
  CHECK(eval_show("b = true", "-b, -true, -[true, false], abs(false)") == "(-1, -1, [-1, 0], 0)");
  // A matrix iterates its elements in column-major order, as Julia's (it gave columns).
  CHECK(eval_show("m = [1.0 2.0; 3.0 4.0]\ns = 0.0\nfor v in m\n  global s += v\nend",
                  "s, foldl(+, m), [2v for v in m], first(m), eachindex(m)") ==
        "(10.0, 10.0, [2.0 4.0; 6.0 8.0], 1.0, 1:4)");
  CHECK(eval_show("x = [1.0 2.0; 3.0 5.0]", "round.(Flux.normalise(x; dims=1); digits=3)") ==
        "[-1.0 -1.0; 1.0 1.0]");
}

TEST_CASE("reverse of an array is an array") {
  // It was a tuple of the elements, so that reverse(x) .* x broadcast over the tuple and
  // sum gave an array: [3.0, 6.0] for x = [1.0, 2.0], where Julia gives 4.0.
  CHECK(eval_show("x = [1.0, 2.0]; m = [1 2; 3 4]",
                  "sum(reverse(x) .* x), reverse(m), reverse(m; dims=2), reverse((1, :a)), "
                  "reverse([sin, cos]), reverse(1:3), reverse(2:3:8)") ==
        "(4.0, [4 3; 2 1], [2 1; 4 3], (:a, 1), [cos, sin], 3:-1:1, 8:-3:2)");
  check_gradient("f(x) = sum(reverse(x) .* x .^ 2)\nx = [0.5, -1.0, 2.0]");
  // Adjacent dims reverse as one gather (Flux's Conv flips its kernel so), others apart.
  std::string p =
      "x = reshape(collect(1.0:24.0), 2, 3, 4)\nf(x) = reverse(x; dims=(1, 2))\n"
      "g(x) = reverse(x; dims=(1, 3))\n";
  CHECK(eval_show(p, "f(x)[:, :, 2], g(x)[:, 1, 1], g(x)[:, 3, 4]") ==
        "([12.0 10.0 8.0; 11.0 9.0 7.0], [20.0, 19.0], [6.0, 5.0])");
  auto gathers = [&](const char* fn) {
    std::string text = trace_text(p, fn, {"x"});
    size_t n = 0;
    for (size_t at = text.find("gather("); at != std::string::npos;
         at = text.find("gather(", at + 1))
      ++n;
    return n;
  };
  CHECK(gathers("f") == 1);
  CHECK(gathers("g") == 2);
  check_gradient(
      "f(x) = sum(reverse(x; dims=(1, 2)) .* x .^ 2)\nx = reshape(collect(0.5:1.0:6.0), 2, 3)");
}

TEST_CASE("== of tuples compares their items; isequal; types by content") {
  // (1, 2) == (1, 3) was once true: items that are numbers were not compared.
  CHECK(
      eval_show("", "(1, 2) == (1, 3), (1, 2) == (1, 2.0), (:a, 1.0) == (:a, 2.0), (1,) != (2,)") ==
      "(false, true, false, true)");
  CHECK(eval_show("", "isequal(NaN, NaN), isequal(0.0, -0.0), isequal(1, 1.0), isequal(:a, :a)") ==
        "(true, false, true, true)");
  CHECK(eval_show("",
                  "typeof(zeros(2)), typeof(zeros(Bool, 1, 1, 1)), typeof(zeros(0)) == "
                  "typeof(zeros(3)), typeof(zeros(Float32, 2)) == Vector{Float32}, "
                  "Vector{Float32} == Array{Float32, 1}, typeof(zeros(2)) == Vector{Float32}") ==
        "(Vector{Float64}, Array{Bool, 3}, true, true, true, false)");
  // A method without varargs is more specific than one with, as in Julia.
  CHECK(eval_show("g() = 0\ng(xs...) = length(xs)\nh(x) = 1\nh(x, r...) = 2",
                  "g(), g(1, 2), h(5), h(5, 6)") == "(0, 2, 1, 2)");
}

TEST_CASE("== of arrays is one Bool, as Julia's") {
  CHECK(eval_show("x = [1.0, 2.0]",
                  "x == [1.0, 2.0], x == [1.0, 3.0], x != [1.0, 3.0], x == [1.0, 2.0, 3.0], "
                  "x == 1.0, [NaN] == [NaN], [-0.0] == [0.0], [1 2] == [1.0 2.0]") ==
        "(true, false, true, false, false, false, true, true)");
  // Traced: one Bool, which a cond branches on, as any traced condition.
  Program in;
  in.run_text("t.jl", "f(x) = x == [1.0, 2.0] ? 1.0 : sum(x)\nx = [1.0, 2.0]");
  Traced t = trace(in, "f", {"x"});
  validate(t.tape);
  CHECK(print_tape(t.tape).find("cond(") != std::string::npos);
}

TEST_CASE("broadcasting over tuples calls the function on their items") {
  CHECK(eval_show("x = (1.0, 2.0)", "x .+ 1, (1, 2) .* (3, 4), abs.((-1, 2)), (1,) .+ (1, 2)") ==
        "((2.0, 3.0), (3, 8), (1, 2), (2, 3))");
  CHECK(run_error("(1, 2) .+ (1, 2, 3)").find("broadcasting tuples of lengths 2 and 3") !=
        std::string::npos);
}

TEST_CASE("ranges: arithmetic, floats, reversed indexing and concatenation") {
  CHECK(eval_show("", "(1:3) .+ 1, 2 .* (1:3), (1:3) .^ 2, -(1:2)") ==
        "([2, 3, 4], [2, 4, 6], [1, 4, 9], [-1, -2])");
  // Float ranges of decimals end where Julia's do: 0.3, not 0.30000000000000004.
  CHECK(
      eval_show("", "collect(0:0.1:0.3), collect(0.0:3.0), collect(2.0:-0.5:0), length(0:0.1:1)") ==
      "([0.0, 0.1, 0.2, 0.3], [0.0, 1.0, 2.0, 3.0], [2.0, 1.5, 1.0, 0.5, 0.0], 11)");
  CHECK(eval_show("s = 0.0; for t in 0:0.25:0.5; s += t; end", "s") == "0.75");
  CHECK(eval_show("N = 4; x = [1.0 2.0 3.0; 4.0 5.0 6.0]",
                  "[1:N-2; N], vcat(1:2, 0.5), x[:, end:-1:1], x[2, 3:-2:1]") ==
        "([1, 2, 4], [1.0, 2.0, 0.5], [3.0 2.0 1.0; 6.0 5.0 4.0], [6.0, 4.0])");
  check_trace_matches("f(x) = x[end:-1:1] .* (1:3)\nx = [1.0, 2.0, 3.0]", "f", {"x"});
  CHECK(run_error("r = 0.0:0.0:1.0").find("a range's step cannot be zero") != std::string::npos);
}

TEST_CASE("NNlib's activations: values, and gradients against finite differences") {
  CHECK(eval_show("x = [-2.0, 0.5]",
                  "elu.(x), selu.(x), gelu(1.0), logσ(-100.0), relu6(7.0), hardσ(0.0), "
                  "softsign(1.0)") ==
        "([-0.8646647167633873, 0.5], [-1.520166468595695, 0.5253504936777402], "
        "0.8411919906082768, -100.0, 6.0, 0.5, 0.5)");
  // The exact gelu is x Φ(x): Φ(1) = 0.8413447460685429, erf(1) = 0.8427007929497149.
  CHECK(eval_show("",
                  "gelu_erf(1.0), gelu_tanh(1.0) == gelu(1.0), erf(1.0), "
                  "SpecialFunctions.erf(-1.0)") ==
        "(0.8413447460685429, true, 0.8427007929497149, -0.8427007929497149)");
  // The unused side of elu's ifelse stays finite: no NaN in the value or the gradient.
  CHECK(eval_show("", "elu.(Float32[100]), celu.(Float32[-100])") ==
        "(Float32[100.0], Float32[-1.0])");
  check_gradient(
      "acts = (elu, celu, selu, gelu, logσ, relu6, hardtanh, hardσ, mish, tanhshrink, "
      "softsign, leakyrelu, swish, gelu_erf, erf)\n"
      "f(x) = sum(sum(a.(x)) for a in acts) + sum(elu.(100 .* x))\n"
      "x = [-2.3, -0.7, 0.4, 1.9, 7.5]");
}

TEST_CASE("onehotbatch and onecold, as Flux's") {
  CHECK(eval_show("y = [0.1 0.9; 0.8 0.2]",
                  "onehotbatch([1, 3], 1:3), onehot(2, 1:3), onecold(y), onecold(y, (10, 20)), "
                  "onecold([0.1, 0.3, 0.2])") ==
        "(Bool[1 0; 0 0; 0 1], Bool[0, 1, 0], [2, 1], [20, 10], 2)");
  check_trace_matches("f(y) = sum(onehotbatch(onecold(y), 1:2) .* y)\ny = [0.1 0.9; 0.8 0.2]", "f",
                      {"y"});
}

}  // namespace ytape::tracer::testing

namespace ytape::tracer::testing {

TEST_CASE("mutable structs: fields assigned in place, seen through every name") {
  std::string program = R"(
mutable struct Acc
  total
  n::Int
end
struct Fixed
  a
end
a = Acc(0.0, 0)
b = a
b.total = 2.5
setfield!(a, :n, 3.0)
a.n += 1
)";
  // Two names for one instance see each other's writes; a typed field converts.
  CHECK(eval_show(program, "a.total, a.n, b.n, typeof(b.n)") == "(2.5, 4, 4, Int64)");
  CHECK(
      run_error(program + "Fixed(1).a = 2")
          .find("setfield!: immutable struct of type Fixed cannot be changed; declare it 'mutable "
                "struct Fixed'") != std::string::npos);
  CHECK(run_error(program + "a.count = 1")
            .find("Acc has no field 'count'; its fields are "
                  "total, n") != std::string::npos);
  CHECK(run_error(program + "a.n = \"x\"").find("cannot assign a String to field n::Int64") !=
        std::string::npos);
  // Writes while tracing record pure ops; the gradient through them is exact.
  std::string traced = program + R"(
x = [0.5, -1.5, 2.0]
function f(x)
  acc = Acc(0.0, 0)
  other = acc
  for i in 1:3
    acc.total += sum(abs2.(x)) * i
    other.n += 1
  end
  setfield!(acc, :total, acc.total / acc.n)
  a.total = acc.total
  acc.total * other.total
end
)";
  check_trace_matches(traced, "f", {"x"});
  check_gradient(traced);
  // A global instance written by the traced function holds its old value afterwards: no
  // traced value outlives its tape.
  Program in;
  in.run_text("t.jl", traced);
  trace(in, "f", {"x"});
  CHECK(show(in.eval_text("a.total")) == "2.5");
}

TEST_CASE("Ref: r[] reads and r[] = v replaces, through every name") {
  CHECK(eval_show("r = Ref(1.5); s = r; s[] = 2.5; r[] += 1", "r[], s[], r.x") ==
        "(3.5, 3.5, 3.5)");
  check_gradient(R"(
x = [0.5, -1.5, 2.0]
function f(x)
  c = Ref(0.0)
  for i in 1:3
    c[] += x[i]^2 * i
  end
  c[] * c[]
end
)");
}

TEST_CASE("Base names Flux's tests use: cld, fld, Returns, isnan, float(T), reshape of a range") {
  CHECK(eval_show("", "cld(7, 2), fld(7, 2), cld(-7, 2), fld(-7, 2), cld.((4, 5), 2)") ==
        "(4, 3, -3, -4, (2, 3))");
  CHECK(eval_show("",
                  "ntuple(Returns(3), 2), isnan(0.0 / 0.0), isnan(1.0), isinf(-1 / 0), "
                  "isfinite(1.0)") == "((3, 3), true, false, true, true)");
  CHECK(eval_show("", "float(Int), float(Float32), reshape(-2:3, 2, 3)") ==
        "(Float64, Float32, [-2 0 2; -1 1 3])");
  // eps(x) is the spacing of floats at x, of each element for eps.(x).
  CHECK(eval_show("",
                  "eps.([0.5, 1.0, 3.0]) == [eps(0.5), eps(1.0), eps(3.0)], eps(0.5), "
                  "eps.(Float32[2]), eps(Float64)") ==
        "(true, 1.1102230246251565e-16, Float32[2.3841858e-7], 2.220446049250313e-16)");
}

}  // namespace ytape::tracer::testing
