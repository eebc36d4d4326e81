# The standard prelude of ytape's model language: Flux-like layers, activations, losses and
# optimisers, written in the language itself and loaded before every program, in the order
# tracer/CMakeLists.txt lists its files. Layouts follow docs/primitives.md: images are WHCN,
# conv weights (kw, kh, cin, cout), Dense weights (out, in) as in Flux. Everything here
# traces down to primitives.
#
# This file: Base, Statistics and LinearAlgebra names, activations, losses, initializers, train/test mode.

# ---- Pair ---------------------------------------------------------------------------------

# `a => b`: p.first and p.second; p[1], p[2], first(p), last(p); `k, v = p` destructures.
struct Pair
  first
  second
end
=>(a, b) = Pair(a, b)
getindex(p::Pair, i::Integer) = i == 1 ? p.first : i == 2 ? p.second : error("BoundsError: a Pair has 2 elements, not ", i)
first(p::Pair) = p.first
last(p::Pair) = p.second
length(p::Pair) = 2
iterate(p::Pair, i=1) = i > 2 ? nothing : (p[i], i + 1)
iterate(t::Tuple, i=1) = i > length(t) ? nothing : (t[i], i + 1)
iterate(x::AbstractArray, i=1) = i > length(x) ? nothing : (x[i], i + 1)

# ---- helpers ------------------------------------------------------------------------------


flatten(x) = reshape(x, :, size(x, ndims(x)))

# ---- Base, Statistics and LinearAlgebra ----------------------------------------------------

|>(x, f) = f(x)
∘(f, g) = (xs...; kws...) -> f(g(xs...; kws...))
isnothing(x) = x === nothing
iszero(x) = x == zero(x)
isone(x) = x == one(x)
vec(x) = reshape(x, :)
clamp(x, lo, hi) = min(max(x, lo), hi)
# Integer division rounding down (fld) and up (cld), as Julia's.
fld(a::Integer, b::Integer) = div(a, b) - (rem(a, b) != 0 && (a < 0) != (b < 0) ? 1 : 0)
cld(a::Integer, b::Integer) = div(a, b) + (rem(a, b) != 0 && (a < 0) == (b < 0) ? 1 : 0)
# Base.Returns(v): a function of any arguments that returns v.
Returns(v) = (args...; kws...) -> v
isnan(x) = x != x
floatmin(::Type{Float32}) = 1.1754944f-38
floatmin(::Type{Float64}) = 2.2250738585072014e-308
floatmax(::Type{Float32}) = 3.4028235f38
floatmax(::Type{Float64}) = 1.7976931348623157e308
floatmin(::Type{Float16}) = Float16(6.104e-5)
floatmax(::Type{Float16}) = Float16(65504.0)
# The extremes of Int64 (9223372036854775808 is no Int64 literal) and of the floats.
typemin(::Type{Int64}) = -9223372036854775807 - 1
typemax(::Type{Int64}) = 9223372036854775807
typemin(::Type{Bool}) = false
typemax(::Type{Bool}) = true
typemin(::Type{Float64}) = -Inf
typemax(::Type{Float64}) = Inf
typemin(::Type{Float32}) = -Inf32
typemax(::Type{Float32}) = Inf32
typemin(x::Number) = typemin(typeof(x))
typemax(x::Number) = typemax(typeof(x))
isinf(x) = !isnan(x) && isnan(x - x)
isfinite(x) = x - x == 0
dot(a, b) = sum(a .* b)

# The p-norm of all elements (2 by default; 1 and Inf too).
function norm(x, p::Real=2)
  p == 2 && return sqrt(sum(abs2.(x)))
  p == 1 && return sum(abs.(x))
  p == Inf && return maximum(abs.(x))
  sum(abs.(x) .^ p)^(1 / p)
end

# The variance and standard deviation, of all elements or along dims, corrected (n - 1) by
# default, about a given mean (of the dims' shape) or x's own, as in Statistics.
function var(x; dims=nothing, corrected::Bool=true, mean=nothing)
  m = mean !== nothing ? mean : dims === nothing ? Statistics.mean(x) : Statistics.mean(x; dims=dims)
  n = length(x) ÷ length(m)
  squares = dims === nothing ? sum(abs2.(x .- m)) : sum(abs2.(x .- m); dims=dims)
  squares ./ (corrected ? n - 1 : n)
end
function std(x; dims=nothing, corrected::Bool=true, mean=nothing)
  sqrt.(var(x; dims=dims, corrected=corrected, mean=mean))
end

