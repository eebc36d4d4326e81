// Writing into arrays with Julia's meaning: setindex!, `.=`, `.op=`, fill!, and the copies
// that make writes observable; traced writes are pure ops with exact gradients.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"
#include "tracer/program.h"

namespace ytape::tracer::testing {

TEST_CASE("x[i] = v writes into the array, seen through every name") {
  std::string p = R"(
x = [1.0, 2.0, 3.0, 4.0]
y = x
y[2] = 20
x[3:4] = [30, 40]
m = zeros(2, 3)
m[:, 2] = [1.0, 2.0]
m[2, 3] = 5
m[end, 1] += 7
)";
  CHECK(eval_show(p, "y, m") == "([1.0, 20.0, 30.0, 40.0], [0.0 1.0 0.0; 7.0 2.0 5.0])");
  // Every index form of getindex writes the elements it reads; a repeated index keeps
  // the last value, as Julia's stores do.
  CHECK(eval_show("x = zeros(5)\nx[[4, 1, 4]] = [1.0, 2.0, 3.0]\nx[[true, false, true, false, "
                  "false]] .+= 10\nx[end:-2:4] = [9.0]",
                  "x") == "[12.0, 0.0, 10.0, 3.0, 9.0]");
  CHECK(eval_show("x = zeros(2, 2)\nx[:, 1] = [1 2]\nb = zeros(Bool, 3)\nb[2] = 1", "x, b") ==
        "([1.0 0.0; 2.0 0.0], Bool[0, 1, 0])");
  // Arrays passed to a function are written by it.
  CHECK(eval_show("function zero_first!(v)\n  v[1] = 0\n  v\nend\na = [5, 6]\nzero_first!(a)",
                  "a") == "[0, 6]");
}

TEST_CASE(".=, .op= and fill! write in place; x[i] .= v broadcasts") {
  std::string p = R"(
x = [1.0, 2.0, 3.0]
alias = x
x .= 0.5
x .+= [1, 2, 3]
m = zeros(2, 3)
m[:, 2] .= 1
m[1, :] .*= 2
m[1, :] .+= [1, 2, 3]
s = (w = zeros(2),)
s.w .-= 1
a = [1, 2, 3]
fill!(a, 7)
)";
  CHECK(eval_show(p, "alias, m, s.w, a") ==
        "([1.5, 2.5, 3.5], [1.0 4.0 3.0; 0.0 1.0 0.0], [-1.0, -1.0], [7, 7, 7])");
  // On a number `.+=` rebinds the variable, as `+=` does.
  CHECK(eval_show("n = 1.0; n .+= 2", "n") == "3.0");
}

TEST_CASE("copies are new arrays: a write into one leaves the other") {
  std::string p = R"(
x = [1.0, 2.0]
c = copy(x); c[1] = 10
v = x[:]; v[2] = 20
g = identity.(x); g[1] = 30
k = collect(x); k[1] = 40
h = vcat(x); h[1] = 50
d = deepcopy((x, x)); d[1][1] = 60
)";
  CHECK(eval_show(p, "x, c, v, g, k, h, d[2][1]") ==
        "([1.0, 2.0], [10.0, 2.0], [1.0, 20.0], [30.0, 2.0], [40.0, 2.0], [50.0, 2.0], 60.0)");
}

TEST_CASE("views share their parent's elements both ways, as Julia's") {
  std::string p = "x = [1.0 2.0; 3.0 4.0]\nv = @view x[:, 1]\nw = view(x, 2, :)";
  CHECK(eval_show(p + "\nv .= 0", "x, v, w") == "([0.0 2.0; 0.0 4.0], [0.0, 0.0], [0.0, 4.0])");
  CHECK(eval_show(p + "\nx[2, 1] = 7", "v, w, sum(v)") == "([1.0, 7.0], [7.0, 4.0], 8.0)");
  CHECK(eval_show(p + "\nw[2] = 9\nv .+= 1", "x, w") == "([2.0 2.0; 4.0 9.0], [4.0, 9.0])");
  CHECK(eval_show(p + "\nu = @view v[2:2]\nu[1] = 5", "x[2, 1], v[2], w[1]") == "(5.0, 5.0, 5.0)");
  // Copies are not views; `end` inside @view reads as in the indexing.
  CHECK(eval_show(p + "\nc = copy(v)\nc .= 100", "x, (@view x[:, end])") ==
        "([1.0 2.0; 3.0 4.0], [2.0, 4.0])");
  // Traced: writes through a view are ops on the parent, and gradients flow through them.
  std::string f =
      "x = [1.0 2.0; 3.0 4.0]\nf(x) = (a = copy(x); u = @view a[:, 2]; "
      "u .*= u; sum(a .* a))";
  CHECK(eval_show(f, "f(x)") == "282.0");  // a = [1 4; 3 16]
  check_trace_matches(f, "f", {"x"});
}

