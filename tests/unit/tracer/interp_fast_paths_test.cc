// The fast paths of tracing keep the language's meaning: loop scopes are recycled but each
// iteration still has its own variables, number tensors are shared but each use of a
// number still records its own constant, of the dtype it takes there.
#include "interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("each iteration of a loop has its own variables") {
  std::string program = R"(
function makers()
  fs = ()
  for i in 1:3
    fs = (fs..., () -> i)
  end
  fs
end
calls() = map(f -> f(), makers())
function leak()
  for i in 1:2
    if i == 2
      return t
    end
    t = i
  end
end
function nested()
  s = 0
  for i in 1:2, j in 1:3
    s = s + 10i + j
  end
  s
end
)";
  // Closures made in different iterations see different variables.
  CHECK(eval_show(program, "calls()") == "(1, 2, 3)");
  CHECK(eval_show(program, "nested()") == "102");
  // A variable of one iteration is not defined in the next.
  CHECK(run_error(program + "leak()\n").find("undefined variable 't'") != std::string::npos);
}

TEST_CASE("each use of a number records a constant of the dtype it takes") {
  std::string program = "f(a, b) = (a * 2.0 + 2.0, b * 2.0)\n";
  CHECK(trace_text(program, "f", {"f32[]", "f64[]"}) ==
        "tape f\n"
        "  meta entry = \"f\"\n"
        "  in  %1::f32[] a\n"
        "  in  %2::f64[] b\n"
        "  %3 = const(2.0)::f32[]  # t.jl:1\n"
        "  %4 = mul(%1, %3)::f32[]  # t.jl:1\n"
        "  %5 = const(2.0)::f32[]  # t.jl:1\n"
        "  %6 = add(%4, %5)::f32[]  # t.jl:1\n"
        "  %7 = const(2.0)::f64[]  # t.jl:1\n"
        "  %8 = mul(%2, %7)::f64[]  # t.jl:1\n"
        "  out %6 out.1\n"
        "  out %8 out.2\n");
}

TEST_CASE("a long unrolled scalar loop traces every iteration") {
  std::string program = R"(
x = 1.0f0
function f(x, n)
  s = x
  for i in 1:n
    s = s * 1.0001 + 0.5
  end
  s
end
)";
  Limits unroll;
  unroll.loops = LoopMode::unroll;
  Program in(unroll);
  in.run_text("t.jl", program);
  Traced traced = trace(in, "f", {"x", "1000"});
  validate(traced.tape);
  CHECK(traced.tape.ops.size() == 1 + 4 * 1000);  // the input; two constants and two ops each
  Executor executor(traced.tape);
  float s = 1.0f;
  for (int i = 0; i < 1000; ++i) s = s * 1.0001f + 0.5f;
  CHECK(executor.run(traced.inputs).at(0).data<float>()[0] == doctest::Approx(s).epsilon(1e-4));
}

}  // namespace ytape::tracer::testing