# ---- activations (scalar functions: broadcast them, as relu.(x)) ----------------------------

leakyrelu(x, a=0.01f0) = max(a * x, x)
swish(x) = x * sigmoid(x)
# The unused side of each ifelse stays finite (expm1 of min(x, 0)), so that its zero
# gradient does not multiply an overflow into NaN.
elu(x, α=1) = ifelse(x > 0, x, α * expm1(min(x, 0)))
celu(x, α=1) = ifelse(x >= 0, x, α * expm1(min(x, 0) / α))
selu(x) = 1.0507009873554804 * ifelse(x > 0, x, 1.6732632423543772 * expm1(min(x, 0)))
# NNlib's gelu, the tanh approximation of x Φ(x).
# One primitive: its backward reads x alone (0.5 * x * (1 + tanh(0.7978845608028654 * (x +
# 0.044715 * x^3))) was seven ops, whose backward kept their values).
gelu(x) = _gelu(x)
# NNlib's gelu_erf, x Φ(x) exactly (ONNX's Gelu, PyTorch's default); gelu_tanh is gelu.
gelu_erf(x) = 0.5 * x * (1 + erf(x / 1.4142135623730951))
gelu_tanh(x) = gelu(x)
logσ(x) = -softplus(-x)
logsigmoid(x) = logσ(x)
relu6(x) = min(relu(x), 6)
hardtanh(x) = clamp(x, -1, 1)
hardσ(x) = clamp((x + 3) / 6, 0, 1)
hardsigmoid(x) = hardσ(x)
mish(x) = x * tanh(softplus(x))
tanhshrink(x) = x - tanh(x)
softsign(x) = x / (1 + abs(x))
lisht(x) = x * tanh(x)
logcosh(x) = x + softplus(-2x) - 0.6931471805599453
softshrink(x, λ=0.5) = min(max(0, x - λ), x + λ)
trelu(x, θ=1) = ifelse(x > θ, x, zero(x))
# NNlib's randomized leaky ReLU: a slope drawn in [lo, hi) for each element.
rrelu(x, lo=1 / 8, hi=1 / 3) = leakyrelu(x, (hi - lo) * rand(typeof(float(x))) + lo)

softmax(x; dims=1) = Prim.softmax(x; dims=dims)
logsoftmax(x; dims=1) = Prim.log_softmax(x; dims=dims)
function logsumexp(x; dims=1)
  m = maximum(x; dims=dims)
  m .+ log.(sum(exp.(x .- m); dims=dims))
end

# ---- losses (Flux's: agg reduces the per-sample losses, mean by default) -------------------

# The default eps of a loss: of the float type of x's elements (Float64 for integers).
epseltype(x) = eps(float(eltype(x)))
# y as the float type of x's elements (Flux's).
ofeltype(x, y) = convert(float(eltype(x)), y)
xlogx(x) = ifelse(iszero(x), zero(x), x * log(ifelse(iszero(x), one(x), x)))
# x log y, 0 at x = 0 (for any y but NaN), as LogExpFunctions'; its derivative in x is
# log y, at x = 0 too (ChainRules' rule): only where 0 * log y is not 0 (y = 0 or Inf)
# does a select give the 0, so that binarycrossentropy's gradient for hard labels is right.
function xlogy(x, y)
  zero_times_infinite = iszero(x) & ((y <= 0) | (y == Inf))
  safe_y = ifelse(zero_times_infinite, one(y), y)
  ifelse(zero_times_infinite, zero(x * y), x * log(safe_y) + zero(x * y))
end

mse(ŷ, y; agg=mean) = agg(abs2.(ŷ .- y))
mae(ŷ, y; agg=mean) = agg(abs.(ŷ .- y))
msle(ŷ, y; agg=mean, eps=epseltype(ŷ)) = agg(abs2.(log.((ŷ .+ eps) ./ (y .+ eps))))
function huber_loss(ŷ, y; agg=mean, delta=1)
  err = abs.(ŷ .- y)
  agg(ifelse.(err .< delta, 0.5 .* err .^ 2, delta .* (err .- 0.5 * delta)))
end
# One-hot (or probability) targets y, as Flux's; integer labels are the _labels losses below.
crossentropy(ŷ, y; dims=1, agg=mean, eps=epseltype(ŷ)) =
  agg(.-sum(xlogy.(check_targets(ŷ, y, "crossentropy"), ŷ .+ eps); dims=dims))
logitcrossentropy(ŷ, y; dims=1, agg=mean) =
  agg(.-sum(check_targets(ŷ, y, "logitcrossentropy") .* logsoftmax(ŷ; dims=dims); dims=dims))
