// Julia's type forms in annotations, `isa` and dispatch: Union, Tuple{...}, NTuple, Val.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("typeof(f) is the type of f alone: dispatch on ::typeof(identity)") {
  // Flux's and NNlib's idiom; every function matched it once, so isid(relu) was true.
  std::string p = R"(
isid(::typeof(identity)) = true
isid(f) = false
act(::typeof(relu), x) = :relu
act(::Function, x) = :other
act(f, x) = :any
sq(x) = x^2
)";
  CHECK(eval_show(p, "isid(identity), isid(relu), isid(sq), isid(x -> x), isid(3)") ==
        "(true, false, false, false, false)");
  CHECK(eval_show(p, "act(relu, 1), act(tanh, 1), act(sq, 1), act(2, 1)") ==
        "(:relu, :other, :other, :any)");
  CHECK(
      eval_show(p, "typeof(sin) == typeof(sin), typeof(sin) == typeof(cos), sin isa typeof(sin)") ==
      "(true, false, true)");
  CHECK(eval_show(p, "typeof(sin) <: Function, Function <: typeof(sin), cos isa typeof(sin)") ==
        "(true, false, false)");
}

TEST_CASE("Union{...} in isa and as a value") {
  CHECK(eval_show("",
                  "1 isa Union{Int, Nothing}, nothing isa Union{Int, Nothing}, "
                  "1.0 isa Union{Int, Nothing}") == "(true, true, false)");
  CHECK(eval_show("x = [1f0, 2f0]",
                  "x isa Union{Nothing, AbstractArray}, "
                  "x isa Union{Nothing, AbstractArray{Float64}}") == "(true, false)");
  // As Julia simplifies: a member below another goes, one member is that type.
  CHECK(eval_show("", "Union{Int, Integer}, Union{Float32}, Union{Int, Union{Nothing, Bool}}") ==
        "(Integer, Float32, Union{Int64, Nothing, Bool})");
  CHECK(eval_show("",
                  "Union{Int, Nothing} == Union{Nothing, Int}, "
                  "Union{Int, Nothing} == Union{Int, Float64}") == "(true, false)");
  CHECK(run_error("Union{}").find("Union{} has no values") != std::string::npos);
  CHECK(eval_show("const MaybeInt = Union{Int, Nothing}", "2 isa MaybeInt, :a isa MaybeInt") ==
        "(true, false)");
}

TEST_CASE("a Union parameter takes any member and is less specific than each") {
  std::string p =
      "f(x::Union{Float32, Float64}) = \"float\"\n"
      "f(x::Union{Int, Nothing}) = \"int or nothing\"\n"
      "f(x::Int) = \"int\"\n"
      "f(x) = \"any\"";
  CHECK(eval_show(p, "f(1f0), f(2.0), f(nothing), f(3), f(:a)") ==
        "(\"float\", \"float\", \"int or nothing\", \"int\", \"any\")");
  // As Julia ranks them: a Union beats a type above one of its members.
  std::string q = "g(x::Integer) = 1\ng(x::Union{Int, Nothing}) = 2";
  CHECK(eval_show(q, "g(3), g(true), g(nothing)") == "(2, 1, 2)");
  // Two Unions sharing a member are ambiguous for it, as in Julia.
  std::string r = "h(x::Union{Int, Nothing}) = 1\nh(x::Union{Int, String}) = 2\nh(1)";
  CHECK(run_error(r).find("the call of h is ambiguous") != std::string::npos);
  CHECK(eval_show("k(x::Union{Vector{Float32}, Nothing}) = x === nothing ? 0 : length(x)",
                  "k(nothing), k(Float32[1, 2, 3])") == "(0, 3)");
  CHECK(run_error("k(x::Union{Int, Nothing}) = x\nk(1.5)")
            .find("no method of k matches the arguments (::Float64)") != std::string::npos);
}

