# Follows FluxML/Zygote.jl test/features.jl and test/gradcheck.jl: the small functions its
# tests differentiate (power by a while loop, closures capturing and updating variables,
# Ref, structs and mutable structs, keyword arguments, splatting, tuples and named tuples,
# map and broadcasting of user functions, reductions and the Base and LinearAlgebra
# functions of gradcheck.jl: sum, prod, cumsum, maximum, logsumexp, var, std, norm, dot,
# kron, reverse, permutedims, reshape, repeat, clamp, max, ifelse, indexing), summed by
# one entry so that one gradient check covers them all.
# check: -f zygote_all x A B v w

using LinearAlgebra, Statistics

function pow(x, n)
  r = 1
  while n > 0
    n -= 1
    r *= x
  end
  return r
end

function pow_rec(x, n)
  n <= 0 && return 1
  x * pow_rec(x, n - 1)
end

# A closure capturing x and y, and one updating a captured variable.
function closure_mul(x)
  y = 2x
  g(z) = y * z
  g(x)
end
function closure_update(x)
  acc = 0.0
  add!(v) = (acc += v)
  for i in 1:3
    add!(i * x)
  end
  acc
end

function ref_pow(x)
  r = Ref(1.0)
  for _ in 1:3
    r[] *= x
  end
  r[]
end

struct Foo
  a
  b
end
foo_sum(x) = (f = Foo(x, 2x); f.a * f.b)

mutable struct Bar
  x
end
function bar_double(x)
  b = Bar(x)
  b.x = b.x * 2
  b.x += 1
  b.x
end

kwf(x; scale=2, shift=0) = scale * x + shift
splat_sum(xs...) = +(xs...)
nt_loss(x) = (nt = (a = x, b = x^2); nt.a + nt.b)

mysquare(x::Real) = x^2
relu_like(x::Real) = max(x, zero(x))

# Views (gradcheck.jl's `view` tests), and a write through a slice taken under @views.
@views function views_sum(A, v)
  s = sum(A[2:3, :] .* A[1:2, :]) + sum(view(v, 2:3))
  C = copy(A)
  c = C[:, 1]
  c .*= v[1:4]
  s + sum(C .^ 2)
end

function zygote_all(x, A, B, v, w)
  total = pow(x, 3) + pow_rec(x, 4) + closure_mul(x) + closure_update(x) + ref_pow(x)
  total += foo_sum(x) + bar_double(x) + kwf(x) + kwf(x; scale=3, shift=1)
  total += splat_sum(x, 2x, 3x) + splat_sum(v...) + nt_loss(x)
  total += sum(map(mysquare, v)) + sum(mysquare.(A)) + sum(relu_like.(v))
  total += sum(map((a, b) -> a * b, v, w)) + sum(x -> x^3, v)
  total += sum(A) + prod(v) + sum(prod(A; dims=1)) + maximum(v) + minimum(A)
  total += sum(maximum(A; dims=2)) + mean(A) + sum(mean(A; dims=1))
  total += sum(logsumexp(A; dims=1)) + var(v) + std(A) + sum(var(A; dims=2))
  total += norm(v) + norm(A, 1) + dot(v, w) + v' * w + v'A * w[1:3]
  total += sum(A * B) + sum(A' * A) + sum(A .* B')
  total += sum(reverse(v) .* w) + sum(permutedims(A, (2, 1)) * v)
  total += sum(reshape(A, 3, 4)[2, :]) + sum(vcat(v, w) .^ 2) + sum(hcat(v, w) .^ 3)
  total += sum(clamp.(v, -0.5, 0.5)) + sum(max.(v, w)) + sum(ifelse.(v .> 0, v, 2w))
  total += A[2, 3] + sum(A[:, [1, 3]]) + sum(A[end, :]) + sum(A[[true, false, true, true], 1])
  total += sum(abs2, A) + sum(exp.(v) .* log.(abs.(w) .+ 1))
  total += views_sum(A, v)
  total += sum(cumsum(v)) + sum(kron(v[1:2], w[1:3])) + sum(repeat(v[1:2], 3) .* kron(v[1:2], w[1:3]))
  total
end

x = 0.7
A = randn(4, 3)
B = randn(3, 4)
v = randn(4)
w = randn(4)
@assert v'A * w[1:3] isa Real && v'A * w[1:3] ≈ dot(v, A * w[1:3])
@assert reverse(v) == v[end:-1:1] && reverse(v) isa AbstractVector
@assert cumsum(v) ≈ [sum(v[1:i]) for i in 1:4] && cumsum([1, 2, 3]) == [1, 3, 6]
# The write through c is a write into C: column 1 is scaled by v.
@assert views_sum(A, v) ≈ sum(A[2:3, :] .* A[1:2, :]) + v[2] + v[3] + sum(A[:, 2:3] .^ 2) + sum((A[:, 1] .* v) .^ 2)
@assert kron([1, 2], [1, 10, 100]) == [1, 10, 100, 2, 20, 200]
@assert repeat([1, 2], 3) == [1, 2, 1, 2, 1, 2]
# The captured acc is updated through the parenthesized `acc += v`: 0.7 * (1 + 2 + 3).
@assert closure_update(x) ≈ 6 * 0.7
