// Values nested as deep as a loop makes them, and containers inside themselves: no walk
// of a value overflows the stack (tracer/interp/nesting.h). Printing shows cycles as
// Julia's show does; other walks stop with an error at kMaxValueNesting levels; dropping
// a deep value does not recurse; cycles are freed with the interpreter. The sizes are
// ones that overflowed the stack before (tests/errors/ has the messages of the CLI).
#include <doctest/doctest.h>

#include <memory>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/interp/nesting.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

namespace {

// The output of running `program`.
std::string run_output(const std::string& program) {
  Program in;
  in.run_text("t.jl", program);
  return in.output();
}

}  // namespace

TEST_CASE("values nested 10^5 deep and more are dropped without recursion") {
  // Each once overflowed the stack in the destructors of the values, at the drop in the
  // loop or when the interpreter went.
  CHECK(run_error("v = (); for i in 1:300000; global v = (v,); end") == "no error");
  CHECK(run_error("c = Chain(identity); for i in 1:100000; global c = Chain(c); end") ==
        "no error");
  CHECK(run_error("h = identity; for i in 1:100000; global h = h ∘ identity; end") == "no error");
  CHECK(run_error("g = x -> x\nfor i in 1:100000; local k = g; global g = x -> k(x); end\n"
                  "g = nothing") == "no error");
  CHECK(run_error("v = Any[]; for i in 1:300000; global v = Any[v]; end; v = 1") == "no error");
  // A chain of views of views: a write at either end reaches every one.
  std::string views = R"(
x = zeros(3); y = x
for i in 1:100000; global y = view(y, :); end
y[2] = 5.0
x[3] = 7.0
)";
  CHECK(eval_show(views, "x, y") == "([0.0, 5.0, 7.0], [0.0, 5.0, 7.0])");
}

TEST_CASE("a container inside itself prints as Julia's circular reference") {
  // Julia counts the containers between (arrays, tuples, Dicts, structs; not named tuples
  // or pairs); ytape shows a vector of values as [...] where Julia writes Any[...].
  CHECK(eval_show("a = Any[1]; push!(a, a)", "a") == "[1, [#= circular reference @-1 =#]]");
  CHECK(eval_show("b = Any[1]; c = Any[b]; push!(b, c)", "b") ==
        "[1, [[#= circular reference @-2 =#]]]");
  CHECK(eval_show("s = Any[]; t = (s,); push!(s, t)", "t") ==
        "([(#= circular reference @-2 =#)],)");
  CHECK(eval_show("v = Any[]; push!(v, (a = v, b = 1 => v))", "v") ==
        "[(a = [#= circular reference @-1 =#], b = 1 => [#= circular reference @-1 =#])]");
  std::string node = "mutable struct Node; v; next; end\nn = Node(1, nothing)\n";
  CHECK(eval_show(node + "n.next = n", "n") == "Node(1, Node(#= circular reference @-1 =#))");
  CHECK(eval_show(node + "n.next = (n, 2)", "n") ==
        "Node(1, (Node(#= circular reference @-2 =#), 2))");
  CHECK(eval_show("d = Dict(); d[:me] = d; d[:x] = 1", "d") ==
        "Dict(:me => Dict(#= circular reference @-1 =#), :x => 1)");
  // print, println, string, repr and @show write the same.
  CHECK(run_output("a = Any[1]; push!(a, a)\nprintln(a)\nprintln(string(a), repr(a))\n"
                   "@show a") ==
        "[1, [#= circular reference @-1 =#]]\n"
        "[1, [#= circular reference @-1 =#]][1, [#= circular reference @-1 =#]]\n"
        "a = [1, [#= circular reference @-1 =#]]\n");
  // A value met twice but not inside itself is shown twice.
  CHECK(eval_show("s = Any[1]; t = (s, s)", "t") == "([1], [1])");
}

TEST_CASE("a traced print of a container inside itself shows the circular reference") {
  std::string p = R"(
function f(x)
  a = Any[x]
  push!(a, a)
  println(a)
  @show a
  x
end
)";
  std::string tape = trace_text(p, "f", {"f32[]"});
  // Vectors keep their brackets there too, as show writes them.
  CHECK(trace_text("f(x) = (println((Any[x, 1], Any[])); x)", "f", {"f32[]"})
            .find("format=\"([{}, 1], Any[])\"") != std::string::npos);
  CHECK(tape.find("print(%1; format=\"[{}, [#= circular reference @-1 =#]]\")") !=
        std::string::npos);
  CHECK(tape.find("print(%1; format=\"a = [{}, [#= circular reference @-1 =#]]\")") !=
        std::string::npos);
}