TEST_CASE("Union-typed struct fields check the implied constructor") {
  std::string p =
      "struct Layer\n  w\n  b::Union{Vector{Float64}, Nothing}\nend\n"
      "bias(l::Layer) = l.b === nothing ? 0.0 : sum(l.b)";
  CHECK(eval_show(p, "bias(Layer(1, nothing)), bias(Layer(1, [1.0, 2.0]))") == "(0.0, 3.0)");
  CHECK(run_error(p + "\nLayer(1, 2)").find("no constructor of Layer takes the arguments") !=
        std::string::npos);
  // A struct's type parameter inside a Union stands for any type.
  std::string q = "struct Box{T}\n  x::Union{T, Nothing}\nend";
  CHECK(eval_show(q, "Box(1).x, Box(nothing).x") == "(1, nothing)");
}

TEST_CASE("Vararg: xs::Vararg{T} is xs::T..., Tuple{Vararg{T}} any number of T") {
  std::string p =
      "g(xs::Vararg{Int}) = sum(xs)\ng(x::Float64, ys::Vararg) = length(ys)\n"
      "h(t::Tuple{Vararg{Float64}}) = length(t)\nh(t) = -1\n"
      "k(t::Tuple{Vararg{Int, 2}}) = 2\nk(t) = 0";
  CHECK(eval_show(p, "g(1, 2, 3), g(1.0, :a, 2), h((1.0, 2.0)), h((1.0, 2)), h(())") ==
        "(6, 2, 2, -1, 0)");
  CHECK(eval_show(p, "k((1, 2)), k((1, 2, 3)), (1, 2) isa Tuple{Vararg{Integer}}") ==
        "(2, 0, true)");
  CHECK(run_error("f(t::Tuple{Int, Vararg{Int}}) = t\nf((1, 2))")
            .find("a Tuple type takes Vararg alone") != std::string::npos);
  // A where variable N of Vararg{T, N} is bound to the count.
  CHECK(eval_show("n(xs::Vararg{Int, N}) where {N} = N\nm(a, xs::Vararg{Any, N}) where N = N",
                  "n(1, 2, 3), n(), m(1), m(1, :a, 2.0)") == "(3, 0, 0, 2)");
}

TEST_CASE("parametric type aliases: const AA3{T} = AbstractArray{T, 3}, as NNlib's") {
  std::string p =
      "const AA3{T} = AbstractArray{T,3}\nconst AA{N} = AbstractArray{Float32,N}\n"
      "f(a::AA3{T}) where {T} = T\nf(a) = :other\n"
      "g(x::AA{N}, y::AA{N}) where {N} = N\ng(x, y) = -1\n"
      "h(v::AA3) = ndims(v)";
  CHECK(eval_show(p, "f(ones(Float32, 2, 2, 2)), f(ones(2, 2)), f(ones(2, 2, 2))") ==
        "(Float32, :other, Float64)");
  CHECK(eval_show(p,
                  "g(ones(Float32, 2, 2), ones(Float32, 3, 3)), g(ones(Float32, 2), "
                  "ones(Float32, 2, 2)), g(ones(2), ones(2))") == "(2, -1, -1)");
  CHECK(eval_show(p,
                  "ones(2, 2, 2) isa AA3, ones(2) isa AA3, ones(Float32, 2, 2) isa AA{2}, "
                  "h(ones(2, 1, 2))") == "(true, false, true, 3)");
  CHECK(run_error(p + "\nx = AA3{Float32, 2}").find("the type alias AA3 takes 1 parameters") !=
        std::string::npos);
}

TEST_CASE("Tuple{...} and NTuple{N, T} match tuples by length and item types") {
  std::string p =
      "f(t::NTuple{2, Int}) = \"two ints\"\n"
      "f(t::Tuple{Int, Float64}) = \"int, float\"\n"
      "f(t::NTuple{3, Any}) = \"three\"\n"
      "f(t::Tuple) = \"tuple\"";
  CHECK(eval_show(p, "f((1, 2)), f((1, 2.0)), f((1, :a, 2.0)), f((1,)), f((1.0, 2))") ==
        "(\"two ints\", \"int, float\", \"three\", \"tuple\", \"tuple\")");
  CHECK(eval_show("",
                  "(1, 2.0) isa Tuple{Int, Float64}, (1, 2) isa Tuple{Int, Float64}, "
                  "(1, 2) isa NTuple{2, Integer}, (1, 2, 3) isa NTuple{2, Int}") ==
        "(true, false, true, false)");
  CHECK(eval_show("",
                  "(1, 2.0) isa Tuple{Real, <:AbstractFloat}, () isa Tuple{}, "
                  "Any[1, 2] isa Tuple{Int, Int}") == "(true, true, false)");
  CHECK(eval_show("",
                  "typeof((1, 2.0)), typeof((1, 2.0)) == Tuple{Int, Float64}, "
                  "typeof((:a,)) == NTuple{1, Symbol}") == "(Tuple{Int64, Float64}, true, true)");
  // `NTuple{N, T} where N` is any number of T.
  std::string q = "n(t::NTuple{N, Float64}) where N = N\nn(t) = -1";
  CHECK(eval_show(q, "n((1.0, 2.0, 3.0)), n((1.0,)), n((1.0, 2))") == "(3, 1, -1)");
  CHECK(run_error("f(t::NTuple{2}) = t").find("NTuple takes a length and an item type") !=
        std::string::npos);
}

