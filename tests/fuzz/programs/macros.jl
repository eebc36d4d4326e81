# Macros as real code writes them: a seed for the program and trace targets.
struct Affine
  W
  b
end
Flux.@functor Affine
@inline (a::Affine)(x) = @. tanh(a.W * x + a.b)
function f(x)
  @assert length(x) == 3 "three inputs"
  a = Affine(2.0, 0.5)
  y = @views x[1:2]
  @inbounds for i in 1:2
    y = y .+ @. sin(y) * i
  end
  @show size(y)
  @fastmath @simd for k in 1:1
    y = y .* 1.0
  end
  sum(a(y)) + sum(@view x[2:3])
end
