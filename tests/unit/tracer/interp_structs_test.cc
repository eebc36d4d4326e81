// Structs, dispatch, getproperty methods, higher-order functions, comprehensions and do
// blocks.
#include "interp_helpers.h"

namespace ytape::tracer::testing {

namespace {

const char* kLayers = R"(
abstract type Layer end
struct Dense <: Layer
  W
  b
end
struct Scale{T} <: Layer
  s::T
end
Dense(nin::Integer, nout::Integer) = Dense(ones(Float32, nout, nin), zeros(Float32, nout))
(m::Dense)(x) = m.W * x .+ m.b
(m::Scale)(x) = m.s .* x
describe(::Layer) = "a layer"
describe(::Dense) = "dense"
describe(x::Number) = "number"
describe(x::AbstractFloat) = "float"
describe(x::AbstractArray{Float32}) = "f32 array"
describe(x) = "something"
apply(layers, x) = foldl((h, l) -> l(h), layers; init=x)
)";

}  // namespace

TEST_CASE("structs: constructors, fields, callable structs") {
  CHECK(eval_show(kLayers, "d = Dense(2, 3); size(d.W), d.b") ==
        "((3, 2), Float32[0.0, 0.0, 0.0])");
  CHECK(eval_show(kLayers, "d = Dense(2, 3); d(Float32[1, 2])") == "Float32[3.0, 3.0, 3.0]");
  CHECK(eval_show(kLayers, "Scale(2f0)(3f0)") == "6.0f0");
  CHECK(eval_show(kLayers, "apply((Dense(2, 2), Scale(0.5f0)), Float32[1, 1])") ==
        "Float32[1.0, 1.0]");
  CHECK(run_error(std::string(kLayers) + "Dense(1, 2).V").find("Dense has no field 'V'") !=
        std::string::npos);
  // A call no constructor takes lists them all, the implied one of the fields first.
  std::string message = run_error(std::string(kLayers) + "Dense(1.0)");
  CHECK(message.find("no constructor of Dense takes the arguments (::Float64); the "
                     "constructors are:\n  Dense(W") != std::string::npos);
  CHECK(message.find("), one argument per field\n  Dense(nin::Integer, nout::Integer) at t.jl:") !=
        std::string::npos);
}

TEST_CASE("inner constructors: methods of the struct's name whose new makes the instance") {
  // Flux's AlphaDropout: a checked inner constructor, new{...} with the parameters, and an
  // outer constructor that calls it.
  std::string p = R"(
mutable struct AlphaDropout{F,R}
  p::F
  active::Union{Bool, Nothing}
  rng::R
  function AlphaDropout(p, active, rng)
    @assert 0 ≤ p ≤ 1
    new{typeof(p), typeof(rng)}(p, active, rng)
  end
end
AlphaDropout(p; rng = 7) = AlphaDropout(p, nothing, rng)
struct Pos2
  x::Float64
  "a docstring"
  Pos2(x) = x < 0 ? new(-x) : new(x)
end
struct Point{T}
  x::T
  y::T
  Point(x::T, y::T) where {T} = new{T}(x, y)
end
)";
  CHECK(eval_show(p, "AlphaDropout(0.5)") == "AlphaDropout{Float64, Int64}(0.5, nothing, 7)");
  CHECK(run_error(p + "AlphaDropout(2.0)").find("AssertionError: 0 ≤ p ≤ 1") != std::string::npos);
  CHECK(eval_show(p, "Pos2(-3.0).x, Pos2(2).x") == "(3.0, 2.0)");
  CHECK(eval_show(p, "Point(1, 2), typeof(Point(1.0, 2.0))") ==
        "(Point{Int64}(1, 2), Point{Float64})");
  // Traced: the inner constructor runs in the trace, its fields traced values.
  check_trace_matches(p + "f(v) = Point(v[1], 2 * v[2]).y * Pos2(v[1]).x\nv = [1.5, -2.0]", "f",
                      {"v"});
}