binarycrossentropy(ŷ, y; agg=mean, eps=epseltype(ŷ)) =
  agg(.-xlogy.(y, ŷ .+ eps) .- xlogy.(1 .- y, 1 .- ŷ .+ eps))
logitbinarycrossentropy(ŷ, y; agg=mean) = agg((1 .- y) .* ŷ .- logσ.(ŷ))
function kldivergence(ŷ, y; dims=1, agg=mean, eps=epseltype(ŷ))
  agg(sum(xlogx.(y); dims=dims)) + crossentropy(ŷ, y; dims=dims, agg=agg, eps=eps)
end
poisson_loss(ŷ, y; agg=mean) = agg(ŷ .- xlogy.(y, ŷ))
hinge_loss(ŷ, y; agg=mean) = agg(max.(0, 1 .- ŷ .* y))
squared_hinge_loss(ŷ, y; agg=mean) = agg(abs2.(max.(0, 1 .- ŷ .* y)))
dice_coeff_loss(ŷ, y; smooth=1) =
  1 - (2 * sum(y .* ŷ) + smooth) / (sum(abs2.(y)) + sum(abs2.(ŷ)) + smooth)

# An integer label vector where Flux takes one-hot targets says what to use instead.
function check_targets(ŷ, y, name)
  if y isa AbstractArray && ndims(y) == 1 && ndims(ŷ) == 2 && eltype(y) == Int
    error(name, " takes one-hot targets of the scores' size, as Flux's (onehotbatch(labels, ",
          "1:", size(ŷ, 1), ")); for integer labels use ", name, "_labels(scores, labels)")
  end
  y
end

# The losses of scores (classes, batch) against integer labels (batch,) in 1:classes: the
# same as with onehotbatch(labels, 1:classes), without building the one-hot matrix.
function logitcrossentropy_labels(logits, labels; agg=mean)
  n = size(logits, 2)
  agg(.-Prim.gather(logsoftmax(logits; dims=1), reshape(labels, 1, n); dim=1))
end
function crossentropy_labels(probs, labels; agg=mean, eps=eps(eltype(probs)))
  n = size(probs, 2)
  agg(.-log.(Prim.gather(probs, reshape(labels, 1, n); dim=1) .+ eps))
end

# One-hot columns, as Flux's: onehotbatch(labels, classes)[i, j] is labels[j] == classes[i].
# An array of labels gives one more dim in front: (classes, size(labels)...).
onehotbatch(labels, classes) =
  reshape(collect(classes), :, ntuple(_ -> 1, ndims(labels))...) .==
  reshape(labels, 1, size(labels)...)
onehotbatch(labels::Union{Tuple, AbstractRange}, classes) = onehotbatch(collect(labels), classes)
onehot(label, classes) = collect(classes) .== label
# OneHotArrays' constructors: the index (or indices) and the number of classes.
OneHotVector(i::Integer, n::Integer) = onehot(i, 1:n)
OneHotMatrix(ix, n::Integer) = onehotbatch(ix, 1:n)
# The class of each column of scores: the label at its largest value (the first of ties).
function onecold(y, labels=1:size(y, 1))
  p = Prim.argmax(eltype(y) == Bool ? Int.(y) : y; dim=1)
  labels == 1:size(y, 1) ? p : collect(labels)[p]
end

# ---- initializers (Flux's: dims as the weight's size, Float32) ---------------------------------

function fans(dims)
  receptive = 1
  for i in 1:length(dims)-2
    receptive *= dims[i]
  end
  length(dims) == 1 && return (dims[1], dims[1])
  length(dims) == 2 ? (dims[2], dims[1]) : (receptive * dims[end-1], receptive * dims[end])
end
# Version numbers: v"1.7.2" in a program is VersionNumber(1, 7, 2) (no prerelease or build
# parts). VERSION is the Julia whose meaning the language follows.
struct VersionNumber
  major
  minor
  patch
end
function isless(a::VersionNumber, b::VersionNumber)
  a.major != b.major && return a.major < b.major
  a.minor != b.minor && return a.minor < b.minor
  a.patch < b.patch
end
<(a::VersionNumber, b::VersionNumber) = isless(a, b)
<=(a::VersionNumber, b::VersionNumber) = !isless(b, a)
>(a::VersionNumber, b::VersionNumber) = isless(b, a)
>=(a::VersionNumber, b::VersionNumber) = !isless(a, b)
const VERSION = v"1.9.0"