TEST_CASE("a typed tuple argument is destructured: f((a, b)::Tuple{Int, Int})") {
  std::string p = "f((a, b)::Tuple{Int, Int}) = a - b\nf((a, b)::Tuple) = 0";
  CHECK(eval_show(p, "f((5, 2)), f((5.0, 2))") == "(3, 0)");
}

TEST_CASE("a destructuring parameter nests, and `in` may be one of its names") {
  // Flux's normalize_mha_dims((in, (qkv, out))::Pair{...}), lambdas and do blocks alike.
  std::string p =
      "f((in, (qkv, out))::Pair) = (in, qkv, out)\n"
      "g(((a, b), c), d) = a + b * c - d\n"
      "h = ((x, (y, z)),) -> x * y + z";
  CHECK(eval_show(p,
                  "f(3 => 4 => 5), f((1, 2) => (3, 4) => 5), g(((1, 2), 3), 4), "
                  "h((2, (3, 4))), map(((a, (b, c)),) -> a + b + c, [(1, (2, 3))])") ==
        "((3, 4, 5), ((1, 2), (3, 4), 5), 3, 10, [6])");
  CHECK(run_error("f((a, (b, c))) = c\nf((1, (2,)))").find("too few values to unpack") !=
        std::string::npos);
}

TEST_CASE("Val(x) has type Val{x} and methods dispatch on it") {
  CHECK(eval_show("",
                  "Val(2), typeof(Val(:relu)), Val(2) isa Val{2}, Val(2) isa Val{3}, "
                  "Val(2) isa Val, Val{true}()") ==
        "(Val{2}(), Val{:relu}, true, false, true, Val{true}())");
  std::string p =
      "f(::Val{1}) = \"one\"\n"
      "f(::Val{N}) where N = N * 10\n"
      "act(x, ::Val{:relu}) = max(x, 0.0)\n"
      "act(x, ::Val{:neg}) = -x";
  CHECK(eval_show(p, "f(Val(1)), f(Val(4)), act(-2.0, Val(:relu)), act(3.0, Val(:neg))") ==
        "(\"one\", 40, 0.0, -3.0)");
  // Val{2} is not Val{2.0}, as in Julia.
  CHECK(eval_show("g(::Val{2}) = 1\ng(::Val) = 0", "g(Val(2)), g(Val(2.0))") == "(1, 0)");
  CHECK(run_error("Val([1.0, 2.0])").find("the value of a Val must be a number") !=
        std::string::npos);
}

TEST_CASE("Type{T} is the type of the type T") {
  std::string p =
      "f(::Type{Float32}) = \"f32\"\n"
      "f(::Type{Float64}) = \"f64\"\n"
      "f(::Type{T}) where T<:Integer = T\n"
      "f(::Type) = \"other\"\n"
      "z(::Type{T}, n) where T = zeros(T, n)";
  CHECK(eval_show(p, "f(Float32), f(Float64), f(Int), f(Bool), f(String), z(Float32, 2)") ==
        "(\"f32\", \"f64\", Int64, Bool, \"other\", Float32[0.0, 0.0])");
  CHECK(eval_show("",
                  "Float32 isa Type{Float32}, Float32 isa Type{Float64}, "
                  "Int isa Type{<:Real}, 1 isa Type{Int}, Type{Int} == Type{Int64}") ==
        "(true, false, true, false, true)");
}

