# The standard prelude of ytape's model language: Flux-like layers, activations and losses,
# written in the language itself and loaded before every program. Layouts follow
# docs/primitives.md: images are WHCN, conv weights (kw, kh, cin, cout), Dense weights
# (out, in) as in Flux. Everything here traces down to primitives.

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

# ---- helpers ------------------------------------------------------------------------------

expand2(x::Integer) = (x, x)
expand2(x::Tuple) = x
expand_pad(p::Integer) = (p, p, p, p)
expand_pad(p::Tuple) = length(p) == 2 ? (p[1], p[1], p[2], p[2]) : p

# Uniform in ±sqrt(6 / (fan_in + fan_out)), Glorot and Bengio (2010), as Flux's default.
function glorot_uniform(dims...)
  receptive = 1
  for i in 1:length(dims)-2
    receptive *= dims[i]
  end
  fan_in = length(dims) == 2 ? dims[2] : receptive * dims[end-1]
  fan_out = length(dims) == 2 ? dims[1] : receptive * dims[end]
  scale = sqrt(24f0 / (fan_in + fan_out))
  (rand(Float32, dims...) .- 0.5f0) .* scale
end

flatten(x) = reshape(x, :, size(x, ndims(x)))

# ---- Base, Statistics and LinearAlgebra ----------------------------------------------------

|>(x, f) = f(x)
∘(f, g) = (xs...; kws...) -> f(g(xs...; kws...))
isnothing(x) = x === nothing
iszero(x) = x == zero(x)
vec(x) = reshape(x, :)
clamp(x, lo, hi) = min(max(x, lo), hi)
dot(a, b) = sum(a .* b)

# The p-norm of all elements (2 by default; 1 and Inf too).
function norm(x, p::Real=2)
  p == 2 && return sqrt(sum(abs2.(x)))
  p == 1 && return sum(abs.(x))
  p == Inf && return maximum(abs.(x))
  sum(abs.(x) .^ p)^(1 / p)
end

# The variance and standard deviation, of all elements or along dims, corrected (n - 1) by
# default, as in Statistics.
function var(x; dims=nothing, corrected::Bool=true)
  m = dims === nothing ? mean(x) : mean(x; dims=dims)
  n = length(x) ÷ length(m)
  squares = dims === nothing ? sum(abs2.(x .- m)) : sum(abs2.(x .- m); dims=dims)
  squares ./ (corrected ? n - 1 : n)
end
std(x; dims=nothing, corrected::Bool=true) = sqrt.(var(x; dims=dims, corrected=corrected))

# ---- activations (scalar functions: broadcast them, as relu.(x)) ----------------------------

leakyrelu(x, a=0.01f0) = max(a * x, x)
swish(x) = x * sigmoid(x)
# The unused side of each ifelse stays finite (expm1 of min(x, 0)), so that its zero
# gradient does not multiply an overflow into NaN.
elu(x, α=1) = ifelse(x > 0, x, α * expm1(min(x, 0)))
celu(x, α=1) = ifelse(x >= 0, x, α * expm1(min(x, 0) / α))
selu(x) = 1.0507009873554804 * ifelse(x > 0, x, 1.6732632423543772 * expm1(min(x, 0)))
# NNlib's gelu, the tanh approximation of x Φ(x).
gelu(x) = 0.5 * x * (1 + tanh(0.7978845608028654 * (x + 0.044715 * x^3)))
logσ(x) = -softplus(-x)
logsigmoid(x) = logσ(x)
relu6(x) = min(relu(x), 6)
hardtanh(x) = clamp(x, -1, 1)
hardσ(x) = clamp((x + 3) / 6, 0, 1)
hardsigmoid(x) = hardσ(x)
mish(x) = x * tanh(softplus(x))
tanhshrink(x) = x - tanh(x)
softsign(x) = x / (1 + abs(x))