TEST_CASE("@views makes each slice read in it a view, as Julia's") {
  std::string p = "x = [1.0 2.0; 3.0 4.0]\n@views begin\n  y = x[:, 1]\n  y .= 0\nend";
  CHECK(eval_show(p, "x") == "[0.0 2.0; 0.0 4.0]");
  // In a function defined under @views; `end`, scalars, tuples and typed vectors as in Julia.
  std::string f =
      "w = [1.0, 2.0, 3.0, 4.0]\n@views function g!(a)\n  h = a[1:2]\n  h .= 0\n"
      "  (a[end], (5, 6)[2], Float32[1, 2])\nend";
  CHECK(eval_show(f, "g!(w), w") == "((4.0, 6, Float32[1.0, 2.0]), [0.0, 0.0, 3.0, 4.0])");
  CHECK(eval_show("m = [1.0 2.0; 3.0 4.0]\n@views m[:, 2] .+= m[:, 1]", "m") ==
        "[1.0 3.0; 3.0 7.0]");
  // Traced: the writes are ops on the parent, and gradients flow through them.
  std::string t =
      "x = [1.0 2.0; 3.0 4.0]\n@views f(x) = (a = copy(x); u = a[:, 2]; "
      "u .*= a[:, 1]; sum(a .* a))";
  CHECK(eval_show(t, "f(x)") == "158.0");  // a = [1 2; 3 12]
  check_trace_matches(t, "f", {"x"});
}

TEST_CASE("writes that Julia refuses give its errors") {
  auto error_of = [](const std::string& p) { return run_error(p); };
  CHECK(error_of("x = [1.0, 2.0]; x[1:2] = 5").find("perhaps use broadcasting `.=` instead?") !=
        std::string::npos);
  CHECK(error_of("x = [1.0, 2.0]; x[1:2] = [1.0, 2.0, 3.0]")
            .find("DimensionMismatch: tried to assign an array of size (3,) to a region of size "
                  "(2,)") != std::string::npos);
  CHECK(error_of("x = zeros(2, 2); x[:, 1] .= [1.0, 2.0, 3.0]")
            .find("cannot be broadcast into a region of size (2,)") != std::string::npos);
  CHECK(error_of("x = [1, 2]; x[1] = 1.5").find("InexactError: Int64(1.5)") != std::string::npos);
  CHECK(error_of("x = [1.0, 2.0]; x[1] = [5.0]")
            .find("cannot assign an Array{Float64, 1} to one "
                  "element") != std::string::npos);
  CHECK(error_of("x = [1.0, 2.0]; x[3] = 1.0").find("index 3 is out of bounds") !=
        std::string::npos);
  CHECK(error_of("t = (1, 2); t[1] = 3").find("tuples are immutable") != std::string::npos);
  CHECK(error_of("n = 1.0; n .= 2").find("'.=' writes into an array, and this is a Float64") !=
        std::string::npos);
  CHECK(error_of("v = [1.0, 2.0]; v'[1] = 3.0").find("assign into x itself") != std::string::npos);
  CHECK(eval_show("x = [1.0 2.0; 3.0 4.0]", "(@view x[:, 1]), view(x, 1, :), sum(view(x, :, 2))") ==
        "([1.0, 3.0], [1.0, 2.0], 6.0)");
  // A traced index may name one element; several could repeat, so they are refused.
  std::string traced = "x = [0.5, 2.0, 1.0]\nf(x) = (y = zeros(3); y[[argmax(x), 1]] = x[1:2]; y)";
  CHECK(trace_error(traced, "f", {"x"}).find("supported for one element at a time") !=
        std::string::npos);
}

TEST_CASE("traced writes: the tape computes them, gradients are exact, globals come back") {
  std::string p = R"(
x = [0.5, -1.0, 2.0, 3.0]
w = [1.0, 1.0, 1.0, 1.0]
function f(x)
  y = zeros(4)
  y[2:3] = x[1:2] .* 2
  y[end] = x[3]^2
  y .+= x
  t = y
  t[1] += 10
  m = zeros(2, 2)
  for j in 1:2
    m[:, j] .= x[j] .* [1.0, 2.0]
  end
  z = copy(x)
  z[argmax(x)] = 0            # a traced index: one element
  w[2] = sum(z)               # a global, written while tracing
  sum(y .* y) + sum(m .* m) + sum(z .* x) + w[2] * x[4]
end
)";
  check_trace_matches(p, "f", {"x"});
  check_gradient(p);
  Program in;
  in.run_text("t.jl", p);
  Traced t = trace(in, "f", {"x"});
  CHECK(show(in.eval_text("w")) == "[1.0, 1.0, 1.0, 1.0]");
  // A write of one element in a loop records an iota, not a constant of n positions.
  CHECK(print_tape(t.tape).find("iota(") != std::string::npos);
}

}  // namespace ytape::tracer::testing

