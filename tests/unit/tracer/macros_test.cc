// Macros: each supported one is rewritten by the parser into the syntax it stands for.
#include <doctest/doctest.h>

#include "tests/unit/tracer/helpers.h"
#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("@. broadcasts every call and operator, assignments and updates too") {
  CHECK(sexpr("@. a * x + b") == "(broadcast + (broadcast * (id a) (id x)) (id b))");
  CHECK(sexpr("@. y = sin(x) + f(x)") ==
        "(.= (id y) (broadcast + (broadcast sin (id x)) (broadcast f (id x))))");
  CHECK(sexpr("@. s += 1") == "(.+= (id s) (int 1))");
  // Indexing, fields and the adjoint stay as they are.
  CHECK(sexpr("@. m.w * x[1] + x'") ==
        "(broadcast + (broadcast * (. (id m) w) (index (id x) (int 1))) (call ' (id x)))");
  CHECK(eval_show("x = [1.0, 4.0]", "@. sqrt(x) + 1") == "[2.0, 3.0]");
  CHECK(eval_show("x = [1.0, 4.0]; s = [0.0, 0.0]", "@. s += x; s") == "[1.0, 4.0]");
  // `@. y = e` writes into y, as Julia's: another name for y sees it.
  CHECK(eval_show("x = [1.0, 4.0]; y = zeros(2); alias = y; @. y = sqrt(x) + 1", "alias") ==
        "[2.0, 3.0]");
}

TEST_CASE("compiler hints are their argument; @view and @views mark indexing") {
  CHECK(sexpr("@inbounds for i in 1:n\n  s += i\nend") == sexpr("for i in 1:n\n  s += i\nend"));
  CHECK(sexpr("@inline f(x) = 2x") == sexpr("f(x) = 2x"));
  // @views: each indexing that is read, in nested ones and function bodies too; a target
  // of assignment stays (its indices do not).
  CHECK(sexpr("@views y = x[1:2]") == sexpr("y = @view x[1:2]"));
  CHECK(sexpr("@views x[i[1:2]] .= y[1:2]") == sexpr("x[@view(i[1:2])] .= @view(y[1:2])"));
  CHECK(sexpr("@views f(x) = sum(x[1:2])") == sexpr("f(x) = sum(@view x[1:2])"));
  CHECK(sexpr("@views x[1] += x[2]") == sexpr("x[1] += @view x[2]"));
  CHECK(sexpr("@view x[:, 1]") == "(call @view (index (id x) (:) (int 1)))");
  // In a call's arguments a comma ends the macro's, or parentheses hold them.
  CHECK(sexpr("f(@view x[1:2], y)") == sexpr("f(@view(x[1:2]), y)"));
  CHECK(sexpr("f(@view(x[1:2]), y)") ==
        "(call f (call @view (index (id x) (range (int 1) (int 2)))) (id y))");
  CHECK(parse_error("@view x").find("@view takes an indexing, as in '@view x[:, 1]'") !=
        std::string::npos);
}

TEST_CASE("@functor and @layer declare what every struct has: its fields are parameters") {
  std::string program = R"(
struct Lin
  w
  b
end
Flux.@functor Lin
@layer Lin
(m::Lin)(x) = @. m.w * x + m.b
loss(m, x) = sum(m(x))
model = Lin([2.0, 3.0], [1.0, 1.0])
x = [1.0, 2.0]
)";
  CHECK(eval_show(program, "model(x)") == "[3.0, 7.0]");
  std::string text = trace_text(program, "loss", {"model", "x"});
  CHECK(text.find("in  %1::f64[2] m.w") != std::string::npos);
  CHECK(text.find("in  %2::f64[2] m.b") != std::string::npos);
  CHECK(parse_error("@functor 1").find("@functor takes the name of a struct") != std::string::npos);
}

TEST_CASE("@assert checks static conditions now and guards traced ones") {
  CHECK(run_error("n = 2\n@assert n > 0\n@assert n > 3") ==
        "t.jl:3:1: AssertionError: n > 3\n@assert n > 3\n^");
  CHECK(run_error("n = 2\n@assert(n > 3, \"n is $n\")").find("AssertionError: n is 2") !=
        std::string::npos);
  CHECK(run_error("@assert 1.5").find("@assert takes a Bool condition, got a Float64") !=
        std::string::npos);
  // On a traced value: decided on the example and guarded, so another input stops the run.
  Program in;
  in.run_text("t.jl", "f(x) = (@assert sum(x) > 0 \"positive\"; 2x)\nx = [1.0, 2.0]");
  Traced t = trace(in, "f", {"x"});
  validate(t.tape);
  CHECK(print_tape(t.tape).find("guard(") != std::string::npos);
  Executor executor(t.tape);
  CHECK(executor.run(t.inputs).size() == 1);
  TensorMap negative = t.inputs;
  negative[0].second.data<double>()[0] = -5;
  CHECK_THROWS_WITH_AS(executor.run(negative), doctest::Contains("@assert sum(x) > 0"), UserError);
}