softmax(x; dims=1) = Prim.softmax(x; dims=dims)
logsoftmax(x; dims=1) = Prim.log_softmax(x; dims=dims)
function logsumexp(x; dims=1)
  m = maximum(x; dims=dims)
  m .+ log.(sum(exp.(x .- m); dims=dims))
end

# ---- losses -------------------------------------------------------------------------------

# Mean cross-entropy of logits (classes, batch) against integer labels (batch,) in 1:classes.
function crossentropy(logits, labels)
  n = size(logits, 2)
  picked = Prim.gather(logsoftmax(logits; dims=1), reshape(labels, 1, n); dim=1)
  -sum(picked) / n
end
logitcrossentropy(logits, labels) = crossentropy(logits, labels)

mse(ŷ, y) = mean(abs2.(ŷ .- y))

# One-hot columns, as Flux's: onehotbatch(labels, classes)[i, j] is labels[j] == classes[i].
onehotbatch(labels, classes) = reshape(collect(classes), :, 1) .== reshape(labels, 1, :)
onehot(label, classes) = collect(classes) .== label
# The class of each column of scores: the label at its largest value (the first of ties).
function onecold(y, labels=1:size(y, 1))
  p = Prim.argmax(y; dim=1)
  labels == 1:size(y, 1) ? p : collect(labels)[p]
end

# ---- layers -------------------------------------------------------------------------------

struct Dense
  weight
  bias
  σ
end
Dense(weight::AbstractMatrix, bias) = Dense(weight, bias, identity)
Dense(nin::Integer, nout::Integer, σ=identity) =
  Dense(glorot_uniform(nout, nin), zeros(Float32, nout), σ)
Dense(p::Pair, σ=identity) = Dense(p.first, p.second, σ)
Dense(p::Tuple, σ=identity) = Dense(p[1], p[2], σ)
(d::Dense)(x) = d.σ.(d.weight * x .+ d.bias)

struct Conv
  weight
  bias
  σ
  stride
  pad
  dilation
  groups
end
function Conv(k::Tuple, ch, σ=identity; stride=1, pad=0, dilation=1, groups=1, bias=true)
  weight = glorot_uniform(k[1], k[2], ch[1] ÷ groups, ch[2])
  b = bias ? zeros(Float32, ch[2]) : nothing
  Conv(weight, b, σ, expand2(stride), expand_pad(pad), expand2(dilation), groups)
end
function (c::Conv)(x)
  y = Prim.conv2d(x, c.weight; stride=c.stride, pad=c.pad, dilation=c.dilation, groups=c.groups)
  if c.bias !== nothing
    y = y .+ reshape(c.bias, 1, 1, :, 1)
  end
  c.σ.(y)
end

# Training mode: normalizes with the statistics of the batch (eps = 1e-5).
struct BatchNorm
  weight
  bias
  σ
end
BatchNorm(channels::Integer, σ=identity) =
  BatchNorm(ones(Float32, channels), zeros(Float32, channels), σ)
(b::BatchNorm)(x) = b.σ.(Prim.batchnorm(x, b.weight, b.bias))

struct MaxPool
  window
  stride
  pad
end
MaxPool(k::Tuple; pad=0, stride=k) = MaxPool(k, expand2(stride), expand_pad(pad))
(m::MaxPool)(x) = Prim.max_pool2d(x; window=m.window, stride=m.stride, pad=m.pad)

struct MeanPool
  window
  stride
  pad
end
MeanPool(k::Tuple; pad=0, stride=k) = MeanPool(k, expand2(stride), expand_pad(pad))
(m::MeanPool)(x) = Prim.avg_pool2d(x; window=m.window, stride=m.stride, pad=m.pad)

struct GlobalMeanPool
end
(g::GlobalMeanPool)(x) = mean(x; dims=(1, 2))

struct Chain
  layers::Tuple
end
Chain(layers...) = Chain(layers)
(c::Chain)(x) = foldl((h, layer) -> layer(h), c.layers; init=x)