TEST_CASE("where variables are bound in the body from the arguments") {
  std::string p =
      "elt(x::AbstractArray{T}) where T = T\n"
      "dims(x::AbstractArray{T, N}) where {T, N} = N\n"
      "same(x::T, y) where T = T\n"
      "first_type(t::Tuple{T, Int}) where T = T";
  CHECK(eval_show(p, "elt(Float32[1, 2]), dims(zeros(2, 3)), same(1.5, 2), first_type((:a, 1))") ==
        "(Float32, 2, Float64, Symbol)");
  // A variable shown by several arguments must be the same in each, as in Julia.
  std::string d =
      "both(x::T, y::T) where T = \"same\"\n"
      "both(x, y) = \"different\"\n"
      "scale(a::AbstractArray{T}, k::T) where T = a .* k\n"
      "apply(f::F, x) where F = f(x)";
  CHECK(eval_show(d,
                  "both(1, 2), both(1, 2.0), both(1f0, 2f0), scale(Float32[1, 2], 2f0), "
                  "apply(abs, -3)") == "(\"same\", \"different\", \"same\", Float32[2.0, 4.0], 3)");
  CHECK(run_error(d + "\nscale([1.0], 2)").find("no method of scale matches") != std::string::npos);
  // The bound value dispatches further, as Val{N} programs do.
  std::string q =
      "pow(x, ::Val{1}) = x\n"
      "pow(x, ::Val{N}) where N = x * pow(x, Val(N - 1))\n"
      "f(x) = pow(x, Val(3))\n"
      "g(x) = sum(f.(x))\n"
      "x = [1.0, 2.0, 3.0]";
  CHECK(eval_show(q, "f(2.0), f.(x)") == "(8.0, [1.0, 8.0, 27.0])");
  check_trace_matches(q, "g", {"x"});
}

TEST_CASE("lambdas with typed parameters dispatch on them") {
  CHECK(eval_show("f = (x::Float32) -> 2x", "f(3f0)") == "6.0f0");
  CHECK(run_error("f = (x::Float32) -> 2x\nf(3.0)").find("no method of #anonymous") !=
        std::string::npos);
  CHECK(eval_show("", "map((t::Tuple{Int, Int}) -> t[1] * t[2], ((1, 2), (3, 4)))") == "(2, 12)");
}

TEST_CASE("a bare typed lambda parameter is an error that says to parenthesize it") {
  // Julia reads `x::Int -> x + 1` as `x::(Int -> x + 1)`.
  CHECK(run_error("f = x::Int -> x + 1")
            .find("a typed lambda parameter needs parentheses: "
                  "write '(x::Int) -> ...'") != std::string::npos);
}

TEST_CASE("typed assignments convert, typed destructuring too, and v::T asserts") {
  CHECK(eval_show("function g()\n  x::Float32 = 1\n  a::Float64, b = 1, 2\n  (x, a, b)\nend",
                  "g()") == "(1.0f0, 1.0, 2)");
  CHECK(eval_show("function g()\n  local y::Float64 = 1\n  y\nend\nx::Float32 = 2.5", "g(), x") ==
        "(1.0, 2.5f0)");
  // The declared type holds for later assignments too, in this scope and inner ones.
  std::string p =
      "function g()\n  s::Float64 = 0\n  for i in 1:3\n    s += i\n  end\n  t = s\n"
      "  s = 1\n  (t, s)\nend\n"
      "function h()\n  local k::Int\n  k = 2.0\n  k\nend";
  CHECK(eval_show(p, "g(), h()") == "((6.0, 1.0), 2)");
  CHECK(eval_show("a, b = (1, 2.5)::Tuple{Int, Float64}", "a, b") == "(1, 2.5)");
  CHECK(run_error("y = 1.5::Int").find("typeassert: expected Int64, got a Float64") !=
        std::string::npos);
  CHECK(run_error("t = (1, 2)::Tuple{Int, Float64}")
            .find("typeassert: expected Tuple{Int, Float64}, got a Tuple") != std::string::npos);
}

}  // namespace ytape::tracer::testing
