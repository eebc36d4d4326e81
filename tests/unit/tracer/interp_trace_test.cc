// Tracing: the printed tapes (static arguments as meta entries), traced tapes run against
// the interpreter's own values, and data-dependent branches, which run only the ops their
// condition needs.
#include "interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("a traced function records primitives only") {
  std::string program = R"(
x = Float32[1, 2, 3]
f(x) = sum(sin.(x) .* x)
)";
  CHECK(trace_text(program, "f", {"x"}) ==
        "tape f\n"
        "  meta entry = \"f\"\n"
        "  in  %1::f32[3] x\n"
        "  %2 = sin(%1)::f32[3]  # t.jl:3\n"
        "  %3 = mul(%2, %1)::f32[3]  # t.jl:3\n"
        "  %4 = sum(%3; dims=[1])::f32[]  # t.jl:3\n"
        "  out %4 out\n");
}

TEST_CASE("weak literals take the dtype of the traced value") {
  std::string program = "g(x) = 2.0 .* x .+ 1\n";
  CHECK(trace_text(program, "g", {"f32[2]"}) ==
        "tape g\n"
        "  meta entry = \"g\"\n"
        "  in  %1::f32[2] x\n"
        "  %2 = const(2.0)::f32[]  # t.jl:1\n"
        "  %3 = mul(%2, %1)::f32[2]  # t.jl:1\n"
        "  %4 = const(1.0)::f32[]  # t.jl:1\n"
        "  %5 = add(%3, %4)::f32[2]  # t.jl:1\n"
        "  out %5 out\n");
}

TEST_CASE("structured arguments become inputs named by path; static ones go to the meta") {
  std::string program = R"(
params = (w = [1.0 2.0; 3.0 4.0], b = [0.5, 0.5])
layer(p, x, n) = n == 2 ? (p.w * x .+ p.b, x) : x
)";
  std::string text = trace_text(program, "layer", {"params", "f64[2]", "2"});
  CHECK(text.find("in  %1::f64[2,2] p.w\n") != std::string::npos);
  CHECK(text.find("in  %2::f64[2] p.b\n") != std::string::npos);
  CHECK(text.find("in  %3::f64[2] x\n") != std::string::npos);
  CHECK(text.find("meta static.n = \"2\"") != std::string::npos);
  CHECK(text.find("out %3 out.2") != std::string::npos);
}

TEST_CASE("traced tapes compute what the interpreter computes") {
  std::string program = R"(
seed!(7)
W = randn(Float32, 4, 3)
b = zeros(Float32, 4)
x = rand(Float32, 3)
h = 0.25
mlp(W, b, x) = sum(tanh.(W * x .+ b))
closure(x, h) = begin
  scale = y -> y * h
  sum(scale(x) .^ 2) + h
end
looped(x) = begin
  acc = x
  for i in 1:3
    acc = acc .* 0.5 .+ i
  end
  (acc, sum(acc) / length(acc))
end
varargs(xs...) = sum(sum(x) for x in xs)
shapes(W) = (W', reshape(W, :, 2)[:, end], W[2:3, 1])
)";
  check_trace_matches(program, "mlp", {"W", "b", "x"});
  check_trace_matches(program, "closure", {"x", "h"});
  check_trace_matches(program, "looped", {"x"});
  check_trace_matches(program, "varargs", {"x", "W", "b"});
  check_trace_matches(program, "shapes", {"W"});
}

// A branch on a traced value, traced with x, whose sum is negative.
const char* const kSignBranch = R"(
x = [1.0, -2.0]
f(x) = sum(x) > 0 ? sum(x) : -sum(x)
)";

TEST_CASE("a data-dependent branch is a cond that runs either side") {
  std::string program = kSignBranch;
  Program in;
  in.run_text("t.jl", program);
  Traced t = trace(in, "f", {"x"});
  CHECK(print_tape(t.tape).find("cond(") != std::string::npos);
  Executor executor(t.tape);
  CHECK(executor.run(t.inputs).at(0).data<double>()[0] == 1.0);
  Tensor other(Type{DType::f64, {2}});
  other.data<double>()[0] = 5;
  CHECK(executor.run({{"x", other}}).at(0).data<double>()[0] == 5.0);
  CHECK(trace_error(program, "f", {"f64[2]"}) == "no error");  // no example values needed
}