TEST_CASE("@show prints each expression and its value, and returns the last value") {
  Program in;
  std::string printed;
  in.set_print([&](std::string_view line) { printed += std::string(line) + "\n"; });
  in.run_text("t.jl", "x = [1.0, 2.0]\ns = \"a\"\ny = @show sum(x) s\n@show y");
  CHECK(printed == "sum(x) = 3.0\ns = \"a\"\ny = \"a\"\n");
  // Traced: a print op with the expression's text.
  std::string text = trace_text("f(x) = @show 2x", "f", {"f32[2]"});
  CHECK(text.find("print(%3; format=\"2x = Float32{}\")") != std::string::npos);
}

TEST_CASE("other macros are one error that names them and the supported ones") {
  std::string message = run_error("@time f(x)");
  CHECK(message.find("t.jl:1:1: the macro @time is not supported; the supported ones are @., "
                     "@assert, @show, @view, @views, @test, @testset,") == 0);
  CHECK(message.ends_with("@functor, @layer, @treelike\n@time f(x)\n^"));
  CHECK(run_error("y = @asert x > 0").find("; did you mean '@assert'?") != std::string::npos);
  CHECK(parse_error("@inbounds").find("@inbounds takes one argument") != std::string::npos);
}

TEST_CASE("docstrings and non-standard strings: @doc raw, lazy, L, md") {
  // Flux's recurrent layers document their math with backslashes.
  std::string p =
      "@doc raw\"\"\"\n    RNNCell(in => out)\n```math\nh^\\prime = \\sigma(W_i x + "
      "b)\n```\n\"\"\"\n"
      "cell(x) = 2x\n"
      "@doc \"twice\" twice(x) = 2x\n"
      "n = 3\n";
  CHECK(eval_show(p, "cell(1), twice(2)") == "(2, 4)");
  CHECK(eval_show(p, "lazy\"n is $(n + 1)\", raw\"a\\b$n\", L\"\\alpha\"") ==
        "(\"n is 4\", \"a\\\\b\\$n\", \"\\\\alpha\")");
  // In a raw string a backslash escapes only a quote (an odd run of them), as Julia's.
  CHECK(eval_show("", "raw\"a\\\"b\", raw\"c\\\\\"") == "(\"a\\\"b\", \"c\\\\\")");
  CHECK(parse_error("x = q\"text\"")
            .find("string literals with a prefix (q\"...\") are not "
                  "supported") != std::string::npos);
}

TEST_CASE("@eval defines methods named by values, as NNlib's loops over names do") {
  std::string p = R"(
const ACTIVATIONS = [:myrelu, :mytanh]
myrelu(x) = max(x, 0)
mytanh(x) = tanh(x)
for f in ACTIVATIONS
  @eval $(f)(x::AbstractArray, args...) =
    error("Use broadcasting (`", $(string(f)), ".(x)`) to apply activation functions to arrays.")
end
for (name, k) in ((:double, 2), (:triple, 3))
  @eval $name(x) = $k * x
  @eval function $(Symbol(name, :_all))(xs)
    [$name(x) for x in xs]
  end
end
)";
  CHECK(eval_show(p,
                  "myrelu(-1.0), myrelu.([-1.0, 2.0]), double(4), triple(2), double_all([1, 2])") ==
        "(0.0, [0.0, 2.0], 8, 6, [2, 4])");
  CHECK(run_error(p + "myrelu([1.0])").find("Use broadcasting (`myrelu.(x)`)") !=
        std::string::npos);
  CHECK(parse_error("f(x) = $x")
            .find("'$' is only allowed inside strings, for interpolation, "
                  "and inside @eval") != std::string::npos);
  CHECK(run_error("@eval $(1 + 2im) + 1").find("@eval cannot write") != std::string::npos);
}

}  // namespace ytape::tracer::testing