namespace ytape::tracer::testing {

TEST_CASE("push!, pop!, append! and the like change vectors in place") {
  std::string p = R"(
a = []
push!(a, 1.0, "x")
push!(a, [1, 2])
b = a
pushfirst!(b, :s)
last_item = pop!(a)
c = Float32[]
push!(c, 1, 2.5)
append!(c, [3, 4], 5:6)
popped = (pop!(c), popfirst!(c))
insert!(c, 2, 9)
deleteat!(c, 1:2)
layers = [sin, cos]
push!(layers, tan)
e = [1, 2, 3]
empty!(e)
)";
  CHECK(eval_show(p, "a, last_item, c, popped, layers, e, typeof(c), typeof(a)") ==
        "([:s, 1.0, \"x\"], [1, 2], Float32[3.0, 4.0, 5.0], (6.0f0, 1.0f0), [sin, cos, tan], "
        "Int64[], Vector{Float32}, Vector{Any})");
  CHECK(eval_show("", "[], typeof([]), [x for x in (:a, 1)], Vector{Float32}(undef, 2)") ==
        "(Any[], Vector{Any}, [:a, 1], Float32[0.0, 0.0])");
  CHECK(run_error("c = [1, 2]; push!(c, 1.5)").find("InexactError") != std::string::npos);
  CHECK(run_error("c = [1.0]; push!(c, :a)").find("a vector of values ([]) holds any value") !=
        std::string::npos);
  CHECK(run_error("t = (1, 2); push!(t, 3)").find("push!: a Tuple is immutable") !=
        std::string::npos);
  CHECK(run_error("pop!(Float64[])").find("pop!: the vector must be non-empty") !=
        std::string::npos);
  // Traced: layer outputs collected in a vector, numbers in an array; a global vector
  // written while tracing comes back afterwards.
  std::string traced = R"(
x = [0.3, -0.2, 0.5]
seen = []
function f(x)
  outs = []
  h = x
  for i in 1:3
    h = tanh.(h .* i)
    push!(outs, h)
  end
  acc = Float64[]
  for o in outs
    push!(acc, sum(o))
  end
  append!(acc, x)
  push!(seen, acc)
  final = pop!(acc)
  sum(acc .^ 2) + final * length(outs)
end
)";
  check_trace_matches(traced, "f", {"x"});
  check_gradient(traced);
  Program in;
  in.run_text("t.jl", traced);
  trace(in, "f", {"x"});
  CHECK(show(in.eval_text("seen")) == "Any[]");
  // A vector of values passed to the traced function stays a vector (it became a tuple,
  // so push! onto it was refused).
  Program vin;
  vin.run_text("t.jl", "ws = [[1.0, 2.0], [3.0]]\nf(ws) = (push!(ws, ws[1] .* 2); sum(sum.(ws)))");
  Traced vt = trace(vin, "f", {"ws"});
  std::vector<Tensor> outs = Executor(vt.tape).run(vt.inputs);
  REQUIRE(outs.size() == 1);
  CHECK(outs[0].data<double>()[0] == 12.0);
}

TEST_CASE("an operation on a tuple that needs an array says so") {
  CHECK(run_error("t = (1.0, 2.0); t * [1.0 2.0]")
            .find("'*' is not defined for a Tuple: it takes numbers or arrays; collect(t) makes "
                  "an array of its numbers") != std::string::npos);
  CHECK(run_error("v = [1.0, \"a\"]; reshape(v, 2, 1)")
            .find("reshape is not defined for a Vector{Any}: it takes numbers or arrays") !=
        std::string::npos);
  CHECK(eval_show("v = []; push!(v, 1.0, 2.0)", "collect(v) .* 2") == "[2.0, 4.0]");
  CHECK(run_error("x = 1.0 // 3")
            .find("a // b takes integers or rationals, as Julia's, not a "
                  "Float64 and an Int64: write a / b for a float") != std::string::npos);
}

TEST_CASE("Dict and Pair: Julia's API, insertion order") {
  std::string p = R"(
d = Dict(:a => 1, :b => 2.5)
d[:c] = 3
d[:a] += 10
ks = []
for (k, v) in d
  push!(ks, k)
end
delete!(d, :b)
e = Dict(i => i^2 for i in 1:3)
g = get!(e, 4, 16)
z = Dict{Symbol, Float32}()
z[:w] = 1
pr = 1 => "one"
k, v = pr
)";
  CHECK(eval_show(p, "d, ks, haskey(d, :b), get(d, :z, 0), length(d), e[3], g, e[4], z") ==
        "(Dict(:a => 11, :c => 3), [:a, :b, :c], false, 0, 2, 9, 16, 16, Dict(:w => 1))");
  CHECK(eval_show(p, "pr, pr.first, pr[2], k, v, first(pr), last(pr), merge(d, e)[2]") ==
        "(1 => \"one\", 1, \"one\", 1, \"one\", 1, \"one\", 4)");
  CHECK(eval_show(p, "pop!(d, :c), d, isempty(Dict()), collect(keys(d))") ==
        "(3, Dict(:a => 11), true, [:a])");
  CHECK(run_error(p + "d[:nope]").find("KeyError: key :nope not found") != std::string::npos);
  // Values of a Dict in a traced function.
  check_gradient(R"(
x = [0.3, -0.2, 0.5]
function f(x)
  cache = Dict()
  cache[:sq] = x .^ 2
  cache[:sum] = sum(cache[:sq])
  cache[:sum] * 2 + sum(cache[:sq] .* x)
end
)");
}

}  // namespace ytape::tracer::testing
