// The interpreter on small programs, run concretely: arithmetic, functions and closures,
// global declarations, control flow, collections, printing as Julia prints, and names and
// literals (combining marks, version numbers) as Julia reads them.
#include "helpers.h"
#include "interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("scalar arithmetic follows Julia") {
  CHECK(eval_show("", "1 + 2 * 3") == "7");
  CHECK(eval_show("", "7 ÷ 2, 7 % 2, 2^10") == "(3, 1, 1024)");
  // Int powers wrap around as Julia's do (a fuzzed 42^46 overflowed: UBSan), by squaring,
  // so a huge exponent takes 64 steps, not 2^62.
  CHECK(eval_show("", "42^46, 3^40, 1^(2^62), (-1)^(2^62 + 1)") ==
        "(2680275096983044096, -6289078614652622815, 1, -1)");
  CHECK(eval_show("", "1 / 2") == "0.5");
  CHECK(eval_show("", "2.0 * 1f0") == "2.0f0");
  CHECK(eval_show("", "typeof(2.0 * 1f0)") == "Float32");
  CHECK(eval_show("", "typeof(2.0 * 1.5)") == "Float64");
  CHECK(eval_show("", "typeof(Float64(1) * 1f0)") == "Float64");
  CHECK(eval_show("", "-3 < -2 <= 5, 1 == 1.0, 2 != 2") == "(true, true, false)");
  CHECK(eval_show("", "sqrt(4.0), exp(0), abs(-3), max(1, 4, 2)") == "(2.0, 1.0, 3, 4)");
  CHECK(eval_show("", "x = 3; x > 2 ? :big : :small") == ":big");
}

TEST_CASE("functions: definitions, defaults, keywords, varargs, closures") {
  std::string program = R"(
function f(a, b=2; k=10)
  return a + b + k
end
g(x) = 2x
h = (a, b) -> a * b
count(xs...) = length(xs)
make_adder(n) = x -> x + n
add3 = make_adder(3)
sumall(xs...; scale=1) = scale * +(xs...)
)";
  CHECK(eval_show(program, "f(1)") == "13");
  CHECK(eval_show(program, "f(1, 5; k=0)") == "6");
  CHECK(eval_show(program, "f(1, k=1)") == "4");
  CHECK(eval_show(program, "g(4), h(2, 3)") == "(8, 6)");
  CHECK(eval_show(program, "count(), count(1, 2, 3)") == "(0, 3)");
  CHECK(eval_show(program, "add3(4)") == "7");
  CHECK(eval_show(program, "t = (1, 2, 3); sumall(t...; scale=2)") == "12");
}

TEST_CASE("an operator called with a splat is a call, not a unary operator on a tuple") {
  CHECK(sexpr("+(xs...)") == "(call + (... (id xs)))");
  CHECK(sexpr("-(x)") == "(call - (id x))");
  CHECK(eval_show("", "xs = (1, 2, 3); +(xs...), *(xs...)") == "(6, 6)");
}

TEST_CASE("closures share the variables they capture") {
  std::string program = R"(
function counter()
  n = 0
  bump() = begin
    n += 1
  end
  bump(); bump()
  return n
end
)";
  CHECK(eval_show(program, "counter()") == "2");
}

TEST_CASE("control flow over static values") {
  std::string program = R"(
function total(n)
  s = 0
  for i in 1:n
    i == 3 && continue
    i > 5 && break
    s += i
  end
  return s
end
function collatz(n)
  steps = 0
  while n != 1
    n = n % 2 == 0 ? n ÷ 2 : 3n + 1
    steps += 1
  end
  steps
end
function sign_of(x)
  if x > 0
    1
  elseif x < 0
    -1
  else
    0
  end
end
)";
  CHECK(eval_show(program, "total(10)") == "12");
  CHECK(eval_show(program, "collatz(6)") == "8");
  CHECK(eval_show(program, "sign_of(-2.5), sign_of(0), sign_of(3)") == "(-1, 0, 1)");
  CHECK(eval_show(program, "let a = 1, b = 2\n a + b\nend") == "3");
  CHECK(eval_show(program, "s = 0; for (i, x) in enumerate((10, 20)); s += i * x; end; s") == "50");
}