TEST_CASE(
    "@kwdef structs convert keyword values to their fields' types, as the implied constructor") {
  // The model zoo's hyperparameters: `epochs::Int = 1e3`, built by Args(; kws...).
  std::string p = R"(
Base.@kwdef mutable struct Args
  batch_size::Int = 64   # batch size
  η::Float64 = 1e-3      # learning rate
  epochs::Int = 1e3      # number of epochs
  input_dim = 28^2
end
make(; kws...) = Args(; kws...)
)";
  CHECK(eval_show(p, "make().epochs, make(epochs = 3).epochs, make(η = 1).η, make().input_dim") ==
        "(1000, 3, 1.0, 784)");
  CHECK(run_error(p + "make(epochs = 1.5)").find("no constructor of Args takes the arguments") !=
        std::string::npos);
  CHECK(eval_show("", "Symbol(:a, \"_\", 2), Symbol(\"xy\")") == "(:a_2, :xy)");
}

TEST_CASE("dispatch picks the most specific method") {
  CHECK(eval_show(kLayers, "describe(Dense(1, 1)), describe(Scale(1))") ==
        "(\"dense\", \"a layer\")");
  CHECK(eval_show(kLayers, "describe(1), describe(1.5), describe(\"s\")") ==
        "(\"number\", \"float\", \"something\")");
  CHECK(eval_show(kLayers, "describe(ones(Float32, 2)), describe(ones(2))") ==
        "(\"f32 array\", \"something\")");
  std::string ambiguous = "f(x::Number, y) = 1\nf(x, y::Number) = 2\nf(1, 2)";
  CHECK(run_error(ambiguous).find("t.jl:3:1: the call of f is ambiguous between:\n"
                                  "  f(x::Number, y) at t.jl:1:1\n"
                                  "  f(x, y::Number) at t.jl:2:1") == 0);
}

TEST_CASE("higher-order functions, comprehensions and do blocks") {
  CHECK(eval_show("", "map(x -> 2x, (1, 2, 3))") == "(2, 4, 6)");
  CHECK(eval_show("", "map(+, (1, 2), (10, 20))") == "(11, 22)");
  CHECK(eval_show("", "foldl(-, (1, 2, 3)), reduce(+, 1:4; init=10)") == "(-4, 20)");
  CHECK(eval_show("", "ntuple(i -> i^2, 3)") == "(1, 4, 9)");
  CHECK(eval_show("", "collect(zip((1, 2), (:a, :b)))") == "[(1, :a), (2, :b)]");
  // Several iterators in one clause: an array of their lengths, the first varying fastest;
  // with a filter, a vector in the same order; a second `for` nests, the first outermost.
  CHECK(eval_show("", "Float32[i + 10j for i in 1:3, j in 1:2]") ==
        "Float32[11.0 21.0; 12.0 22.0; 13.0 23.0]");
  CHECK(eval_show("", "size([i + j + k for i in 1:2, j in 1:3, k in 1:4])") == "(2, 3, 4)");
  CHECK(eval_show("", "[i * j for i in 1:2, j in 1:3 if i != j]") == "[2, 2, 3, 6]");
  CHECK(eval_show("", "[(i, j) for i in 1:2 for j in 1:2]") == "[(1, 1), (1, 2), (2, 1), (2, 2)]");
  CHECK(eval_show("", "sum(x^2 for x in 1:4)") == "30");
  CHECK(eval_show("", "map((1, 2)) do x\n  x + 1\nend") == "(2, 3)");
  CHECK(eval_show("", "first(1:3), last((4, 5))") == "(1, 5)");
  CHECK(eval_show("", "x = 1; x += 2; x *= 3; x") == "9");
  CHECK(eval_show("", "prod((2, 3, 4)), prod(size(ones(2, 5))), 3 in (1, 3), :a in (:b,)") ==
        "(24, 10, true, false)");
  CHECK(eval_show("", "isempty(()), isempty(1:0), isempty((1,))") == "(true, true, false)");
}

TEST_CASE("user functions broadcast once over whole arrays") {
  std::string program = R"(
swish(x) = x * sigmoid(x)
f(x) = sum(swish.(x))
x = Float32[1, -2, 3]
)";
  std::string text = trace_text(program, "f", {"x"});
  CHECK(text.find("%2 = sigmoid(%1)::f32[3]  # t.jl:2\n  %3 = mul(%1, %2)::f32[3]  # t.jl:2") !=
        std::string::npos);
  check_trace_matches(program, "f", {"x"});
}