struct SkipConnection
  layers
  connection
end
(s::SkipConnection)(x) = s.connection(s.layers(x), x)

struct Parallel
  connection
  layers::Tuple
end
Parallel(connection, layers...) = Parallel(connection, layers)
(p::Parallel)(x) = p.connection(map(layer -> layer(x), p.layers)...)

# ---- Ref ---------------------------------------------------------------------------------

# Ref(x): a box holding one value, which r[] reads and r[] = v replaces.
mutable struct RefValue
  x
end
Ref(x) = RefValue(x)
getindex(r::RefValue) = r.x
function setindex!(r::RefValue, v)
  r.x = v
  r
end

# ---- argmax, argmin, findmax, findmin ------------------------------------------------------

# The index of the first largest (smallest) element. For arrays of more dims it is the
# linear index: Julia's CartesianIndex is not here.
argmax(x::AbstractArray) = Prim.argmax(vec(x); dim=1)[]
argmin(x::AbstractArray) = argmax(-x)
findmax(x::AbstractArray) = (maximum(x), argmax(x))
findmin(x::AbstractArray) = (minimum(x), argmin(x))

# ---- undef ---------------------------------------------------------------------------------

# `Vector{Float32}(undef, n)`: Julia leaves the contents unset; here they are zeros.
struct UndefInitializer
end
const undef = UndefInitializer()

# ---- Dict ----------------------------------------------------------------------------------

# Dict(k => v, ...), Dict(pairs), Dict{K, V}(): values by key. Keys compare with isequal
# (numbers, strings, symbols, tuples of them); iteration, keys and values follow the
# order in which keys were first set, where Julia's follows their hashes. The typed count
# keeps Dict(k1 => v1, k2 => v2, k3 => v3) from being taken for the implied constructor.
mutable struct Dict
  keys
  vals
  count::Int
end
Dict() = Dict([], [], 0)
function Dict(kvs...)
  d = Dict()
  # Dict(pairs...), or Dict(collection of pairs) such as a generator.
  for kv in (length(kvs) == 1 && !(kvs[1] isa Pair) ? kvs[1] : kvs)
    d[kv.first] = kv.second
  end
  d
end
function dict_slot(d::Dict, k)
  for i in 1:d.count
    isequal(d.keys[i], k) && return i
  end
  0
end
function getindex(d::Dict, k)
  i = dict_slot(d, k)
  i == 0 && error("KeyError: key ", repr(k), " not found")
  d.vals[i]
end
function setindex!(d::Dict, v, k)
  i = dict_slot(d, k)
  if i == 0
    push!(d.keys, k)
    push!(d.vals, v)
    d.count += 1
  else
    d.vals[i] = v
  end
  d
end
haskey(d::Dict, k) = dict_slot(d, k) != 0
get(d::Dict, k, default) = haskey(d, k) ? d[k] : default
function get!(d::Dict, k, default)
  haskey(d, k) || setindex!(d, default, k)
  d[k]
end
function delete!(d::Dict, k)
  i = dict_slot(d, k)
  if i != 0
    deleteat!(d.keys, i)
    deleteat!(d.vals, i)
    d.count -= 1
  end
  d
end
function pop!(d::Dict, k)
  v = d[k]
  delete!(d, k)
  v
end
keys(d::Dict) = copy(d.keys)
values(d::Dict) = copy(d.vals)
length(d::Dict) = d.count
isempty(d::Dict) = d.count == 0
iterate(d::Dict, i=1) = i > d.count ? nothing : (d.keys[i] => d.vals[i], i + 1)
pairs(d::Dict) = [d.keys[i] => d.vals[i] for i in 1:d.count]
function merge(a::Dict, b::Dict)
  d = Dict()
  for (k, v) in a
    d[k] = v
  end
  for (k, v) in b
    d[k] = v
  end
  d
end