TEST_CASE("tuples, named tuples and destructuring") {
  CHECK(eval_show("", "t = (1, 2.5, \"x\"); t[2], t[end], length(t)") == "(2.5, \"x\", 3)");
  CHECK(eval_show("", "nt = (a = 1, b = 2); nt.b, nt[:a]") == "(2, 1)");
  CHECK(eval_show("", "a, b = 1, 2; a, b = b, a; (a, b)") == "(2, 1)");
  CHECK(eval_show("", "(x, (y, z)) = (1, (2, 3)); x + y + z") == "6");
  CHECK(eval_show("", "(1,)") == "(1,)");
}

TEST_CASE("arrays: literals, arithmetic and shapes") {
  CHECK(eval_show("", "[1.0, 2.0] .+ 1") == "[2.0, 3.0]");
  CHECK(eval_show("", "x = Float32[1, 2, 3]; typeof(x[1]), x .* 2.0") ==
        "(Float32, Float32[2.0, 4.0, 6.0])");
  CHECK(eval_show("", "A = [1.0 2.0; 3.0 4.0]; A * [1.0, 1.0]") == "[3.0, 7.0]");
  CHECK(eval_show("", "A = [1.0 2.0; 3.0 4.0]; size(A'), A'[1, 2]") == "((2, 2), 3.0)");
  CHECK(eval_show("", "x = reshape(collect(1:6), 2, :); size(x), x[2, 3], x[:, 2]") ==
        "((2, 3), 6, [3, 4])");
  CHECK(eval_show("", "x = [1.0, 2.0, 3.0]; sum(x), maximum(x), sum(abs2.(x))") ==
        "(6.0, 3.0, 14.0)");
  CHECK(eval_show("", "x = [1.0 2.0; 3.0 4.0]; sum(x; dims=1)") == "[4.0 6.0]");
  CHECK(eval_show("", "size(sum(ones(2, 3); dims=2))") == "(2, 1)");
  CHECK(eval_show("", "mean([1.0, 2.0, 3.0, 6.0])") == "3.0");
}

TEST_CASE("keywords, where clauses, conversions and small built-ins") {
  std::string program = R"(
opts(; kws...) = kws
g(x::AbstractArray{T}) where {T<:Real} = "array"
g(x::T) where {T<:Real} = "real"
pick(a; first=true) = first ? a[1] : a[end]
)";
  CHECK(eval_show(program, "opts(a=1, b=:x)") == "(a = 1, b = :x)");
  CHECK(eval_show(program, "nt = (a = 2,); opts(; nt...)") == "(a = 2,)");
  CHECK(eval_show(program, "g([1.0]), g(1)") == "(\"array\", \"real\")");
  CHECK(eval_show(program, "pick((1, 2); first=false)") == "2");
  CHECK(eval_show("", "Int(2.0), Float32(1), float(3), 1 isa Number, \"s\" isa Number") ==
        "(2, 1.0f0, 3.0, true, false)");
  CHECK(eval_show("", "n = 3; \"n = $n, twice $(2n)\"") == "\"n = 3, twice 6\"");
  CHECK(eval_show("", "collect(1:2:7), reverse((1, 2)), length(10:-2:1)") ==
        "([1, 3, 5, 7], (2, 1), 5)");
  CHECK(eval_show("", "size(zeros(Float32, (2, 3))), fill(1f0, 2), vcat(1.0, 2.0)") ==
        "((2, 3), Float32[1.0, 1.0], [1.0, 2.0])");
  CHECK(eval_show("", "x = [1.0, 2.0]; size([x; x]), size([x x]), size(hcat(x, x)')") ==
        "((4,), (2, 2), (2, 2))");
  CHECK(eval_show("", "false || 1 > 0, true && false, !true") == "(true, false, false)");
  CHECK(eval_show("", "ifelse(1 > 0, 1.5, 2.5), ifelse([true, false], [1, 2], 0)") ==
        "(1.5, [1, 0])");
  // The condition is a Bool, as in Julia; it was once cast from any number.
  CHECK(run_error("ifelse(0.5, 1.0, 2.0)").find("ifelse takes a Bool condition") !=
        std::string::npos);
  CHECK(run_error("ifelse([1.0, 0.0], 1.0, 2.0)").find("ifelse takes a Bool condition") !=
        std::string::npos);
  CHECK(run_error("f(; k) = k\nf()").find("f requires the keyword argument 'k'") !=
        std::string::npos);
  CHECK(run_error("f(x) = x\nf(1; k=2)").find("f has no keyword argument 'k'") !=
        std::string::npos);
}