TEST_CASE("deepcopy of a container inside itself is a copy inside itself") {
  std::string p = "a = Any[1]; push!(a, a); c = deepcopy(a)";
  CHECK(eval_show(p, "c[2] === c, c === a, c") ==
        "(true, false, [1, [#= circular reference @-1 =#]])");
  std::string node = "mutable struct Node; v; next; end\nn = Node([1.0], nothing)\n";
  CHECK(eval_show(node + "n.next = n; m = deepcopy(n); m.v[1] = 2.0",
                  "m.next === m, n.v, m.next.v") == "(true, [1.0], [2.0])");
}

TEST_CASE("== of vectors inside themselves is an error; === and == of deep tuples work") {
  std::string cyclic = "a = Any[1]; push!(a, a)\nb = Any[1]; push!(b, b)\n";
  std::string message =
      "'==' of vectors that contain themselves would never end (Julia's overflows the "
      "stack); compare their items, or their identity with ===";
  CHECK(run_error(cyclic + "a == a").find(message) != std::string::npos);
  CHECK(run_error(cyclic + "a == b").find(message) != std::string::npos);
  CHECK(run_error(cyclic + "isequal(a, b)").find(message) != std::string::npos);
  // Unequal before the cycle comes round: the answer, as Julia's.
  CHECK(eval_show(cyclic, "a == Any[1, Any[1, 2]], a == Any[2, a], a === a") ==
        "(false, false, true)");
  // === of immutable tuples 10^5 deep, made apart, compares them without recursion.
  CHECK(eval_show("x = (); y = ()\nfor i in 1:100000; global x = (x,); global y = (y,); end",
                  "x === y, (x, 1) === (y, 2)") == "(true, false)");
}

TEST_CASE("walks of values stop at 1000 levels with an error, not a stack overflow") {
  auto nested = [](const std::string& levels, const std::string& then) {
    return "v = (); for i in 1:" + levels + "; global v = (v,); end\n" + then;
  };
  CHECK(kMaxValueNesting == 1000);
  // 1000 tuples (the innermost () and 999 around it) are walked; 1001 are not.
  CHECK(eval_show(nested("999", ""), "length(string(v))") == "2999");
  std::string deep =
      " a value nested more than 1000 levels deep (tuples, vectors or structs inside one "
      "another); keep deep data flat, in a vector";
  CHECK(run_error(nested("1000", "println(v)")) ==
        "t.jl:2:1: cannot print" + deep + "\nprintln(v)\n^");
  CHECK(run_error(nested("300000", "string(v)")).find("cannot print" + deep) != std::string::npos);
  CHECK(run_error(nested("300000", "v == v")).find("cannot compare (==)" + deep) !=
        std::string::npos);
  CHECK(run_error(nested("300000", "deepcopy(v)")).find("cannot deepcopy" + deep) !=
        std::string::npos);
  CHECK(run_error(nested("300000", "typeof((v, 1))")).find("cannot take the type of" + deep) !=
        std::string::npos);
  CHECK(run_error(nested("300000", "Zygote.ignore(() -> v)"))
            .find("cannot stop the gradient of" + deep) != std::string::npos);
  // Types nest as deep as values may; Val{Val{...}} made in a loop stops there.
  CHECK(run_error("T = Int; for i in 1:100000; global T = Val{T}; end") ==
        "t.jl:1:40: cannot make a type nested more than 1000 levels deep (Val{Val{...}} or "
        "Tuple{Tuple{...}} wrapped in a loop)\n"
        "T = Int; for i in 1:100000; global T = Val{T}; end\n"
        "                                       ^");
  for (const char* wrap : {"Tuple{T}", "Type{T}", "Complex{T}"}) {
    CAPTURE(wrap);
    CHECK(run_error(std::string("T = Int; for i in 1:300000; global T = ") + wrap + "; end")
              .find("cannot make a type nested more than 1000 levels deep") != std::string::npos);
  }
}