TEST_CASE(
    "a broadcast user function sees elements: it dispatches, reduces and captures as Julia's") {
  std::string program = R"(
inc_mul(a::Real, b::Real) = a * (b + 1.0)
inc_mul(A::AbstractArray, B::AbstractArray) = inc_mul.(A, B)
x = [1.0, 2.0]; y = [3.0, 4.0]; W = [1.0 2.0; 3.0 4.0]
g(t) = t - mean(x)
h(t) = t * sum(t) + prod(t)
k(t) = t * W
f(x, y) = sum(inc_mul(x, y)) + sum(map(t -> t * (x'y), x)) + sum(g.(y)) + sum(h.(x))
)";
  // Dispatch on the elements' types: once recursed until the call limit.
  CHECK(eval_show(program, "inc_mul(x, y)") == "[4.0, 10.0]");
  // A reduction of an element is the element; captured arrays keep their meaning.
  CHECK(eval_show(program, "(sum ∘ abs2).(x), map(t -> t * (x'y), x), g.(y), h.(x)") ==
        "([1.0, 4.0], [11.0, 22.0], [1.5, 2.5], [2.0, 6.0])");
  CHECK(eval_show(program, "(t -> length(t) + ndims(t) + length(size(t))).(x)") == "[1, 1]");
  CHECK(eval_show(program, "(t -> t isa Real).(x), (t -> 2).(x), (t -> sum(y)).(x)") ==
        "(Bool[1, 1], [2, 2], [7.0, 7.0])");
  CHECK(run_error(program + "k.(x)").find("combines an element of x with the whole f64[2,2]") !=
        std::string::npos);
  check_trace_matches(program, "f", {"x", "y"});
}

TEST_CASE("a broadcast user function's ||, && , comparison chains and ?: act per element") {
  std::string program = R"(
x = [1.0, -0.5, -3.0]
f(x) = sum(map(v -> (v > 0 || v < -1) ? v : 2v, x)) + sum((v -> 0 < v < 2 && v != 5).(x))
)";
  CHECK(eval_show(program,
                  "all(v -> v > 0 || v < -0.2, x), all(v -> v > 0 || v < -2, x), any(v -> v < 0 && "
                  "v > -1, x)") == "(true, false, true)");
  CHECK(eval_show(program, "map(v -> -1 < v < 2, x), map(v -> v > 0 ? 2v : -v, x)") ==
        "(Bool[1, 1, 0], [2.0, 0.5, 3.0])");
  CHECK(eval_show(program, "f(x)") == "-2.0");
  check_trace_matches(program, "f", {"x"});
  // An `if` statement on an element still cannot branch.
  CHECK(run_error(program + "map(v -> begin if v > 0\n v\n else\n 2v\n end end, x)")
            .find("a condition must be a Bool") != std::string::npos);
}

TEST_CASE("traced structs, dispatch and indexing compute what the interpreter computes") {
  std::string program = std::string(kLayers) + R"(
seed!(3)
model = (Dense(randn(Float32, 4, 3), randn(Float32, 4)), Scale(0.5f0))
x = randn(Float32, 3, 2)
loss(model, x) = sum(abs2.(apply(model, x)))
pick(x) = (x[2, :], x[end, end], x[:, 1:1], maximum(x; dims=2), ifelse.(x .> 0, x, 0f0))
cat3(x) = (vcat(x, x), hcat(x, x), cat(x, x; dims=3), [x; x])
)";
  check_trace_matches(program, "loss", {"model", "x"});
  check_trace_matches(program, "pick", {"x"});
  check_trace_matches(program, "cat3", {"x"});
  std::string text = trace_text(program, "loss", {"model", "x"});
  CHECK(
      text.find(
          "in  %1::f32[4,3] model.1.W\n  in  %2::f32[4] model.1.b\n  in  %3::f32[] model.2.s\n") !=
      std::string::npos);
}

TEST_CASE("getproperty methods answer names that are no fields, as Julia's x.name calls them") {
  std::string p = R"(
struct Celsius
  t
end
getproperty(c::Celsius, s::Symbol) = s === :kelvin ? c.t + 273 : error("no property $s")
)";
  CHECK(eval_show(p, "Celsius(10).kelvin, Celsius(10).t") == "(283, 10)");
  CHECK(run_error(p + "Celsius(1).f").find("no property f") != std::string::npos);
  CHECK(run_error("struct P\n  a\nend\nP(1).b").find("P has no field 'b'; its fields are a") !=
        std::string::npos);
}

}  // namespace ytape::tracer::testing