TEST_CASE("a chain of comparisons with dotted operators is elementwise") {
  // (a .< b) .& (b .< c), each operand evaluated once, as Julia lowers it.
  CHECK(eval_show("c = [1, 5, 20]", "1 .< c .< 10, 0 .<= c .< [2, 6, 30], 1 < 2 .< c") ==
        "(Bool[0, 1, 0], Bool[1, 1, 1], Bool[0, 1, 1])");
  CHECK(eval_show("n = Ref(0)\nnext() = (n[] += 1; [1, 2, 3])", "0 .< next() .< 3, n[]") ==
        "(Bool[1, 1, 0], 1)");
  check_trace_matches("f(x) = sum(ifelse.(-1 .< x .< 1, x, 0f0))\nx = Float32[-2, 0.5, 0.25, 3]",
                      "f", {"x"});
}

TEST_CASE("==(x) and the other comparisons with one argument; filter and findall") {
  CHECK(eval_show("", "count(==(2), [1, 2, 2]), filter(>=(2), [1, 2, 3]), any(!=(1), [1, 1])") ==
        "(2, [2, 3], false)");
  CHECK(eval_show("",
                  "filter(isodd, (1, 2, 3)), filter(<(2.5), [1.0 2.0; 3.0 4.0]), "
                  "findall(>(1), [1, 2, 3]), findall([true, false, true]), iseven(4)") ==
        "((1, 3), [1.0, 2.0], [2, 3], [1, 3], true)");
  // `in` as a function, with one argument too; `x in xs` over arrays.
  CHECK(eval_show("",
                  "in(2, [1, 2]), filter(in([1, 3]), [1, 2, 3]), filter(∈((2,)), [1, 2]), "
                  "3 in [1.0, 2.0], 2.0 ∈ [1.0 2.0]") == "(true, [1, 3], [2], false, true)");
  check_trace_matches("f(x) = ifelse(1f0 in x, 2f0, 3f0)\nx = Float32[0, 1]", "f", {"x"});
}

TEST_CASE("print and println write lines") {
  Program in;
  in.run_text("t.jl", "print(\"a\", 1); println(\" b\"); println(2.5, (1, 2))");
  CHECK(in.output() == "a1 b\n2.5(1, 2)\n");
}

TEST_CASE("a step limit ends a program that loops forever") {
  Limits limits;
  limits.max_steps = 10'000;
  Program in(limits);
  CHECK_THROWS_WITH_AS(in.run_text("t.jl", "i = 0\nwhile true\n  i += 1\nend"),
                       doctest::Contains("the program ran more than 10000 steps"), UserError);
}

TEST_CASE("strings show as Julia literals, escapes included") {
  CHECK(eval_show("", R"(("a\"b", "\$x", "1\n2\t3\r"))") == R"(("a\"b", "\$x", "1\n2\t3\r"))");
  CHECK(eval_show("", R"("a\x01")") == R"("a\x01")");
}