TEST_CASE("under --loops unroll a data-dependent branch takes the example's and is guarded") {
  std::string program = kSignBranch;
  Limits flat;
  flat.loops = LoopMode::unroll;
  Program in(flat);
  in.run_text("t.jl", program);
  Traced t = trace(in, "f", {"x"});
  std::string text = print_tape(t.tape);
  CHECK(text.find("guard(") != std::string::npos);
  Executor executor(t.tape);
  CHECK(executor.run(t.inputs).at(0).data<double>()[0] == 1.0);
  Tensor other(Type{DType::f64, {2}});
  other.data<double>()[0] = 5;
  CHECK_THROWS_WITH_AS(
      executor.run({{"x", other}}),
      doctest::Contains("t.jl:3:15: this condition was false when the program was traced and is "
                        "true now; trace again with these inputs\n"
                        "f(x) = sum(x) > 0 ? sum(x) : -sum(x)\n"
                        "              ^\n"
                        "  in f"),
      UserError);
  CHECK(trace_error(program, "f", {"f64[2]"}, flat) ==
        "t.jl:3:15: this condition depends on a traced input, and the trace has no example "
        "values to choose a branch; give example values (a global of the program as the "
        "argument) or compute both sides and choose with ifelse(c, a, b)\n"
        "f(x) = sum(x) > 0 ? sum(x) : -sum(x)\n"
        "              ^\n"
        "  in f");
}

TEST_CASE("a missing entry suggests a near name, never one with nothing in common") {
  CHECK(trace_error("g(x) = x", "gg", {"1"}) ==
        "the program defines no function 'gg'; did you mean 'g'?");
  CHECK(trace_error("g(x) = x", "f", {"1"}) == "the program defines no function 'f'");
}

TEST_CASE("errors name the line, show a caret and the call stack") {
  CHECK(run_error("f(x) = x + y\ng(x) = f(x)\ng(1)") ==
        "t.jl:1:12: undefined variable 'y'\n"
        "f(x) = x + y\n"
        "           ^\n"
        "  in f called at t.jl:2:8\n"
        "  in g called at t.jl:3:1");
  CHECK(run_error("f(x::Float32) = x\nf(1)")
            .find("t.jl:2:1: no method of f matches the arguments (::Int64); the methods are:\n") ==
        0);
  CHECK(run_error("f(n) = f(n + 1)\nf(1)").find("calls nest more than 1000 deep") !=
        std::string::npos);
  CHECK(run_error("[1.0, 2.0] + [1.0, 2.0, 3.0]").find("the shapes must be equal") !=
        std::string::npos);
  CHECK(trace_error("f(x) = sum(x .* [1.0, 2.0])", "f", {"f64[3]"}).find("t.jl:1:14: mul: ") == 0);
}

TEST_CASE("the op limit stops runaway traces") {
  Limits unroll;
  unroll.loops = LoopMode::unroll;
  Program in(unroll);
  in.run_text("t.jl", "f(x) = begin\n  for i in 1:100\n    x = sin.(x)\n  end\n  x\nend");
  TraceOptions options;
  options.max_ops = 50;
  CHECK_THROWS_WITH_AS(trace(in, "f", {"f32[2]"}, options),
                       doctest::Contains("the trace recorded more than 50 ops"), UserError);
}

TEST_CASE("traced print becomes a print op") {
  std::string text = trace_text("f(x) = (println(\"x = \", x); x)", "f", {"f32[2]"});
  CHECK(text.find("print(%1; format=\"x = Float32{}\")") != std::string::npos);
  // Static text too is printed by each run, not once while tracing.
  text = trace_text("f(x) = (println(\"step \", 1); x)", "f", {"f32[2]"});
  CHECK(text.find("print(format=\"step 1\")") != std::string::npos);
}

TEST_CASE("random draws inside a trace are ops drawn by each run, never frozen samples") {
  Program in;
  in.run_text("t.jl",
              "noisy(x) = x .+ randn(Float32, size(x)) .* rand(Float32)\nx = zeros(Float32, 4)");
  Traced t = trace(in, "noisy", {"x"});
  validate(t.tape);
  std::string text = print_tape(t.tape);
  CHECK(text.find("randn(dtype=f32, shape=[4], seed=") != std::string::npos);
  CHECK(text.find("rand(dtype=f32, shape=[], seed=") != std::string::npos);
  CHECK(text.find("const") == std::string::npos);
  auto run_with = [&](uint64_t key) {
    Executor executor(t.tape);
    executor.set_random_key(key);
    std::vector<Tensor> outs = executor.run(t.inputs);
    const float* p = outs.at(0).data<float>();
    return std::vector<float>(p, p + 4);
  };
  CHECK(run_with(1) == run_with(1));
  CHECK(run_with(1) != run_with(2));
  CHECK(run_with(0) != run_with(1));
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

}  // namespace ytape::tracer::testing