# Random number generators as objects (Random's AbstractRNG), taken first by rand, randn,
# randperm, shuffle and the initializers, and by Dropout's rng=. A seeded one
# (MersenneTwister(n), Xoshiro(n)) is a stream of its own: two of one seed draw the same
# numbers, and its draws leave the program's stream (Random.seed!(n)) where it was; Julia's
# exact sequences are not reproduced. default_rng() (a TaskLocalRNG) and generators made
# without a seed draw from the program's stream. In a traced function every draw is a
# random op of the tape, drawn anew by each run, as rand's.
abstract type AbstractRNG end
mutable struct MersenneTwister <: AbstractRNG
  seed
  draws
end
mutable struct Xoshiro <: AbstractRNG
  seed
  draws
end
MersenneTwister(seed=nothing) = MersenneTwister(seed, 0)
Xoshiro(seed=nothing) = Xoshiro(seed, 0)
struct TaskLocalRNG <: AbstractRNG end
default_rng() = TaskLocalRNG()
const GLOBAL_RNG = TaskLocalRNG()
seed!(rng::Union{MersenneTwister, Xoshiro}, seed::Integer) = (rng.seed = seed; rng.draws = 0; rng)
seed!(rng::TaskLocalRNG, seed::Integer) = (seed!(seed); rng)
copy(rng::Union{MersenneTwister, Xoshiro}) = typeof(rng)(rng.seed, rng.draws)
# f(args...; kw...) drawing from rng's stream.
function with_rng(f, rng::AbstractRNG, args...; kw...)
  (rng isa TaskLocalRNG || rng.seed === nothing) && return f(args...; kw...)
  saved = _random_stream(rng.seed, rng.draws)
  x = f(args...; kw...)
  rng.draws = _random_stream(saved...)[2]
  x
end
rand(rng::AbstractRNG, args...) = with_rng(rand, rng, args...)
randn(rng::AbstractRNG, args...) = with_rng(randn, rng, args...)
randperm(rng::AbstractRNG, n) = with_rng(randperm, rng, n)
# Flux's generator for an array's random numbers: here, the program's stream.
rng_from_array(x=nothing) = default_rng()
# rand!([rng,] A): A's elements drawn uniform in [0, 1), in place.
rand!(rng::AbstractRNG, A::AbstractArray) = (A .= rand(rng, eltype(A), size(A)...); A)
rand!(A::AbstractArray) = (A .= rand(eltype(A), size(A)...); A)

# Uniform in ±sqrt(6 / (fan_in + fan_out)), Glorot and Bengio (2010), as Flux's default.
function glorot_uniform(dims...)
  fan_in, fan_out = fans(dims)
  scale = sqrt(24f0 / (fan_in + fan_out))
  _scaled_rand(Float32, 0.5f0, scale, dims...)  # (rand(Float32, dims...) .- 0.5f0) .* scale
end
glorot_normal(dims...) = randn(Float32, dims...) .* sqrt(2f0 / sum(fans(dims)))
kaiming_uniform(dims...; gain=sqrt(2f0)) =
  _scaled_rand(Float32, 0.5f0, 2 * gain * sqrt(3f0 / fans(dims)[1]), dims...)
kaiming_normal(dims...; gain=sqrt(2f0)) = randn(Float32, dims...) .* (gain / sqrt(fans(dims)[1]))
zeros32(dims...) = zeros(Float32, dims...)
ones32(dims...) = ones(Float32, dims...)
# similar(x[, T][, dims]): an array like x, of T and those dims (zeros here; Julia leaves
# them undefined).
similar(x::AbstractArray) = zero(x)
similar(x::AbstractArray, ::Type{T}, dims::Tuple) where {T} = zeros(T, dims...)
similar(x::AbstractArray, ::Type{T}, dims::Integer...) where {T} =
  zeros(T, (isempty(dims) ? size(x) : dims)...)
similar(x::AbstractArray, dims::Tuple) = zeros(eltype(x), dims...)
rand32(dims...) = rand(Float32, dims...)
randn32(dims...) = randn(Float32, dims...)
glorot_uniform(rng::AbstractRNG, dims...) = with_rng(glorot_uniform, rng, dims...)
glorot_normal(rng::AbstractRNG, dims...) = with_rng(glorot_normal, rng, dims...)
kaiming_uniform(rng::AbstractRNG, dims...; kw...) = with_rng(kaiming_uniform, rng, dims...; kw...)
kaiming_normal(rng::AbstractRNG, dims...; kw...) = with_rng(kaiming_normal, rng, dims...; kw...)
rand32(rng::AbstractRNG, dims...) = with_rng(rand32, rng, dims...)
randn32(rng::AbstractRNG, dims...) = with_rng(randn32, rng, dims...)