TEST_CASE("global declarations in functions assign globals") {
  std::string program = R"(
count = 0
bump() = (global count += 1; count)
function reset(n)
  global count = n
  nothing
end
shadow() = (count = 100; count)
function nested()
  global count
  inner() = (count = -1; count)
  (inner(), count)
end
let
  global made = 7
end
)";
  CHECK(eval_show(program, "bump(); bump(); count") == "2");
  CHECK(eval_show(program, "reset(5); bump()") == "6");
  CHECK(eval_show(program, "shadow(), count") == "(100, 0)");
  CHECK(eval_show(program, "nested(), count") == "((-1, 0), 0)");
  CHECK(eval_show(program, "made") == "7");
  std::string traced = R"(
calls = 0
x = Float32[1, 2]
f(x) = (global calls += 1; sum(x) * 2)
)";
  check_trace_matches(traced, "f", {"x"});
  Program in;
  in.run_text("t.jl", traced);
  trace(in, "f", {"x"});
  CHECK(show(*in.global("calls")) == "1");
  CHECK(trace_error("kept = 0\nf(x) = (global kept = x; x)", "f", {"f32[2]"})
            .find("cannot assign a traced value to the global 'kept'") != std::string::npos);
}

TEST_CASE("values print as Julia prints them") {
  Program in;
  in.run_text("t.jl", R"jl(
println(1f0, " ", 1.5f-3, " ", 1f-5, " ", 2.5e7, " ", 1e-5, " ", 123456.0, " ", -0.0)
println((1f0, 1.5f-3, 1f-5, 3f7, NaN32, -Inf32), " ", (NaN, Inf))
println(Float32[1, 2.5], " ", [1.0, 2.0], " ", [1, 2], " ", Bool[1, 0], " ", Float32[])
println(Float32[1 2; 3 4], " ", reshape(collect(1:8), 2, 2, 2))
println("a", :b, " ", ("a", :b, 1 == 1), " ", (x = 1f0,), " ", "$(2f0) $((2f0,))")
)jl");
  CHECK(in.output() ==
        "1.0 0.0015 1.0e-5 2.5e7 1.0e-5 123456.0 -0.0\n"
        "(1.0f0, 0.0015f0, 1.0f-5, 3.0f7, NaN32, -Inf32) (NaN, Inf)\n"
        "Float32[1.0, 2.5] [1.0, 2.0] [1, 2] Bool[1, 0] Float32[]\n"
        "Float32[1.0 2.0; 3.0 4.0] [1 3; 2 4;;; 5 7; 6 8]\n"
        "ab (\"a\", :b, true) (x = 1.0f0,) 2.0 (2.0f0,)\n");
  // Traced values print at run time; Float32 arrays say so.
  std::string text =
      trace_text("f(x) = (println(\"x = \", x, \" \", (sum(x), 1f0)); x)", "f", {"f32[2]"});
  CHECK(text.find("format=\"x = Float32{} ({}, 1.0f0)\"") != std::string::npos);
}

TEST_CASE("a name written with a combining mark is the composed one, as Julia reads it") {
  // conv_mnist.jl's ŷ is y and U+0302; a program may spell it either way.
  CHECK(eval_show("y\u0302 = 2.0\ng(x) = x * \u0177", "g(3.0), y\u0302 == \u0177") ==
        "(6.0, true)");
}

TEST_CASE("v\"1.7\" is a version number; VERSION is 1.9's, as published code tests it") {
  CHECK(eval_show("",
                  "VERSION >= v\"1.7\", VERSION < v\"1.10\", v\"1.7\" == v\"1.7.0\", "
                  "v\"2\" > v\"1.99.3\", v\"1.2.3\" <= v\"1.2.3\", sprint(show, v\"1.7\")") ==
        "(true, true, true, true, true, \"v\\\"1.7.0\\\"\")");
  CHECK(run_error("a = v\"1.x\"").find("'1.x' is not a version number") != std::string::npos);
  CHECK(run_error("a = v\"1.2.3.4\"").find("at most three parts") != std::string::npos);
  CHECK(run_error("a = r\"a+\"").find("prefix (r\"...\") are not supported") != std::string::npos);
}

}  // namespace ytape::tracer::testing
