// Names and signatures as library source writes them: `in` as a name, Colon, CUDA's and
// abstract array types in signatures, a program's own methods of the prelude's names,
// rand! and similar with a type and dims. Expected values are Julia's.
#include <doctest/doctest.h>

#include "tests/unit/tracer/interp_helpers.h"

namespace ytape::tracer::testing {

TEST_CASE("`in` names a parameter or variable where an operand starts; between, it is `in`") {
  std::string p = R"(
struct Norm; β; end
trainable(in::Norm) = (β = in.β,)
twice(in) = 2 * in
)";
  CHECK(eval_show(p, "trainable(Norm(3)), twice(4)") == "((β = 3,), 8)");
  CHECK(eval_show(p, "2 in [1, 2], in(3, (1, 2)), [i for i in 1:3], 3 ∈ 1:2") ==
        "(true, false, [1, 2, 3], false)");
}

TEST_CASE("Colon is the type of `:`") {
  std::string p = "shape(s, ::Colon) = :all\nshape(s, dims) = dims";
  CHECK(eval_show(p, "shape(1, :), shape(1, 2), shape(1, :a), typeof(:), Colon() == (:)") ==
        "(:all, 2, :a, Colon, true)");
  CHECK(eval_show(p, "(:) isa Colon, :a isa Colon, (:) isa Symbol, Colon <: Symbol") ==
        "(true, false, true, true)");
}

TEST_CASE("CUDA's types name methods that never apply; rand! and similar(x, T, dims)") {
  std::string p = R"(
mask(rng::CUDA.RNG, x::CuArray, p) = :gpu
mask(rng, x, p) = :cpu
x = zeros(Float32, 3, 2)
)";
  CHECK(eval_show(p, "mask(Flux.rng_from_array(x), x, 0.5)") == ":cpu");
  CHECK(eval_show(p, "y = rand!(similar(x, Float64, (2, 2))); typeof(y), all(0 .<= y .< 1)") ==
        "(Matrix{Float64}, true)");
  CHECK(eval_show(
            p, "size(similar(x, Int, 4)), typeof(similar(x, Float64)), size(similar(x, (1, 5)))") ==
        "((4,), Matrix{Float64}, (1, 5))");
  CHECK(eval_show(p,
                  "seed!(1); a = rand!(MersenneTwister(3), similar(x)); b = "
                  "rand!(MersenneTwister(3), similar(x)); a == b") == "true");
}

TEST_CASE("a program's own definition of a prelude function's name makes a new function") {
  // As Julia's `using Flux`: Main.gelu stands alone; the prelude's gelu_tanh, which calls
  // gelu, and the module path Flux.gelu still reach Flux's.
  std::string p = "gelu(x) = 0.0\ngelu(x::Int) = :int";
  CHECK(eval_show(p, "gelu(1.0), gelu(2), round(gelu_tanh(1.0); digits=4)") ==
        "(0.0, :int, 0.8412)");
  CHECK(eval_show(p, "round(Flux.gelu(1.0); digits=4), round(NNlib.gelu(1.0); digits=4)") ==
        "(0.8412, 0.8412)");
  // Qualified or imported, a definition extends the prelude's function.
  CHECK(eval_show("Flux.gelu(x::Int) = :int", "gelu(2), round(gelu(1.0); digits=4)") ==
        "(:int, 0.8412)");
  CHECK(eval_show("import Flux: elu, gelu\ngelu(x::Int) = :int", "gelu(2), gelu_tanh(2)") ==
        "(:int, :int)");
  CHECK(eval_show("import NNlib.gelu\ngelu(x::Int) = :int", "gelu(2)") == ":int");
  // A method for a type of the program's extends, as `Base.iterate(c::Countdown)` would.
  CHECK(eval_show("struct P; v; end\ngelu(p::P) = :p", "gelu(P(1)), round(gelu(1.0); digits=4)") ==
        "(:p, 0.8412)");
  // Built-ins (operators, size, getindex) gain the program's methods, as before.
  CHECK(eval_show("struct P; v; end\nsize(p::P) = (p.v,)", "size(P(3)), size(zeros(2))") ==
        "((3,), (2,))");
}

TEST_CASE("Flux's dropout and Dropout, defined by a program, stand beside the prelude's") {
  // src/layers/normalise.jl's shape: untyped rng, a layer calling the program's function.
  std::string p = R"(
function dropout(rng, x, p; dims=:, active::Bool=true)
  active || return x
  return x .* (rand!(rng, similar(x)) .> p)
end
dropout(x, p; kwargs...) = dropout(Flux.rng_from_array(x), x, p; kwargs...)
mutable struct Dropout; p; rng; end
Dropout(p) = Dropout(p, Flux.rng_from_array())
(a::Dropout)(x) = dropout(a.rng, x, a.p; active=true)
)";
  CHECK(
      eval_show("x = 2", "x ∉ [1, 3], x ∉ (1, 2), filter(∉((1,)), [1, 2]), isone(1.0), isone(x)") ==
      "(true, false, [2], true, false)");
  CHECK(
      eval_show(
          p, "Dropout(0.0)(ones(3)), dropout(ones(2), 1.0), dropout(ones(2), 0.5; active=false)") ==
      "([1.0, 1.0, 1.0], [0.0, 0.0], [1.0, 1.0])");
}

TEST_CASE("AbstractVecOrMat{T}, VecOrMat and OneHotArray in signatures, as Flux's cells") {
  std::string p = R"(
g(x::Union{AbstractVecOrMat{Float32}, OneHotArray}) = ndims(x)
g(x) = :other
h(x::VecOrMat) = :vm
h(x) = :other
e(x::AbstractVecOrMat{T}) where T = T
)";
  CHECK(eval_show(p,
                  "g(zeros(Float32, 3)), g(zeros(Float32, 2, 2)), g(zeros(2)), "
                  "g(zeros(Float32, 2, 2, 2)), g(onehotbatch([1, 2], 1:3))") ==
        "(1, 2, :other, :other, 2)");
  CHECK(eval_show(p, "h(zeros(2)), h(zeros(2, 2)), h(zeros(2, 2, 2)), e(zeros(Float32, 2, 2))") ==
        "(:vm, :vm, :other, Float32)");
  CHECK(eval_show(p,
                  "zeros(2) isa AbstractVecOrMat, zeros(1, 1, 1) isa AbstractVecOrMat, "
                  "onehot(2, 1:3) isa OneHotArray") == "(true, false, true)");
}

}  // namespace ytape::tracer::testing