TEST_CASE("walks of values 1000 levels deep fit on the stack under 990 nested calls") {
  // The two limits together: the deepest walks allowed, from the deepest calls allowed.
  std::string p = R"(
v = (); for i in 1:999; global v = (v,); end
w = Any[]; for i in 1:999; global w = Any[w]; end
mutable struct Node; next; end
n = Node(nothing); for i in 1:998; global n = Node(n); end
g(k) = k == 0 ? (length(string(v)), v == v, length(repr(w)), deepcopy(w) == w,
                 length(string(deepcopy(n))), typeof(v) isa Type) : g(k - 1)
)";
  CHECK(eval_show(p, "g(990)") == "(2999, true, 2003, true, 6001, true)");
}

TEST_CASE("@kwdef defaults that make the struct again hit the call-depth limit") {
  std::string error = run_error("Base.@kwdef struct T; a = T().a; end; T()");
  CHECK(error.rfind("t.jl:1:27: calls nest more than 1000 deep (runaway recursion?)", 0) == 0);
  CHECK(error.find("  in T called at t.jl:1:27\n  ... 980 more frames\n") != std::string::npos);
  // Defaults still see the fields before them; a missing keyword names the call's line.
  CHECK(eval_show("Base.@kwdef struct S; a = 1; b = a + 1; end", "S(), S(a = 5)") ==
        "(S(1, 2), S(5, 6))");
  CHECK(run_error("Base.@kwdef struct S; a = 1; b; end\nS()") ==
        "t.jl:2:1: S requires the keyword argument 'b'\nS()\n^");
}

TEST_CASE("a trace's arguments and result inside themselves or too deep: errors with paths") {
  std::string node = "mutable struct Node; w; next; end\nn = Node(1.0, nothing); n.next = n\n";
  std::string cycle =
      "itself: a structure that contains itself cannot be traced, as the tape's names for its "
      "parts (paths) would never end; ";
  CHECK(trace_error(node + "f(m) = m.w", "f", {"n"}) ==
        "argument 'm.next' is 'm' " + cycle + "pass the parts the function needs");
  CHECK(trace_error("a = Any[1.0]; push!(a, (2.0, a))\nf(x) = 1.0", "f", {"a"}) ==
        "argument 'x.2.2' is 'x' " + cycle + "pass the parts the function needs");
  CHECK(trace_error("mutable struct Node; w; next; end\nf(x) = (m = Node(x, nothing); "
                    "m.next = m; m)",
                    "f", {"f32[]"}) ==
        "the entry's result at 'out.next' is 'out' " + cycle + "return the parts that are needed");
  CHECK(trace_error("x = 1.0; for i in 1:100000; global x = (x,); end\nf(x) = 1.0", "f", {"x"}) ==
        "argument 'x.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.1.…' nests more "
        "than 1000 levels deep (tuples, vectors or structs inside one another), deeper than "
        "ytape traces; flatten it");
  // A shared (not cyclic) part is two inputs, as before.
  CHECK(trace_text("s = [1.0]; x = (s, s)\nf(x) = x[1] .+ x[2]", "f", {"x"})
            .find("in  %2::f64[1] x.2") != std::string::npos);
}

TEST_CASE("gradient of a function of a value inside itself: an error naming its path") {
  std::string p = R"(
mutable struct Node; w; next; end
n = Node(1.0, nothing); n.next = n
g = gradient(m -> m.w, n)
)";
  CHECK(run_error(p).find("argument 'arg1.next' is 'arg1' itself: a structure that contains "
                          "itself cannot be traced") != std::string::npos);
}

TEST_CASE("containers inside themselves are freed with the interpreter; kept values stay") {
  std::weak_ptr<const Object> vector, node, copy;
  Value kept;
  {
    Program in;
    in.run_text("t.jl", R"(
a = Any[1]; push!(a, a)
mutable struct Node; v; next; end
n = Node(1, nothing); n.next = (n, Any[n])
c = deepcopy(a)
k = Any[2]; push!(k, k)
)");
    vector = in.global("a")->obj;
    node = in.global("n")->obj;
    copy = in.global("c")->obj;
    kept = *in.global("k");
  }
  CHECK(vector.expired());
  CHECK(node.expired());
  CHECK(copy.expired());
  // What the caller holds is no garbage: it keeps its items (and the cycle, its own).
  CHECK(show(kept) == "[2, [#= circular reference @-1 =#]]");
  CycleCandidates candidates;
  candidates.note(kept.obj);
  std::weak_ptr<const Object> weak = kept.obj;
  kept = Value();
  candidates.free_cycles();
  CHECK(weak.expired());
}

}  // namespace ytape::tracer::testing