# A layer's bias: bias=true makes zeros, false keeps none (as Flux, the field is false).
create_bias(w, bias::Bool, n) = bias ? zeros(eltype(w), n) : false
create_bias(w, bias::AbstractRange, n) = create_bias(w, collect(bias), n)
function create_bias(w, bias::AbstractArray, n)
  size(bias) == (n,) ||
    throw(DimensionMismatch("expected bias of size ($n,), got size $(size(bias))"))
  eltype(bias) == eltype(w) ? bias : eltype(w).(bias)
end

# ---- train and test mode ------------------------------------------------------------------

# trainmode!(m) and testmode!(m) set the mode of the layers that differ (Dropout,
# BatchNorm) throughout a model; an unset layer trains inside `gradient` only, as Flux's.
trainmode!(m, mode=true) = set_mode!(m, mode)
# Whether a layer with a mode (Dropout, BatchNorm) is in training mode: its `active`, or
# when unset, whether it runs inside `gradient` (Flux's rule).
isactive(m) = m.active === nothing ? within_gradient() : m.active
testmode!(m, mode=true) = set_mode!(m, !mode)
function set_mode!(m, mode)
  foreach(x -> set_mode!(x, mode), sublayers(m))
  m
end

# The layers a container holds, for the functions that walk a model (testmode!, reset!).
sublayers(m) = ()
sublayers(t::Tuple) = t
sublayers(t::NamedTuple) = values(t)

# ---- printing into a string: IO, IOBuffer, show, sprint -------------------------------------

# An IOBuffer collects the text print, println and show write into it; sprint(f, args...)
# runs f(io, args...) on one and returns the text. show(io, x) writes repr(x) where no method
# for x's type says otherwise (Flux's layers have theirs, prelude/layers.jl).
abstract type IO end
mutable struct IOBuffer <: IO
  text::String
end
IOBuffer() = IOBuffer("")
print(io::IOBuffer, xs...) = (io.text = io.text * string(xs...); nothing)
println(io::IOBuffer, xs...) = print(io, xs..., "\n")
show(io::IO, x) = print(io, repr(x))
show(x) = print(sprint(show, x))
function sprint(f, args...)
  io = IOBuffer()
  f(io, args...)
  io.text
end
show(io::IO, v::VersionNumber) = print(io, "v\"", v.major, ".", v.minor, ".", v.patch, "\"")

# ---- LinearAlgebra's Tridiagonal ------------------------------------------------------------

# Tridiagonal(dl, d, du), and Tridiagonal(A) of a square matrix's three diagonals: stored as
# the three vectors (so a gradient reaches only them), used as the dense matrix with zeros
# off the band (Matrix(T), a convert), which products, indexing and size read.
struct Tridiagonal <: AbstractMatrix
  dl
  d
  du
end
function Tridiagonal(A::AbstractMatrix)
  n = size(A, 1)
  size(A, 2) == n || throw(DimensionMismatch("Tridiagonal of a $(size(A)) matrix: it must be square"))
  Tridiagonal([A[i + 1, i] for i in 1:n-1], [A[i, i] for i in 1:n], [A[i, i + 1] for i in 1:n-1])
end
function dense_tridiagonal(T::Tridiagonal)
  n = length(T.d)
  z = zero(eltype(T.d))
  i = collect(1:n)
  j = reshape(i, 1, n)
  below = reshape(vcat(T.dl, [z]), 1, n)  # (j + 1, j): dl[j]
  above = vcat(T.du, [z])                 # (i, i + 1): du[i]
  ifelse.(i .== j, T.d, ifelse.(i .== j .+ 1, below, ifelse.(j .== i .+ 1, above, z)))
end
size(T::Tridiagonal) = (length(T.d), length(T.d))
size(T::Tridiagonal, k::Integer) = k <= 2 ? length(T.d) : 1
length(T::Tridiagonal) = length(T.d)^2
ndims(T::Tridiagonal) = 2
eltype(T::Tridiagonal) = eltype(T.d)
convert(::Type{<:AbstractArray}, T::Tridiagonal) = dense_tridiagonal(T)
getindex(T::Tridiagonal, i, j) = dense_tridiagonal(T)[i, j]
*(T::Tridiagonal, x) = dense_tridiagonal(T) * x
*(x, T::Tridiagonal) = x * dense_tridiagonal(T)
