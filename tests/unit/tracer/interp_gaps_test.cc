// prod, index arrays, `global` declarations, Julia's printing of values, static metadata
// per tuple, and branches that compute only their condition's cone.
#include <fmt/format.h>

#include <filesystem>
#include <fstream>

#include "interp_helpers.h"
#include "tracer/program.h"

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

TEST_CASE("static tuples are one meta entry each") {
  std::string program = R"(
conf = (stride = (2, 2), pad = (1, 1, 1, 1), name = "conv", act = :relu, w = Float32[1, 2])
f(conf, x) = conf.w .* x
)";
  std::string text = trace_text(program, "f", {"conf", "f32[2]"});
  CHECK(text.find("meta static.conf.stride = \"(2, 2)\"\n"
                  "  meta static.conf.pad = \"(1, 1, 1, 1)\"\n"
                  "  meta static.conf.name = \"\\\"conv\\\"\"\n"
                  "  meta static.conf.act = \":relu\"\n") != std::string::npos);
  CHECK(text.find("in  %1::f32[2] conf.w") != std::string::npos);
  std::string nested = trace_text("t = ((1, 2), (true, 1:3))\nf(t, x) = x", "f", {"t", "f32[]"});
  CHECK(nested.find("meta static.t = \"((1, 2), (true, 1:3))\"\n") != std::string::npos);
}

TEST_CASE("branches compute only their condition's cone, each op once") {
  // 2000 data-dependent branches: rerunning the tape at each would be quadratic.
  std::string program = R"(
x = [0.5, -0.25, 1.5]
function f(x)
  s = x
  for i in 1:2000
    s = sum(s) > 0 ? s .- 0.001 : s .+ 0.002
  end
  s
end
unused(x) = (y = exp.(x); sum(x) > 0 ? x : -x)
)";
  Program in;
  in.run_text("t.jl", program);
  Traced t = trace(in, "f", {"x"});
  validate(t.tape);
  Executor executor(t.tape);
  std::vector<Tensor> outs = executor.run(t.inputs);
  // sum(x) = 1.75 falls by 0.003 a step until it crosses 0, then oscillates near it.
  double s = 1.75;
  for (int i = 0; i < 2000; ++i) s += s > 0 ? -0.003 : 0.006;
  const double* got = outs.at(0).data<double>();
  CHECK(got[0] + got[1] + got[2] == doctest::Approx(s).epsilon(1e-9));
  check_trace_matches(program, "f", {"x"});
  // The condition's cone leaves out ops it does not need (exp here).
  Builder b("probe");
  Var x = b.input("x", Type{DType::f64, {3}});
  Var e = b.exp(x);
  Var total = b.sum(x, {.dims = {1}});
  Var positive = b.gt(total, b.constant(DType::f64, 0));
  ExampleValues values;
  Tensor example(Type{DType::f64, {3}});
  example.data<double>()[0] = 1;
  values.reset({{"x", example}});
  CHECK(values.value(b.tape(), positive).data<bool>()[0]);
  CHECK(values.ops_run() == 4);  // x, the constant 0, sum and gt; not exp
  CHECK(values.value(b.tape(), e).data<double>()[0] == doctest::Approx(2.718281828));
  CHECK(values.ops_run() == 5);  // x is not run again
}

TEST_CASE("a chain of includes deeper than the limit is an error, not a stack overflow") {
  std::filesystem::path dir = std::filesystem::temp_directory_path() / "ytape_include_chain";
  std::filesystem::create_directories(dir);
  for (int i = 1; i <= 300; ++i) {
    std::ofstream(dir / fmt::format("c{}.jl", i)) << fmt::format("include(\"c{}.jl\")\n", i + 1);
  }
  std::ofstream(dir / "c301.jl") << "x = 1\n";
  Program in;
  std::string message = "no error";
  try {
    in.run_file((dir / "c1.jl").string());
  } catch (const UserError& e) {
    message = e.what();
  }
  std::filesystem::remove_all(dir);
  CHECK(message.find("c100.jl:1:1: includes nested deeper than 100 files") != std::string::npos);
}

}  // namespace ytape::tracer::testing
