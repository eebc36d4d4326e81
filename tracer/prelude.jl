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
iterate(t::Tuple, i=1) = i > length(t) ? nothing : (t[i], i + 1)
iterate(x::AbstractArray, i=1) = i > length(x) ? nothing : (x[i], i + 1)

# ---- helpers ------------------------------------------------------------------------------


flatten(x) = reshape(x, :, size(x, ndims(x)))

# ---- Base, Statistics and LinearAlgebra ----------------------------------------------------

|>(x, f) = f(x)
∘(f, g) = (xs...; kws...) -> f(g(xs...; kws...))
isnothing(x) = x === nothing
iszero(x) = x == zero(x)
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
xlogx(x) = ifelse(iszero(x), zero(x), x * log(ifelse(iszero(x), one(x), x)))
xlogy(x, y) = ifelse(iszero(x), zero(x * y), x * log(ifelse(iszero(x), one(y), y)))

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
# Uniform in ±sqrt(6 / (fan_in + fan_out)), Glorot and Bengio (2010), as Flux's default.
function glorot_uniform(dims...)
  fan_in, fan_out = fans(dims)
  scale = sqrt(24f0 / (fan_in + fan_out))
  (rand(Float32, dims...) .- 0.5f0) .* scale
end
glorot_normal(dims...) = randn(Float32, dims...) .* sqrt(2f0 / sum(fans(dims)))
kaiming_uniform(dims...; gain=sqrt(2f0)) =
  (rand(Float32, dims...) .- 0.5f0) .* (2 * gain * sqrt(3f0 / fans(dims)[1]))
kaiming_normal(dims...; gain=sqrt(2f0)) = randn(Float32, dims...) .* (gain / sqrt(fans(dims)[1]))
zeros32(dims...) = zeros(Float32, dims...)
ones32(dims...) = ones(Float32, dims...)
rand32(dims...) = rand(Float32, dims...)
randn32(dims...) = randn(Float32, dims...)

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

# ---- layers -------------------------------------------------------------------------------

# Dense(in => out, σ; bias=true, init=glorot_uniform) or Dense(W, bias=true, σ): y = σ.(W*x
# .+ b), over the first dim of an input of any rank.
struct Dense
  weight::AbstractMatrix
  bias
  σ
end
Dense(p::Pair, σ=identity; bias=true, init=glorot_uniform) =
  Dense(init(p.second, p.first), bias, σ)
Dense(p::Tuple, σ=identity; kw...) = Dense(p[1] => p[2], σ; kw...)
Dense(nin::Integer, nout::Integer, σ=identity; kw...) = Dense(nin => nout, σ; kw...)
Dense(w::AbstractMatrix, bias::Bool=true, σ=identity) =
  new_instance(Dense, w, create_bias(w, bias, size(w, 1)), σ)
Dense(w::AbstractMatrix, bias::AbstractArray, σ=identity) =
  new_instance(Dense, w, create_bias(w, bias, size(w, 1)), σ)
# As Flux's _match_eltype: an input of another element type (Float64 data, Bool one-hot
# columns) is converted to the weight's.
match_eltype(w, x::AbstractArray) = eltype(x) == eltype(w) ? x : eltype(w).(x)
match_eltype(w, x) = x
function (d::Dense)(x::AbstractArray)
  ndims(x) > 2 && return reshape(d(reshape(x, size(x, 1), :)), :, size(x)[2:end]...)
  y = d.weight * match_eltype(d.weight, x)
  d.σ.(d.bias === false ? y : y .+ d.bias)
end

# SamePad(): pads so that a stride-1 convolution keeps the input's size.
struct SamePad
end
# Stride, dilation and padding of n spatial dims, as Flux stores them: n-tuples, and 2n
# pads (before and after, per dim); SamePad pads d * (k - 1) in all, the odd one after.
expand_n(n, x::Integer) = ntuple(_ -> x, n)
expand_n(n, x::Tuple) = x
expand_pad_n(n, p::Integer) = ntuple(_ -> p, 2n)
expand_pad_n(n, p::Tuple) = length(p) == n ? ntuple(i -> p[(i - 1) ÷ 2 + 1], 2n) : p
function conv_pad(pad, k, dilation)
  pad isa SamePad || return expand_pad_n(length(k), pad)
  t = ntuple(i -> dilation[i] * (k[i] - 1), length(k))
  ntuple(i -> isodd(i) ? cld(t[(i + 1) ÷ 2], 2) : fld(t[i ÷ 2], 2), 2 * length(k))
end

# Conv((k...), in => out, σ; stride, pad, dilation, groups, bias, init) or Conv(w, bias=true,
# σ; ...): weights (k..., in ÷ groups, out), images WHCN, 1-d over (W, C, N), 3-d over
# (W, H, D, C, N). As Flux's (NNlib's conv, flipped=false) Conv is a true convolution: it
# flips its kernel. CrossCor, the same layer without the flip, is what PyTorch and ONNX
# call a convolution.
struct Conv
  weight
  bias
  σ
  stride
  pad
  dilation
  groups
end
struct CrossCor
  weight
  bias
  σ
  stride
  pad
  dilation
  groups
end
Conv(k::Tuple, ch, σ=identity; kw...) = conv_layer(Conv, k, ch, σ; kw...)
Conv(w::AbstractArray, bias=true, σ=identity; kw...) = conv_layer(Conv, w, bias, σ; kw...)
CrossCor(k::Tuple, ch, σ=identity; kw...) = conv_layer(CrossCor, k, ch, σ; kw...)
CrossCor(w::AbstractArray, bias=true, σ=identity; kw...) = conv_layer(CrossCor, w, bias, σ; kw...)
# One filter group per input channel, as Flux's.
DepthwiseConv(k::Tuple, ch, σ=identity; kw...) = Conv(k, ch, σ; groups=ch[1], kw...)
# From a weight (k..., multiplier, in), Flux 0.13's layout: the Conv of weight (k..., 1,
# multiplier * in) and in groups.
DepthwiseConv(w::AbstractArray, bias=true, σ=identity; kw...) =
  Conv(reshape(w, size(w)[1:end-2]..., 1, :), bias, σ; groups=size(w, ndims(w)), kw...)
function conv_weight(k, ch, groups, init)
  @assert ch[1] % groups == 0 "Input channel dimension must be divisible by groups."
  @assert ch[2] % groups == 0 "Output channel dimension must be divisible by groups."
  w = init(k..., ch[1] ÷ groups, ch[2])
  size(w) == (k..., ch[1] ÷ groups, ch[2]) || throw(DimensionMismatch(
    "the initializer made a weight of size $(size(w)), expected $((k..., ch[1] ÷ groups, ch[2]))"))
  w
end
function conv_layer(T, k::Tuple, ch, σ; stride=1, pad=0, dilation=1, groups=1, bias=true,
                    init=glorot_uniform)
  w = conv_weight(k, ch, groups, init)
  conv_layer(T, w, bias, σ; stride=stride, pad=pad, dilation=dilation, groups=groups)
end
function conv_layer(T, w::AbstractArray, bias, σ; stride=1, pad=0, dilation=1, groups=1)
  n = ndims(w) - 2
  d = expand_n(n, dilation)
  new_instance(T, w, create_bias(w, bias, size(w, ndims(w))), σ, expand_n(n, stride),
               conv_pad(pad, size(w)[1:n], d), d, groups)
end
(c::Conv)(x) = conv_apply(c, x, true)
(c::CrossCor)(x) = conv_apply(c, x, false)
# Flux's internals that its tests call: the channels a layer takes and gives.
_channels_in(c::Union{Conv, CrossCor}) = size(c.weight, ndims(c.weight) - 1) * c.groups
_channels_out(c::Union{Conv, CrossCor}) = size(c.weight, ndims(c.weight))

# A convolution's geometry as the primitives take it: a 1-d one is the 2-d one with
# H = 1 (its weight (k, 1, cin, cout), input (W, 1, C, N)); a dilation does nothing along a
# kernel dim of size 1, so NNlib's 0 there is 1. A 3-d one is composed of 2-d ones
# (Composite.conv3d, docs/language.md).
function conv_geometry(c)
  n = ndims(c.weight) - 2
  k = size(c.weight)
  d = ntuple(i -> k[i] == 1 ? 1 : c.dilation[i], n)
  n >= 2 && return (c.stride, c.pad, d)
  ((c.stride[1], 1), (c.pad[1], c.pad[2], 0, 0), (d[1], 1))
end
as_2d(w) = ndims(w) == 3 ? reshape(w, size(w, 1), 1, size(w, 2), size(w, 3)) : w
function from_2d(y, x)
  ndims(x) == 3 ? reshape(y, size(y, 1), size(y, 3), size(y, 4)) : y
end
spatial_dims(x) = ntuple(identity, ndims(x) - 2)
# x padded by p (before and after each spatial dim, in order) with `value`.
pad_spatial(x, p, value=0) = Prim.pad(x; lo=(ntuple(i -> p[2i - 1], ndims(x) - 2)..., 0, 0),
                                      hi=(ntuple(i -> p[2i], ndims(x) - 2)..., 0, 0),
                                      interior=ntuple(_ -> 0, ndims(x)), value=value)
# b as a (1, ..., C, 1) array, to add per channel of y.
channel_bias(b, y) = reshape(b, ntuple(_ -> 1, ndims(y) - 2)..., :, 1)
spatial_conv(x, w; kw...) =
  ndims(x) == 5 ? Composite.conv3d(x, w; kw...) : Prim.conv2d(x, w; kw...)
spatial_conv_transpose(x, w; kw...) = ndims(x) == 5 ?
  Composite.conv3d_backward_input(x, w; kw...) : Prim.conv2d_backward_input(x, w; kw...)
function check_channels(layer, x, c)
  size(x, ndims(x) - 1) == c || throw(DimensionMismatch(
    "$(layer) takes $c channels (dim $(ndims(x) - 1) of the input), got an input of size $(size(x))"))
end
function conv_apply(c, x, flip::Bool)
  ndims(x) == ndims(c.weight) || throw(DimensionMismatch(
    "a convolution of weight size $(size(c.weight)) takes inputs of $(ndims(c.weight)) dims, got size $(size(x))"))
  check_channels(typeof(c), x, _channels_in(c))
  s, p, d = conv_geometry(c)
  w = as_2d(c.weight)
  w = flip ? reverse(w; dims=spatial_dims(w)) : w
  y = spatial_conv(as_2d(match_eltype(c.weight, x)), w; stride=s, pad=p, dilation=d,
                   groups=c.groups)
  y = c.bias === false ? y : y .+ channel_bias(c.bias, y)
  from_2d(c.σ.(y), x)
end

# ConvTranspose((k...), in => out, σ; stride, pad, dilation, groups, bias, init, outpad):
# the transpose (gradient with respect to its input) of the Conv whose weight it holds,
# (k..., out ÷ groups, in), flipping as that Conv does; along each dim the output is
# (W - 1) * stride - pads + dilation * (k - 1) + 1 + outpad wide.
struct ConvTranspose
  weight
  bias
  σ
  stride
  pad
  outpad
  dilation
  groups
end
function ConvTranspose(k::Tuple, ch, σ=identity; stride=1, pad=0, outpad=0, dilation=1,
                       groups=1, bias=true, init=glorot_uniform)
  w = conv_weight(k, ch[2] => ch[1], groups, init)
  ConvTranspose(w, bias, σ; stride=stride, pad=pad, outpad=outpad, dilation=dilation,
                groups=groups)
end
function ConvTranspose(w::AbstractArray, bias=true, σ=identity; stride=1, pad=0, outpad=0,
                       dilation=1, groups=1)
  n = ndims(w) - 2
  s, d = expand_n(n, stride), expand_n(n, dilation)
  # SamePad makes the output stride times the input, as Flux's.
  p = conv_pad(pad, ntuple(i -> size(w, i) - s[i] + 1, n), d)
  new_instance(ConvTranspose, w, create_bias(w, bias, size(w, n + 1) * groups), σ, s, p,
               expand_n(n, outpad), d, groups)
end
_channels_in(c::ConvTranspose) = size(c.weight, ndims(c.weight))
_channels_out(c::ConvTranspose) = size(c.weight, ndims(c.weight) - 1) * c.groups
function (c::ConvTranspose)(x)
  ndims(x) == ndims(c.weight) || throw(DimensionMismatch(
    "a ConvTranspose of weight size $(size(c.weight)) takes inputs of $(ndims(c.weight)) dims, got size $(size(x))"))
  check_channels(ConvTranspose, x, _channels_in(c))
  s, p, d = conv_geometry(c)
  w = reverse(as_2d(c.weight); dims=spatial_dims(c.weight))
  x2 = as_2d(match_eltype(c.weight, x))
  k = size(w)
  n = ndims(w) - 2
  o = ndims(x) == 3 ? (c.outpad[1], 0) : c.outpad
  # SamePad at a stride above the kernel pads by less than 0 (Flux's): the transpose of a
  # convolution of a cropped input, zero where the crop cut.
  crop = map(q -> max(-q, 0), p)
  p = map(q -> max(q, 0), p)
  out = (ntuple(i -> (size(x2, i) - 1) * s[i] - p[2i - 1] - p[2i] + d[i] * (k[i] - 1) + 1 + o[i],
                n)..., k[n + 1] * c.groups, size(x2, n + 2))
  y = spatial_conv_transpose(x2, w; shape=out, stride=s, pad=p, dilation=d, groups=c.groups)
  y = sum(crop) > 0 ? pad_spatial(y, crop) : y
  from_2d(c.σ.(c.bias === false ? y : y .+ channel_bias(c.bias, y)), x)
end

# BatchNorm(channels, σ; track_stats=true, affine=true, eps=1e-5, momentum=0.1f0, active):
# Flux's layer over the second-to-last dim (channels of WHCN images, features of a
# matrix). Fields keep torchvision's names for the scale and bias (weight, bias), so that
# weights exchange by name; σ is the activation (Flux's λ). In training mode it normalizes
# with the batch's statistics and, with track_stats, moves the running statistics μ and σ²
# towards them (σ² with the batch's corrected variance, as Flux); in test mode it uses
# the running ones. Mode: `active`, or when unset (nothing) training inside `gradient` only,
# as Flux's. track_stats=false keeps no running statistics and always uses the batch's.
# ϵ (the field eps) and momentum are kept as Val(x): a float field would be a tape input, and ϵ must be a
# static attribute of the batchnorm primitive (static_value(b.eps) reads them).
mutable struct BatchNorm
  weight
  bias
  σ
  μ
  σ²
  eps
  momentum
  track_stats
  active
end
# Flux's names for BatchNorm's fields: β and γ (bias and weight), ϵ (the number), λ.
function getproperty(b::BatchNorm, name::Symbol)
  name === :β && return b.bias
  name === :γ && return b.weight
  name === :ϵ && return static_value(b.eps)
  name === :λ && return b.σ
  error("BatchNorm has no field '$name'; its fields are weight (γ), bias (β), σ (λ), μ, σ², ",
        "eps (ϵ), momentum, track_stats, active")
end
function BatchNorm(channels::Integer, σ=identity; initβ=zeros32, initγ=ones32, affine=true,
                   track_stats=true, active=nothing, eps=1e-5, momentum=0.1f0)
  BatchNorm(affine ? initγ(channels) : false, affine ? initβ(channels) : false, σ,
            track_stats ? zeros32(channels) : nothing, track_stats ? ones32(channels) : nothing,
            Val(eps), Val(momentum), track_stats, active)
end
static_value(::Val{x}) where x = x
static_value(x) = x
function (b::BatchNorm)(x)
  # Parameters take the input's element type, as Flux's promotion gives (Float64 data).
  T = eltype(x)
  c = size(x, ndims(x) - 1)
  n = b.weight !== false ? length(b.weight) : b.μ !== nothing ? length(b.μ) : c
  check_channels(BatchNorm, x, n)
  w = b.weight === false ? ones(T, c) : T.(b.weight)
  β = b.bias === false ? zeros(T, c) : T.(b.bias)
  if b.track_stats && !isactive(b)
    shape = ntuple(i -> i == ndims(x) - 1 ? c : 1, ndims(x))
    inv = reshape(w ./ sqrt.(T.(b.σ²) .+ T(static_value(b.eps))), shape)
    return b.σ.((x .- reshape(T.(b.μ), shape)) .* inv .+ reshape(β, shape))
  end
  ϵ = Float64(static_value(b.eps))
  b.track_stats || return b.σ.(Prim.batchnorm(x, w, β; eps=ϵ))
  # The batch's statistics come with the normalization: invstd = 1 / sqrt(var + ϵ).
  y, μ, invstd = Prim.batchnorm_with_stats(x, w, β; eps=ϵ)
  track_stats!(b, μ, invstd, ϵ, length(x) ÷ c)
  b.σ.(y)
end
function track_stats!(b::BatchNorm, μ, invstd, ϵ, n)
  T = eltype(b.μ)
  σ² = T.((1 ./ invstd .^ 2 .- ϵ) .* (n / (n - 1)))  # corrected, as Flux's
  μ = T.(μ)
  m = T(static_value(b.momentum))
  b.μ = (1 - m) .* b.μ .+ m .* μ
  b.σ² = (1 - m) .* b.σ² .+ m .* σ²
  b
end

# LayerNorm(size, λ; affine=true, eps=1f-5): normalizes over the first length(size) dims,
# then scales and shifts by arrays of that size.
struct LayerNorm
  λ
  scale
  bias
  ϵ
  dims
end
# LayerNorm(2, 3), LayerNorm(2, 3, tanh): sizes as arguments, as Flux's.
LayerNorm(s1::Integer, s2::Integer; kw...) = LayerNorm((s1, s2); kw...)
function LayerNorm(s1::Integer, s2::Integer, s3, rest...; kw...)
  all = (s1, s2, s3, rest...)
  all[end] isa Integer ? LayerNorm(all; kw...) : LayerNorm(all[1:end - 1], all[end]; kw...)
end
function LayerNorm(size, λ=identity; affine=true, eps=1f-5)
  sz = size isa Integer ? (size,) : size
  LayerNorm(λ, affine ? ones(Float32, sz...) : false, affine ? zeros(Float32, sz...) : false, eps,
            ntuple(i -> i, length(sz)))
end
function (l::LayerNorm)(x)
  μ = mean(x; dims=l.dims)
  y = (x .- μ) ./ sqrt.(mean(abs2.(x .- μ); dims=l.dims) .+ l.ϵ)
  l.λ.(l.scale === false ? y : y .* l.scale .+ l.bias)
end

# Dropout(p; dims=:): in training mode zeroes each element with probability p (a random op
# of the tape, drawn anew by every run) and scales the rest by 1/(1-p); identity in test
# mode. dims=d drops whole slices along the other dims.
mutable struct Dropout
  p
  dims
  active
end
Dropout(p; dims=:) = Dropout(p, dims, nothing)
# Flux.dropout(x, p; dims=:, active=true): the function (NNlib's dropout), applied when active.
dropout(x, p; dims=:, active::Bool=true) = active ? Dropout(p, dims, true)(x) : x
function (d::Dropout)(x)
  # No test of p == 0: p is a tape input when the layer is, and rand .>= 0 keeps all.
  isactive(d) || return x
  s = d.dims === (:) ? size(x) : ntuple(i -> i in d.dims ? size(x, i) : 1, ndims(x))
  # p = 1 keeps nothing, as NNlib's: the scale stays finite (1 - p at least floatmin), so
  # that the all-false mask gives zeros, not NaN.
  T = eltype(x)
  x .* ((rand(T, s...) .>= d.p) .* (1 / max(convert(T, 1 - d.p), floatmin(T))))
end

# Embedding(in => out): column k of the weight (out, in) for label k.
struct Embedding
  weight
end
Embedding(p::Pair; init=randn32) = Embedding(init(p.second, p.first))
(e::Embedding)(x::Integer) = e.weight[:, x]
(e::Embedding)(x::AbstractArray) = eltype(x) == Bool ?
  reshape(e.weight * reshape(x, size(x, 1), :), :, size(x)[2:end]...) :
  reshape(e.weight[:, vec(x)], :, size(x)...)

# EmbeddingBag(in => out, reduction=mean): each bag of labels is the reduction (mean, sum,
# maximum, ...) of its columns of the weight: a vector of labels is one bag; a matrix, a
# vector of vectors or (inputs, offsets), PyTorch's form, one bag per column; a one-hot
# (Bool) matrix is one bag, as Flux's.
struct EmbeddingBag
  weight
  reduction
end
EmbeddingBag(p::Pair, reduction=mean; init=randn32) =
  EmbeddingBag(init(p.second, p.first), reduction)
EmbeddingBag(weight::AbstractMatrix) = EmbeddingBag(weight, mean)
(m::EmbeddingBag)(i::Integer) = error("EmbeddingBag expects an array of indices, not just one")
function (m::EmbeddingBag)(x::AbstractVector)
  eltype(x) == Any && return reduce(hcat, [m(b) for b in x])  # a vector of bags
  eltype(x) == Bool && error("EmbeddingBag is not defined for a one-hot vector")
  vec(m.reduction(Embedding(m.weight)(x); dims=2))
end
(m::EmbeddingBag)(x::AbstractMatrix) = eltype(x) == Bool ?
  vec(m.reduction(Embedding(m.weight)(x); dims=2)) :
  reduce(hcat, [m(x[:, j]) for j in 1:size(x, 2)])
(m::EmbeddingBag)(inputs::AbstractVector, offsets::AbstractVector) = m(_splitat(inputs, offsets))
# The bags of `data` that start at each of `offsets` (1-based, increasing, the first 1).
function _splitat(data::AbstractVector, offsets::AbstractVector)
  offsets[1] == 1 || throw(ArgumentError("the first offset must be 1, got $(offsets[1])"))
  all(offsets[2:end] .> offsets[1:end-1]) ||
    throw(ArgumentError("offsets must increase, with no repeats: $offsets"))
  offsets[end] <= length(data) ||
    throw(ArgumentError("the last offset, $(offsets[end]), is past the data's end"))
  ends = [offsets[2:end] .- 1; length(data)]
  Any[data[offsets[i]:ends[i]] for i in 1:length(offsets)]
end

# MaxPool((k...); pad=0, stride=k) and MeanPool, over 1, 2 or 3 spatial dims (W, C, N,
# W, H, C, N or W, H, D, C, N; 3-d ones composed of 2-d ones, Composite.max_pool3d);
# pad=SamePad() pads k - 1 in all, as Flux's. NNlib's maxpool(x, PoolDims(x, k; stride,
# padding)) and meanpool the same.
struct MaxPool
  window
  stride
  pad
end
struct MeanPool
  window
  stride
  pad
end
struct PoolDims
  window
  stride
  pad
end
function PoolDims(x::AbstractArray, k; stride=k, padding=0, dilation=1)
  n = ndims(x) - 2
  kk = expand_n(n, k)
  PoolDims(kk, expand_n(n, stride), conv_pad(padding, kk, expand_n(n, 1)))
end
MaxPool(k::Tuple; pad=0, stride=k) =
  MaxPool(k, expand_n(length(k), stride), conv_pad(pad, k, expand_n(length(k), 1)))
MeanPool(k::Tuple; pad=0, stride=k) =
  MeanPool(k, expand_n(length(k), stride), conv_pad(pad, k, expand_n(length(k), 1)))
(m::MaxPool)(x) = pool_apply(:max, x, m.window, m.stride, m.pad)
(m::MeanPool)(x) = pool_apply(:mean, x, m.window, m.stride, m.pad)
maxpool(x, p::PoolDims) = pool_apply(:max, x, p.window, p.stride, p.pad)
meanpool(x, p::PoolDims) = pool_apply(:mean, x, p.window, p.stride, p.pad)
maxpool(x, k::Tuple; pad=0, stride=k) = MaxPool(k; pad=pad, stride=stride)(x)
meanpool(x, k::Tuple; pad=0, stride=k) = MeanPool(k; pad=pad, stride=stride)(x)
pool2d(kind, x; window, stride, pad) = kind === :max ?
  Prim.max_pool2d(x; window=window, stride=stride, pad=pad) :
  Prim.avg_pool2d(x; window=window, stride=stride, pad=pad)
# Windows of only padding, which the primitives refuse, are NNlib's: x is padded
# explicitly, with -floatmax (where NNlib's max starts, nextfloat(-Inf)) or 0, and pooled
# unpadded, which gives NNlib's values and gradients everywhere.
function only_padding(x, k, s, p)
  for i in 1:length(k)
    lo, n = p[2i - 1], size(x, i)
    out = (n + lo + p[2i] - k[i]) ÷ s[i] + 1
    out >= 1 && (lo >= k[i] || (out - 1) * s[i] >= lo + n) && return true
  end
  false
end
pad_explicitly(kind, x, p) = pad_spatial(x, p, kind === :max ? -floatmax(eltype(x)) : 0)
function pool_apply(kind, x, k, s, p)
  length(k) == ndims(x) - 2 || throw(DimensionMismatch(
    "a pooling window of $(length(k)) dims takes an input of $(length(k) + 2) dims, got $(size(x))"))
  if only_padding(x, k, s, p)
    return pool_apply(kind, pad_explicitly(kind, x, p), k, s, ntuple(_ -> 0, length(p)))
  end
  length(k) == 3 && return kind === :max ? Composite.max_pool3d(x; window=k, stride=s, pad=p) :
                           Composite.avg_pool3d(x; window=k, stride=s, pad=p)
  length(k) == 2 && return pool2d(kind, x; window=k, stride=s, pad=p)
  y = pool2d(kind, reshape(x, size(x, 1), 1, size(x, 2), size(x, 3)); window=(k[1], 1),
             stride=(s[1], 1), pad=(p[1], p[2], 0, 0))
  reshape(y, size(y, 1), size(y, 3), size(y, 4))
end

struct GlobalMeanPool
end
(g::GlobalMeanPool)(x) = mean(x; dims=spatial_dims(x))
struct GlobalMaxPool
end
(g::GlobalMaxPool)(x) = maximum(x; dims=spatial_dims(x))

# AdaptiveMeanPool(out) and AdaptiveMaxPool(out): the window and stride that give an
# output of size out (w, h), as Flux's.
struct AdaptiveMeanPool
  out
end
struct AdaptiveMaxPool
  out
end
function adaptive_window(x, out)
  stride = (size(x, 1) ÷ out[1], size(x, 2) ÷ out[2])
  ((size(x, 1) - (out[1] - 1) * stride[1], size(x, 2) - (out[2] - 1) * stride[2]), stride)
end
function (a::AdaptiveMeanPool)(x)
  k, s = adaptive_window(x, a.out)
  Prim.avg_pool2d(x; window=k, stride=s)
end
function (a::AdaptiveMaxPool)(x)
  k, s = adaptive_window(x, a.out)
  Prim.max_pool2d(x; window=k, stride=s)
end

# Chain(layers...) or, with names, Chain(enc = ..., dec = ...): c[:enc], c.layers.enc.
struct Chain
  layers::Tuple
end
Chain(layers...) = Chain(layers)
# Chain([layer1, layer2]): the layers in a vector, as Flux's.
Chain(layers::AbstractVector) = new_instance(Chain, layers)
function Chain(; layers...)
  :layers in keys(layers) && throw(ArgumentError("a Chain cannot have a layer named `layers`"))
  new_instance(Chain, layers)
end
getindex(c::Chain, name::Symbol) = c.layers[name]
(c::Chain)(x) = foldl((h, layer) -> layer(h), c.layers; init=x)
sublayers(c::Chain) = c.layers
getindex(c::Chain, i::Integer) = c.layers[i]
# A range of a named Chain keeps the names, as Flux's.
getindex(c::Chain, r::AbstractRange) = c.layers isa NamedTuple ?
  Chain(; [k => c.layers[k] for k in keys(c.layers)[r]]...) : Chain(c.layers[r]...)
length(c::Chain) = length(c.layers)

struct SkipConnection
  layers
  connection
end
(s::SkipConnection)(x) = s.connection(s.layers(x), x)
sublayers(s::SkipConnection) = (s.layers,)

# Parallel(connection, layers...) and Parallel(connection; name = layer, ...): each layer
# on the one input, layer i on input i, or the one layer on each input; the connection
# is called once, on the layers' outputs.
struct Parallel
  connection
  layers::Tuple
end
Parallel(connection, layers...) = Parallel(connection, layers)
function Parallel(connection; layers...)
  for reserved in (:layers, :connection)
    reserved in keys(layers) &&
      throw(ArgumentError("a Parallel cannot have a layer named `$reserved`"))
  end
  new_instance(Parallel, connection, layers)
end
sublayers(p::Parallel) = p.layers
getindex(p::Parallel, i::Integer) = p.layers[i]
getindex(p::Parallel, name::Symbol) = p.layers[name]
getindex(p::Parallel, r::AbstractRange) = p.layers isa NamedTuple ?
  Parallel(p.connection; [k => p.layers[k] for k in keys(p.layers)[r]]...) :
  Parallel(p.connection, p.layers[r]...)
function (p::Parallel)(xs...)
  length(xs) == 1 && xs[1] isa Tuple && return p(xs[1]...)
  layers = Tuple(p.layers)
  length(xs) == 1 && return p.connection(map(layer -> layer(xs[1]), layers)...)
  length(layers) == 1 && return p.connection(map(layers[1], xs)...)
  if length(xs) != length(layers)
    throw(ArgumentError("Parallel with $(length(layers)) sub-layers can take one input or " *
                        "$(length(layers)) inputs, but got $(length(xs)) inputs"))
  end
  p.connection(map((layer, x) -> layer(x), layers, xs)...)
end

# PairwiseFusion(connection, layers...): y1 = layer1(x1), then each
# yi = layeri(connection(y(i-1), xi)); the outputs (y1, ..., yN). One input is every xi.
struct PairwiseFusion
  connection
  layers::Tuple
end
PairwiseFusion(connection, layers...) = PairwiseFusion(connection, layers)
sublayers(p::PairwiseFusion) = p.layers
(p::PairwiseFusion)(xs...) = p(xs)
function (p::PairwiseFusion)(x)
  n = length(p.layers)
  xs = x isa Tuple ? x : ntuple(_ -> x, n)
  length(xs) == 1 && n > 1 && (xs = ntuple(_ -> xs[1], n))
  length(xs) == n || throw(ArgumentError(
    "PairwiseFusion with $n sub-layers takes one input or $n inputs, but got $(length(xs))"))
  outs = Any[p.layers[1](xs[1])]
  for i in 2:n
    push!(outs, p.layers[i](p.connection(outs[end], xs[i])))
  end
  Tuple(outs)
end

# ---- recurrent layers (Flux 0.14's: a cell, made stateful by Recur) ---------------------------

# Recur(cell): m(x) runs h, y = cell(h, x) and keeps h as its state; reset!(m) sets the
# state back to the cell's state0 (for a whole model too). The state is a field of a
# mutable struct: it changes step by step while tracing, and a model that existed before
# the trace gets it back when the trace ends.
mutable struct Recur
  cell
  state
end
Recur(cell) = Recur(cell, cell.state0)
function (m::Recur)(x)
  # A sequence (features, batch, time): each step in turn, outputs stacked along time.
  x isa AbstractArray && ndims(x) == 3 && return recur_sequence(m, x)
  m.state, y = m.cell(m.state, x)
  y
end
function recur_sequence(m, x)
  ys = [m(x[:, :, t]) for t in 1:size(x, 3)]
  reshape(reduce(hcat, ys), size(ys[1])..., size(x, 3))
end
sublayers(r::Recur) = (r.cell,)
function reset!(m::Recur)
  m.state = m.cell.state0
  nothing
end
function reset!(m)
  foreach(reset!, sublayers(m))
  nothing
end

# Rows (n-1)h+1 : nh, gate n of a stacked weight or its product.
gate(x::AbstractVector, h, n) = x[(n - 1) * h + 1:n * h]
gate(x::AbstractMatrix, h, n) = x[(n - 1) * h + 1:n * h, :]
reshape_cell_output(h, x) = reshape(h, :, size(x)[2:end]...)

# RNN(in => out, σ=tanh): h = σ.(Wi x .+ Wh h .+ b).
struct RNNCell
  σ
  Wi
  Wh
  b
  state0
end
RNNCell(p::Pair, σ=tanh; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  RNNCell(σ, init(p.second, p.first), init(p.second, p.second), initb(p.second),
          init_state(p.second, 1))
# Inputs of another element type are converted to the weights', as Flux 0.14's cells do.
function (m::RNNCell)(h, x)
  x = match_eltype(m.Wi, x)
  h = m.σ.(m.Wi * x .+ m.Wh * h .+ m.b)
  h, reshape_cell_output(h, x)
end
RNN(a...; ka...) = Recur(RNNCell(a...; ka...))

# LSTM(in => out): gates input, forget, cell, output stacked in Wi (4out, in), Wh (4out,
# out) and b, whose forget gate starts at 1; the state is (h, c).
struct LSTMCell
  Wi
  Wh
  b
  state0
end
function LSTMCell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32)
  out = p.second
  b = initb(4 * out)
  b[out + 1:2 * out] .= 1
  LSTMCell(init(4 * out, p.first), init(4 * out, out), b, (init_state(out, 1), init_state(out, 1)))
end
function (m::LSTMCell)((h, c), x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  g = m.Wi * x .+ m.Wh * h .+ m.b
  c′ = sigmoid.(gate(g, o, 2)) .* c .+ sigmoid.(gate(g, o, 1)) .* tanh.(gate(g, o, 3))
  h′ = sigmoid.(gate(g, o, 4)) .* tanh.(c′)
  (h′, c′), reshape_cell_output(h′, x)
end
LSTM(a...; ka...) = Recur(LSTMCell(a...; ka...))

# GRU(in => out): reset, update and candidate gates stacked in Wi (3out, in), Wh, b.
struct GRUCell
  Wi
  Wh
  b
  state0
end
GRUCell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  GRUCell(init(3 * p.second, p.first), init(3 * p.second, p.second), initb(3 * p.second),
          init_state(p.second, 1))
function (m::GRUCell)(h, x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  gx, gh = m.Wi * x, m.Wh * h
  r = sigmoid.(gate(gx, o, 1) .+ gate(gh, o, 1) .+ gate(m.b, o, 1))
  z = sigmoid.(gate(gx, o, 2) .+ gate(gh, o, 2) .+ gate(m.b, o, 2))
  h̃ = tanh.(gate(gx, o, 3) .+ r .* gate(gh, o, 3) .+ gate(m.b, o, 3))
  h′ = (1 .- z) .* h̃ .+ z .* h
  h′, reshape_cell_output(h′, x)
end
GRU(a...; ka...) = Recur(GRUCell(a...; ka...))

# GRUv3(in => out): GRU as in v3 of the paper (Flux's GRUv3): the reset gate applies to h
# before its own product, Wh_h̃ (out, out); Wi (3out, in), Wh (2out, out), b (3out).
struct GRUv3Cell
  Wi
  Wh
  b
  Wh_h̃
  state0
end
GRUv3Cell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  GRUv3Cell(init(3 * p.second, p.first), init(2 * p.second, p.second), initb(3 * p.second),
            init(p.second, p.second), init_state(p.second, 1))
function (m::GRUv3Cell)(h, x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  gx, gh = multigate(m.Wi * x, o, Val(3)), multigate(m.Wh * h, o, Val(2))
  b = multigate(m.b, o, Val(3))
  r = sigmoid.(gx[1] .+ gh[1] .+ b[1])
  z = sigmoid.(gx[2] .+ gh[2] .+ b[2])
  h̃ = tanh.(gx[3] .+ m.Wh_h̃ * (r .* h) .+ b[3])
  h′ = (1 .- z) .* h̃ .+ z .* h
  h′, reshape_cell_output(h′, x)
end
GRUv3(a...; ka...) = Recur(GRUv3Cell(a...; ka...))

# Flux's helpers: the N gates of c rows each of x; the slices of x along its last dim.
multigate(x, c, ::Val{N}) where N = ntuple(n -> gate(x, c, n), N)
eachlastdim(x) = [selectdim(x, ndims(x), i) for i in 1:size(x, ndims(x))]
# Base's: the slice of x at index i of dim d; the slices along dims (one dim).
selectdim(x, d::Integer, i) = x[ntuple(k -> k == d ? i : (:), ndims(x))...]
eachslice(x; dims) = [selectdim(x, dims, i) for i in 1:size(x, dims)]

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

# inv(x) of a number: 1 / x (of an integer, a float, as Julia's).
inv(x::Integer) = 1 / x
inv(x::AbstractFloat) = one(x) / x

# `.+` as a value (Base.BroadcastFunction(+)): calls its function broadcast.
struct BroadcastFunction
  f
end
(b::BroadcastFunction)(xs...) = b.f.(xs...)

# ---- exceptions ----------------------------------------------------------------------------

# throw(e) stops the program with e's type and message, as Julia prints an uncaught one.
# There is no try/catch here: an exception always ends the program (@test_throws looks at
# it first). Julia's usual exception types, with their fields:
abstract type Exception end
struct ArgumentError <: Exception
  msg
end
struct DimensionMismatch <: Exception
  msg
end
struct ErrorException <: Exception
  msg
end
struct AssertionError <: Exception
  msg
end
struct DomainError <: Exception
  val
  msg
end
DomainError(val) = DomainError(val, "")
struct KeyError <: Exception
  key
end
# Julia's MethodError holds the function and the arguments; here its message.
struct MethodError <: Exception
  msg
end
exception_text(e::Exception) = string(typeof(e), ": ", e.msg)
exception_text(e::DomainError) = string("DomainError with ", e.val, ": ", e.msg)
exception_text(e::KeyError) = string("KeyError: key ", repr(e.key), " not found")
throw(e::Exception) = error(exception_text(e))

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
# ENV: the program's own environment, empty at the start: a trace does not depend on the
# shell's variables. Writes (ENV["DATADEPS_ALWAYS_ACCEPT"] = "true") are kept.
const ENV = Dict()
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

# ---- any, all, count -----------------------------------------------------------------------

count(x::AbstractArray) = sum(Int.(x))
any(x::AbstractArray) = count(x) > 0
all(x::AbstractArray) = count(x) == length(x)
count(t::Tuple) = foldl(+, map(Int, t); init=0)
any(t::Tuple) = count(t) > 0
all(t::Tuple) = count(t) == length(t)
count(f::Function, x) = count(f.(x))
any(f::Function, x) = any(f.(x))
all(f::Function, x) = all(f.(x))

# ---- more of Base -----------------------------------------------------------------------------

# ==(x), <(x), ...: functions of the other side, as Julia's Base.Fix2 (count(==(2), x)).
==(x) = y -> y == x
!=(x) = y -> y != x
<(x) = y -> y < x
<=(x) = y -> y <= x
>(x) = y -> y > x
>=(x) = y -> y >= x
isequal(x) = y -> isequal(y, x)
in(xs) = y -> y in xs
∈(xs) = y -> y in xs
# x in xs of an array: whether some element equals x (a traced Bool when xs is traced).
in(x, xs::AbstractArray) = any(xs .== x)
isodd(n::Integer) = n % 2 != 0
iseven(n::Integer) = n % 2 == 0

# filter(f, x): the items for which f is true (of an array, a vector in column-major
# order); findall(f, x) and findall(mask): their linear indices.
filter(f, x::AbstractArray) = x[[f(v) for v in x]]
filter(f, t::Tuple) = (t[[i for i in 1:length(t) if f(t[i])]]...,)
findall(f::Function, x) = [i for i in 1:length(x) if f(x[i])]
findall(x::AbstractArray) = [i for i in 1:length(x) if x[i]]
# findfirst(f, x), findlast(f, x): the first or last index where f is true, or nothing.
function findfirst(f::Function, x)
  for i in 1:length(x)
    f(x[i]) && return i
  end
  nothing
end
function findlast(f::Function, x)
  for i in length(x):-1:1
    f(x[i]) && return i
  end
  nothing
end
findfirst(x::AbstractArray) = findfirst(identity, x)
findlast(x::AbstractArray) = findlast(identity, x)

# mapreduce(f, op, x; dims, init): the reductions the tape has (sum, prod, maximum,
# minimum) for +, *, max and min over arrays; a fold otherwise.
function mapreduce(f, op, x; dims=:, init=nothing)
  y = map(f, x)
  if y isa AbstractArray && dims === (:)
    op === (+) && return sum(y) + (init === nothing ? 0 : init)
    op === (*) && return prod(y) * (init === nothing ? 1 : init)
    op === max && init === nothing && return maximum(y)
    op === min && init === nothing && return minimum(y)
  elseif y isa AbstractArray
    op === (+) && return sum(y; dims=dims) .+ (init === nothing ? 0 : init)
    op === (*) && return prod(y; dims=dims) .* (init === nothing ? 1 : init)
    op === max && init === nothing && return maximum(y; dims=dims)
    op === min && init === nothing && return minimum(y; dims=dims)
  end
  dims === (:) || error("mapreduce with dims takes +, *, max or min")
  init === nothing ? reduce(op, y) : reduce(op, y; init=init)
end
function dropdims(x; dims)
  ds = dims isa Integer ? (dims,) : dims
  for d in ds
    size(x, d) == 1 || error("dropdims: dimension ", d, " has size ", size(x, d), ", not 1")
  end
  reshape(x, (size(x, i) for i in 1:ndims(x) if !(i in ds))...)
end
# cumsum along dims (1 by default): a product with a triangle of ones for floats.
function cumsum(x::AbstractArray; dims=1)
  n = size(x, dims)
  y = eltype(x) == Float32 || eltype(x) == Float64 ? x : float(x)
  tri = eltype(y).([i >= j ? 1 : 0 for i in 1:n, j in 1:n])
  back(s) = eltype(x) == eltype(s) ? s : eltype(x).(s)  # Int sums are exact in Float64
  (ndims(x) == 1 || dims == 1) && return back(tri * y)
  dims == 2 && ndims(x) == 2 && return back(y * tri')
  error("cumsum of an array of rank ", ndims(x), " along dims=", dims, " is not supported")
end
# kron(a, b) of vectors and matrices: block (i, j) is a[i, j] * b.
function kron(a::AbstractArray, b::AbstractArray)
  m, n = size(a, 1), size(a, 2)
  p, q = size(b, 1), size(b, 2)
  out = reshape(b, p, 1, q, 1) .* reshape(a, 1, m, 1, n)
  ndims(a) == 1 && ndims(b) == 1 ? reshape(out, :) : reshape(out, p * m, q * n)
end
# repeat(x, m, n...): x tiled m times down, n times across.
function repeat(x::AbstractArray, counts::Integer...)
  c = (counts..., ntuple(i -> 1, max(0, ndims(x) - length(counts)))...)
  length(c) > 2 && error("repeat of more than two dims is not supported")
  a, b = size(x, 1), size(x, 2)
  out = reshape(x, a, 1, b, 1) .* ones(eltype(x), 1, c[1], 1, length(c) == 2 ? c[2] : 1)
  length(c) == 1 && ndims(x) == 1 ? reshape(out, :) : reshape(out, a * c[1], :)
end
# isapprox(a, b; rtol, atol), a ≈ b: Julia's, with the norm of the difference for arrays.
# isapprox's default rtol, as Julia's: √eps of the less precise float type of the two
# (0 for integers), so Float32 results compare at Float32's precision.
rtol_default(T) = T == Float32 ? sqrt(eps(Float32)) : T == Float64 ? sqrt(eps(Float64)) : 0
function isapprox(a, b; atol=0,
                  rtol=atol > 0 ? 0 : max(rtol_default(eltype(a)), rtol_default(eltype(b))))
  d = a isa AbstractArray ? norm(a .- b) : abs(a - b)
  na, nb = a isa AbstractArray ? (norm(a), norm(b)) : (abs(a), abs(b))
  a == b || d <= max(atol, rtol * max(na, nb))
end
≈(a, b; kw...) = isapprox(a, b; kw...)
eachcol(x::AbstractMatrix) = [x[:, j] for j in 1:size(x, 2)]
eachrow(x::AbstractMatrix) = [x[i, :] for i in 1:size(x, 1)]
Embedding(nin::Integer, nout::Integer; kw...) = Embedding(nin => nout; kw...)

# ---- more of Flux ----------------------------------------------------------------------------

# Flux.params(m...): the arrays the models hold, each once, in field order (numbers and
# functions are not parameters, as in Flux), of the fields trainable(x) names (not a
# BatchNorm's running statistics nor a Recur's state).
function params(ms...)
  out = []
  for m in ms
    collect_params!(out, m)
  end
  out
end
function collect_params!(out, x)
  if x isa AbstractArray && eltype(x) != Any
    any(p -> p === x, out) || push!(out, x)
  elseif x isa AbstractVector  # of values: Chain([layer1, layer2])
    foreach(xi -> collect_params!(out, xi), x)
  elseif x isa Tuple || x isa NamedTuple
    foreach(xi -> collect_params!(out, xi), x)
  elseif !(x isa Number || x isa Function || x isa Symbol || x isa AbstractString)
    foreach(xi -> collect_params!(out, xi), values(trainable(x)))
  end
  out
end

# destructure(m) (Optimisers' and Flux's): the model's arrays flattened into one vector,
# and a function that rebuilds the model from such a vector (each array from its slice,
# in its own element type).
function destructure(m)
  ps = params(m)
  flat = isempty(ps) ? Float32[] : vcat([vec(p) for p in ps]...)
  offsets = cumsum([0; [length(p) for p in ps]])
  flat, v -> fmap(x -> begin
    i = findfirst(p -> p === x, ps)
    i === nothing ? x : eltype(x).(reshape(v[offsets[i] + 1:offsets[i + 1]], size(x)))
  end, m)
end

# Flux.activations(c, x): the output of every layer of the chain, in order.
function activations(c::Chain, x)
  outs = []
  for layer in c.layers
    x = layer(x)
    push!(outs, x)
  end
  (outs...,)
end

# Scale(size...; bias=true, init=ones32): σ.(x .* scale .+ bias), elementwise.
struct Scale
  scale
  bias
  σ
end
Scale(s1::Integer, s::Integer...; bias=true, init=ones32, _act=identity) =
  new_instance(Scale, init(s1, s...), bias ? zeros(Float32, s1, s...) : false, _act)
# Scale(size..., σ): the activation last, as Flux's.
function Scale(size_act...; kw...)
  ok = length(size_act) >= 2 && size_act[end] isa Function &&
       all(s -> s isa Integer, size_act[1:end-1])
  ok || throw(MethodError("no method matching Scale$(map(typeof, size_act))"))
  Scale(size_act[1:end-1]...; _act=size_act[end], kw...)
end
(s::Scale)(x) = s.σ.(s.bias === false ? x .* s.scale : x .* s.scale .+ s.bias)

# Maxout(layers...) or Maxout(f, n): the elementwise maximum of the layers' outputs.
struct Maxout
  layers::Tuple
end
Maxout(layers...) = Maxout(layers)
Maxout(f::Function, n::Integer) = Maxout(ntuple(i -> f(), n)...)
(m::Maxout)(x) = mapreduce(layer -> layer(x), (a, b) -> max.(a, b), m.layers)
sublayers(m::Maxout) = m.layers

# Bilinear((in1, in2) => out, σ; bias=true, init): z[k] = σ(x' W[k, :, :] y + b[k]).
struct Bilinear
  weight
  bias
  σ
end
function Bilinear(p::Pair, σ=identity; bias=true, init=glorot_uniform)
  n1, n2 = p.first isa Integer ? (p.first, p.first) : p.first  # in => out: both inputs in
  w = init(p.second, n1, n2)
  new_instance(Bilinear, w, create_bias(w, bias, p.second), σ)
end
Bilinear(in1::Integer, in2::Integer, out::Integer, σ=identity; kw...) =
  Bilinear((in1, in2) => out, σ; kw...)
function Bilinear(w::AbstractArray, bias=true, σ=identity)
  ndims(w) == 3 || throw(ArgumentError("expected a 3-array of weights, got size $(size(w))"))
  new_instance(Bilinear, w, create_bias(w, bias, size(w, 1)), σ)
end
(b::Bilinear)(x::AbstractArray) = b(x, x)
function (b::Bilinear)(x, y)
  o, n1, n2 = size(b.weight)
  xm, ym = reshape(x, n1, :), reshape(y, n2, :)
  wy = reshape(reshape(b.weight, o * n1, n2) * ym, o, n1, :)
  z = reshape(sum(wy .* reshape(xm, 1, n1, :); dims=2), o, :)
  z = b.σ.(b.bias === false ? z : z .+ b.bias)
  ndims(x) == 1 ? reshape(z, :) : z
end
(b::Bilinear)(xy::Tuple) = b(xy...)

# InstanceNorm(c, λ; affine=false, track_stats=false, eps=1f-5, momentum=0.1f0, active)
# normalizes each channel of each sample over its spatial dims; GroupNorm(c, G, λ;
# affine=true, ...) each group of c ÷ G channels of each sample. Flux 0.14's fields: the
# scale γ and shift β (with affine), the running μ and σ² (with track_stats, one per
# channel or group, moved towards the batch's by momentum in training as BatchNorm's,
# and used in test mode).
mutable struct InstanceNorm
  λ
  β
  γ
  μ
  σ²
  ϵ
  momentum
  affine
  track_stats
  active
  chs
end
function InstanceNorm(c::Integer, λ=identity; initβ=zeros32, initγ=ones32, affine=false,
                      track_stats=false, active=nothing, eps=1f-5, momentum=0.1f0)
  InstanceNorm(λ, affine ? initβ(c) : nothing, affine ? initγ(c) : nothing,
               track_stats ? zeros32(c) : nothing, track_stats ? ones32(c) : nothing, eps,
               momentum, affine, track_stats, active, c)
end
mutable struct GroupNorm
  G
  λ
  β
  γ
  μ
  σ²
  ϵ
  momentum
  affine
  track_stats
  active
  chs
end
function GroupNorm(c::Integer, G::Integer, λ=identity; initβ=zeros32, initγ=ones32,
                   affine=true, track_stats=false, active=nothing, eps=1f-5, momentum=0.1f0)
  @assert c % G == 0 "The number of groups ($G) must divide the number of channels ($c)"
  GroupNorm(G, λ, affine ? initβ(c) : nothing, affine ? initγ(c) : nothing,
            track_stats ? zeros32(G) : nothing, track_stats ? ones32(G) : nothing, eps,
            momentum, affine, track_stats, active, c)
end
trainable(l::Union{InstanceNorm, GroupNorm}) = l.affine ? (β = l.β, γ = l.γ) : (;)
function (l::InstanceNorm)(x)
  check_channels(InstanceNorm, x, l.chs)
  N = ndims(x)
  norm_forward(l, x, ntuple(i -> i, N - 2), ntuple(i -> i == N - 1 ? size(x, N - 1) : 1, N))
end
function (l::GroupNorm)(x)
  check_channels(GroupNorm, x, l.chs)
  sz = size(x)
  g = reshape(x, sz[1:end-2]..., sz[end-1] ÷ l.G, l.G, sz[end])
  N = ndims(g)
  shape = ntuple(i -> i == N - 1 || i == N - 2 ? size(g, i) : 1, N)
  reshape(norm_forward(l, g, ntuple(i -> i, N - 2), shape), sz)
end
# Flux's _norm_layer_forward: x normalized over reduce_dims with the batch's statistics
# (in training, or without running ones) or the running ones (in test mode), which have
# the size of x's dim N-1; then γ and β of affine_shape, and λ.
function norm_forward(l, x, reduce_dims, affine_shape)
  N = ndims(x)
  T = eltype(x)
  if !isactive(l) && l.track_stats
    s = ntuple(i -> i == N - 1 ? size(x, N - 1) : 1, N)
    μ, σ² = reshape(T.(l.μ), s), reshape(T.(l.σ²), s)
  else
    μ = mean(x; dims=reduce_dims)
    σ² = mean(abs2.(x .- μ); dims=reduce_dims)
    l.track_stats && norm_track_stats!(l, x, μ, σ², reduce_dims)
  end
  y = (x .- μ) ./ sqrt.(σ² .+ T(l.ϵ))
  l.affine || return l.λ.(y)
  l.λ.(reshape(T.(l.γ), affine_shape) .* y .+ reshape(T.(l.β), affine_shape))
end
function norm_track_stats!(l, x, μ, σ², reduce_dims)
  N = ndims(x)
  m = prod([size(x, i) for i in reduce_dims])
  μnew = vec(N in reduce_dims ? μ : mean(μ; dims=N))
  σ²new = vec(N in reduce_dims ? σ² : mean(σ²; dims=N))
  V = eltype(l.μ)
  mtm = V(l.momentum)
  l.μ = (1 - mtm) .* l.μ .+ mtm .* V.(μnew)
  l.σ² = (1 - mtm) .* l.σ² .+ (mtm * m / max(m - 1, 1)) .* V.(σ²new)
  nothing
end
# Flux.hasaffine(l): whether a normalization layer scales and shifts.
hasaffine(l::Union{InstanceNorm, GroupNorm}) = l.affine
hasaffine(b::BatchNorm) = b.weight !== false
hasaffine(l::LayerNorm) = l.scale !== false

# AlphaDropout(p): dropout that keeps a SELU network's mean and variance, as Flux's.
mutable struct AlphaDropout
  p
  active
end
AlphaDropout(p) = AlphaDropout(p, nothing)
function (a::AlphaDropout)(x)
  (!isactive(a) || a.p == 0) && return x
  T = eltype(x)
  a.p == 1 && return sign.(x) .* T(0)  # as Flux's: nothing kept
  α′ = T(-1.7580993408473766)  # selu(-Inf)
  A = T(1 / sqrt((1 - a.p) * (1 + a.p * α′^2)))
  B = T(-A * α′ * a.p)
  A .* ifelse.(rand(T, size(x)...) .> a.p, x, α′) .+ B
end
# The layers with a mode keep it in `active` (true, false, or nothing: unset).
function set_mode!(m::Union{BatchNorm, InstanceNorm, GroupNorm, Dropout, AlphaDropout}, mode)
  m.active = mode
  m
end

# More of Flux's losses.
function label_smoothing(y, α; dims=1)
  0 < α < 1 || throw(ArgumentError("α must be between 0 and 1"))
  dims == 0 ? y .* (1 - α) .+ α / 2 : y .* (1 - α) .+ α / size(y, dims)
end
function tversky_loss(ŷ, y; beta=0.7)
  tp = sum(y .* ŷ)
  1 - (tp + 1) / (sum(y .* ŷ .+ beta .* (1 .- y) .* ŷ .+ (1 - beta) .* y .* (1 .- ŷ)) + 1)
end
function binary_focal_loss(ŷ, y; agg=mean, gamma=2, eps=epseltype(ŷ))
  p = y .* (ŷ .+ eps) .+ (1 .- y) .* (1 .- ŷ .- eps)
  agg((1 .- p) .^ gamma .* .-log.(p))
end
focal_loss(ŷ, y; dims=1, agg=mean, gamma=2, eps=epseltype(ŷ)) =
  agg(sum(.-y .* (1 .- (ŷ .+ eps)) .^ gamma .* log.(ŷ .+ eps); dims=dims))
function siamese_contrastive_loss(ŷ, y; agg=mean, margin=1)
  margin < 0 && throw(DomainError(margin, "Margin must be non-negative"))
  agg((1 .- y) .* ŷ .^ 2 .+ y .* max.(0, margin .- ŷ) .^ 2)
end
eachindex(x) = 1:length(x)
# Flux.normalise(x; dims, eps): (x - μ) / sqrt(σ² + eps) along dims, σ² uncorrected, as
# Flux 0.14 (and LayerNorm) computes it.
function normalise(x; dims=ndims(x), eps=1f-5)
  μ = mean(x; dims=dims)
  σ² = mean(abs2.(x .- μ); dims=dims)
  (x .- μ) ./ sqrt.(σ² .+ eps)
end

# ---- Optimisers.jl (0.3): rules, setup, update, adjust ----------------------------------------

# The pure API of Optimisers.jl 0.3 with its rules' defaults and formulas. Everything traces,
# so that a whole training step is one tape: a rule's state is arrays and numbers (Adam's
# β^t too, carried from step to step), computed with arithmetic and never chosen by a
# branch on a value; hyperparameters are converted to the parameter's element type where
# they are used (T(η)), as Optimisers.jl's are, so Float32 parameters keep Float32 state.
abstract type AbstractRule end

# Each rule takes its hyperparameters by position or by their field names as keywords,
# Descent(; eta=0.2), Adam(; beta=(0.8, 0.9)), as later Optimisers.jl's.

# Descent(η = 1f-1): x -= η dx.
struct Descent <: AbstractRule
  eta
end
Descent(; eta=1f-1) = Descent(eta)

# Momentum(η = 0.01, ρ = 0.9): v = ρ v + η dx; x -= v.
struct Momentum <: AbstractRule
  eta
  rho
end
Momentum(η=0.01; eta=η, rho=0.9) = Momentum(eta, rho)

# Nesterov(η = 0.001, ρ = 0.9): x -= -ρ² v + (1 + ρ) η dx, then v = ρ v - η dx.
struct Nesterov <: AbstractRule
  eta
  rho
end
Nesterov(η=0.001; eta=η, rho=0.9) = Nesterov(eta, rho)

# Adam(η = 0.001, β = (0.9, 0.999), ϵ = 1e-8), with β^t in its state.
struct Adam <: AbstractRule
  eta
  beta
  epsilon
end
Adam(η=0.001, β=(0.9, 0.999); eta=η, beta=β, epsilon=1e-8) = Adam(eta, beta, epsilon)

# WeightDecay(λ = 5e-4): dx + λ x.
struct WeightDecay <: AbstractRule
  lambda
end
WeightDecay(; lambda=5e-4) = WeightDecay(lambda)

# ClipNorm(ω = 10, p = 2): dx scaled to a p-norm of at most ω. p is kept static (an integer,
# :Inf for Inf), so that a traced state never branches on it; a non-finite norm is not an
# error here (a tape cannot throw), and `throw` is kept for Optimisers.jl's signature.
struct ClipNorm <: AbstractRule
  omega
  p
  throw
end
ClipNorm(ω=10, p=2; throw::Bool=true) =
  new_instance(ClipNorm, Float64(ω), p == Inf ? :Inf : p == round(p) ? Int(p) : p, throw)

# OptimiserChain(rules...): each rule transforms the update of the one before.
struct OptimiserChain <: AbstractRule
  opts::Tuple
end
OptimiserChain(opts...) = OptimiserChain(opts)

# AdamW as Optimisers.jl 0.3 defines it: Adam, then a weight decay not scaled by η.
AdamW(η=0.001, β=(0.9, 0.999), λ=0, ϵ=1e-8; eta=η, beta=β, lambda=λ, epsilon=ϵ) =
  OptimiserChain(Adam(eta, beta, epsilon), WeightDecay(lambda))

# init(rule, x): the state of a new parameter x.
init(o::AbstractRule, x) = nothing
init(o::Momentum, x) = zero(x)
init(o::Nesterov, x) = zero(x)
init(o::Adam, x) = (zero(x), zero(x), map(eltype(x), o.beta))
init(o::OptimiserChain, x) = map(r -> init(r, x), o.opts)

# apply!(rule, state, x, dx) -> (state′, dx′): the new state and the step subtracted from x.
# Pure here: the state arrays are new values, not written in place.
apply!(o::Descent, state, x, dx) = state, dx .* eltype(x)(o.eta)
function apply!(o::Momentum, v, x, dx)
  T = eltype(x)
  v′ = T(o.rho) .* v .+ T(o.eta) .* dx
  v′, v′
end
function apply!(o::Nesterov, v, x, dx)
  T = eltype(x)
  η, ρ = T(o.eta), T(o.rho)
  v′ = ρ .* v .- η .* dx
  v′, -ρ^2 .* v .+ (1 + ρ) .* η .* dx
end
function apply!(o::Adam, (mt, vt, βt), x, dx)
  T = eltype(x)
  η, β1, β2, ϵ = T(o.eta), T(o.beta[1]), T(o.beta[2]), T(o.epsilon)
  mt′ = β1 .* mt .+ (1 - β1) .* dx
  vt′ = β2 .* vt .+ (1 - β2) .* abs2.(dx)
  dx′ = mt′ ./ (1 - βt[1]) ./ (sqrt.(vt′ ./ (1 - βt[2])) .+ ϵ) .* η
  (mt′, vt′, (βt[1] * β1, βt[2] * β2)), dx′
end
apply!(o::WeightDecay, state, x, dx) = state, dx .+ eltype(x)(o.lambda) .* x
function apply!(o::ClipNorm, state, x, dx)
  nrm = clip_norm(dx, o.p)
  state, dx .* eltype(x)(min(o.omega / nrm, 1))
end
clip_norm(dx, p::Integer) =
  p == 2 ? sqrt(sum(abs2.(dx))) : p == 1 ? sum(abs.(dx)) : sum(abs.(dx) .^ p)^(1 / p)
clip_norm(dx, p::Symbol) = maximum(abs.(dx))
clip_norm(dx, p::Real) = sum(abs.(dx) .^ p)^(1 / p)
function apply!(o::OptimiserChain, states, x, dx)
  out = ()
  for (rule, state) in zip(o.opts, states)
    state′, dx = apply!(rule, state, x, dx)
    out = (out..., state′)
  end
  out, dx
end

# The state of one trainable array: its rule and the rule's state. Mutable, as
# Optimisers.jl's, so that update! and adjust! can change it in place.
mutable struct Leaf
  rule
  state
end

# trainable(x): the fields of a struct that hold parameters (Optimisers.jl's), all by
# default; a Recur's hidden state and a BatchNorm's running statistics are not, as in Flux.
trainable(x) = getfields(x)
trainable(r::Recur) = (cell = r.cell,)
trainable(b::BatchNorm) = (weight = b.weight, bias = b.bias)

is_parameter(x) = x isa AbstractArray && (eltype(x) == Float32 || eltype(x) == Float64)
is_struct(x) = !(x isa Tuple || x isa NamedTuple || x isa AbstractArray) && nfields(x) > 0

# Functors.fmap(f, x) (Flux.fmap): x rebuilt with f applied to each leaf (an array, a
# number, a function: what is not a struct, tuple or vector of values), as Functors'.
function fmap(f, x)
  (x isa Tuple || x isa NamedTuple) && return map(xi -> fmap(f, xi), x)
  x isa AbstractVector && eltype(x) == Any && return [fmap(f, xi) for xi in x]
  is_struct(x) || return f(x)
  new_instance(typeof(x), map(xi -> fmap(f, xi), Tuple(getfields(x)))...)
end

# setup(rule, model): the state tree, which mirrors the model: a Leaf for each Float32 or
# Float64 array, a named tuple for a struct (its trainable fields; nothing for the rest), a
# tuple for a tuple, a named tuple for a named tuple, nothing for everything else (numbers,
# integer and Bool arrays, functions). An array met twice gets a Leaf each time.
setup(rule::AbstractRule, x) = setup_tree(rule, x)
function setup_tree(rule, x)
  is_parameter(x) && return Leaf(rule, init(rule, x))
  (x isa Tuple || x isa NamedTuple) && return map(xi -> setup_tree(rule, xi), x)
  is_struct(x) || return nothing
  map(xi -> setup_tree(rule, xi), merge(map(_ -> nothing, getfields(x)), trainable(x)))
end

# update(tree, model, grad) -> (tree′, model′): one step of each Leaf's rule, giving a new
# state tree and a new model (structs rebuilt with new_instance, bypassing constructors);
# grad is Zygote's: a named tuple for a struct or named tuple, a tuple for a tuple, an
# array for an array, nothing where nothing changes. The model is not changed.
function update(tree, model, grad)
  check_gradient(model, grad, "model")
  update_tree(tree, model, grad)
end
function update_tree(tree, x, dx)
  (dx === nothing || tree === nothing) && return tree, x
  if tree isa Leaf
    T = eltype(x)
    state′, dx′ = apply!(tree.rule, tree.state, x, eltype(dx) == T ? dx : T.(dx))
    return Leaf(tree.rule, state′), x .- dx′
  end
  fields = is_struct(x) ? getfields(x) : x
  grads = x isa Tuple ? dx : merge(map(_ -> nothing, fields), dx)
  parts = map(update_tree, tree, fields, grads)
  tree′, x′ = map(first, parts), map(last, parts)
  tree′, is_struct(x) ? new_instance(typeof(x), x′...) : x′
end

# update!(tree, model, grad): update, and as Optimisers.jl's it also changes its arguments:
# each Leaf takes its new state and each array its new values in place. Returns them.
function update!(tree, model, grad)
  tree′, model′ = update(tree, model, grad)
  write_back!(tree, tree′, model, model′)
  tree, model
end
function write_back!(tree, tree′, x, x′)
  if tree isa Leaf
    tree.state = tree′.state
    x .= x′
  elseif tree !== nothing
    fields, fields′ = is_struct(x) ? (getfields(x), getfields(x′)) : (x, x′)
    foreach(write_back!, tree, tree′, fields, fields′)
  end
  nothing
end

# The error for a gradient that does not mirror the model, naming where (model.layers[2].bias).
gradient_mismatch(path, what...) =
  error("Optimisers.update: the gradient does not match the model at ", path, ": ", what...)
function check_gradient(x, dx, path)
  dx === nothing && return nothing
  if is_parameter(x)
    dx isa AbstractArray && size(dx) == size(x) && return nothing
    gradient_mismatch(path, "the parameter is a ", typeof(x), " of size ", size(x),
                      ", its gradient a ", typeof(dx),
                      dx isa AbstractArray ? string(" of size ", size(dx)) : "")
  elseif x isa Tuple
    dx isa Tuple && length(dx) == length(x) ||
      gradient_mismatch(path, "the model has a tuple of ", length(x), ", the gradient a ",
                        typeof(dx), dx isa Tuple ? string(" of ", length(dx)) : "",
                        " (a tuple of ", length(x), " or nothing)")
    for i in 1:length(x)
      check_gradient(x[i], dx[i], string(path, "[", i, "]"))
    end
  elseif x isa NamedTuple || is_struct(x)
    fields = is_struct(x) ? getfields(x) : x
    what = is_struct(x) ? string("a ", typeof(x)) : "a named tuple"
    dx isa NamedTuple ||
      gradient_mismatch(path, "the model has ", what, ", the gradient a ", typeof(dx),
                        " (a named tuple of its fields, or nothing)")
    for name in keys(dx)
      name in keys(fields) ||
        gradient_mismatch(path, "the gradient has a field ", name, ", which ", what,
                          " has not; its fields are ", join_names(keys(fields)))
      check_gradient(fields[name], dx[name], string(path, ".", name))
    end
  end
  nothing
end
join_names(names) = foldl((a, b) -> string(a, ", ", b), names)

# adjust(tree, η) and adjust!(tree, η): the learning rate (field eta) of every Leaf's rule
# set to η, in a new tree or in place, the states kept; adjust(tree; beta=...) and
# adjust!(tree; ...) set any fields by name. Rules without such a field stay as they are.
# η may be a traced number, such as a schedule's value at a traced step.
function adjust_fields(r::AbstractRule, kw)
  names = fieldnames(typeof(r))
  new_instance(typeof(r), map(f -> f in keys(kw) ? kw[f] : getfield(r, f), names)...)
end
adjust(r::AbstractRule, η::Real) = adjust_fields(r, (eta = η,))
adjust(r::AbstractRule; kw...) = adjust_fields(r, kw)
adjust(c::OptimiserChain, η::Real) = OptimiserChain(map(r -> adjust(r, η), c.opts))
adjust(c::OptimiserChain; kw...) = OptimiserChain(map(r -> adjust(r; kw...), c.opts))
adjust(l::Leaf, η::Real) = Leaf(adjust(l.rule, η), l.state)
adjust(l::Leaf; kw...) = Leaf(adjust(l.rule; kw...), l.state)
adjust(::Nothing, η::Real) = nothing
adjust(::Nothing; kw...) = nothing
adjust(t::Union{Tuple, NamedTuple}, η::Real) = map(s -> adjust(s, η), t)
adjust(t::Union{Tuple, NamedTuple}; kw...) = map(s -> adjust(s; kw...), t)
function adjust!(tree, η::Real)
  if tree isa Leaf
    tree.rule = adjust(tree.rule, η)
  elseif tree !== nothing
    foreach(s -> adjust!(s, η), tree)
  end
  nothing
end
function adjust!(tree; kw...)
  if tree isa Leaf
    tree.rule = adjust(tree.rule; kw...)
  elseif tree !== nothing
    foreach(s -> adjust!(s; kw...), tree)
  end
  nothing
end

# ---- learning-rate schedules (ParameterSchedulers.jl's) -----------------------------------

# s(t) for the 1-based step t, an integer or a float, also a traced one (floor records
# converts, and nothing branches on t).

# Step(λ, γ, step_size): λ γ^floor((t - 1) / step_size), decaying by γ every step_size steps.
struct Step
  λ
  γ
  step_size::Integer
end
Step(; λ, γ, step_sizes::Integer) = Step(λ, γ, step_sizes)
(s::Step)(t) = s.λ * s.γ^floor((t - 1) / s.step_size)

# CosAnneal(λ0, λ1, period, restart=true): from max(λ0, λ1) down to min(λ0, λ1) along a
# half cosine over `period` steps, starting again each period (restart) or going on.
struct CosAnneal
  λ0
  λ1
  period::Integer
  restart::Bool
end
CosAnneal(λ0, λ1, period) = CosAnneal(λ0, λ1, period, true)
CosAnneal(; λ0, λ1, period, restart=true) = CosAnneal(λ0, λ1, period, restart)
function (s::CosAnneal)(t)
  t̂ = s.restart ? (t - 1) - s.period * floor((t - 1) / s.period) : t - 1
  abs(s.λ0 - s.λ1) * (1 + cos(π * t̂ / s.period)) / 2 + min(s.λ0, s.λ1)
end

# ---- data loading and training loops (MLUtils, Flux) -------------------------------------------

# Observations lie along the last dim of arrays; of a tuple or named tuple, along each's.
numobs(x::AbstractArray) = size(x, ndims(x))
numobs(t::Union{Tuple, NamedTuple}) = numobs(first(t))
function getobs(x::AbstractArray, i)
  front = size(x)[1:end-1]
  reshape(reshape(x, :, numobs(x))[:, i], front..., length(i))
end
getobs(t::Tuple, i) = map(x -> getobs(x, i), t)
getobs(t::NamedTuple, i) = map(x -> getobs(x, i), t)
shuffle(x::AbstractVector) = x[randperm(length(x))]

# DataLoader(data; batchsize=1, shuffle=false, partial=true): the batches of an array or a
# tuple of arrays, as MLUtils' (Flux.DataLoader). Each pass in a new order when shuffled,
# drawn from the program's generator (seed!); at top level, where training loops run.
struct DataLoader
  data
  batchsize
  shuffle
  partial
end
DataLoader(data; batchsize=1, shuffle=false, partial=true, rng=nothing) =
  DataLoader(data, batchsize, shuffle, partial)
# Flux 0.11's DataLoader(x, y; ...): the data as separate arguments.
DataLoader(x, y; kw...) = DataLoader((x, y); kw...)
function length(d::DataLoader)
  n = numobs(d.data)
  d.partial ? (n + d.batchsize - 1) ÷ d.batchsize : n ÷ d.batchsize
end
function iterate(d::DataLoader)
  n = numobs(d.data)
  iterate(d, (d.shuffle ? randperm(n) : collect(1:n), 1))
end
function iterate(d::DataLoader, state)
  order, k = state
  k > length(d) && return nothing
  idx = order[(k - 1) * d.batchsize + 1:min(k * d.batchsize, length(order))]
  (getobs(d.data, idx), (order, k + 1))
end

# Flux.train!(loss, model, data, opt_state): a step of loss(model, batch...)'s gradient and
# Optimisers.update! per batch of data, writing into the model's arrays, as Flux 0.14's.
function train!(loss, model, data, opt_state)
  for batch in data
    b = batch isa Tuple ? batch : (batch,)
    grads = gradient(m -> loss(m, b...), model)
    Optimisers.update!(opt_state, model, grads[1])
  end
end

# Flux's device movers: this machine is the only device, so both are the identity; and
# CUDA.jl's questions, answered for a machine without a GPU (code that asks runs on the
# CPU, as it would in Julia there).
cpu(x) = x
gpu(x) = x
# Flux.outputsize(m, inputsizes...; padbatch=false): the size of m's output for inputs of
# those sizes (a batch dim of 1 appended with padbatch), run on zeros of a copy of m, so
# that a Recur's state is left as it was.
function outputsize(m, sizes::Tuple...; padbatch=false)
  length(sizes) == 1 && sizes[1] isa Tuple && !isempty(sizes[1]) && sizes[1][1] isa Tuple &&
    return outputsize(m, sizes[1]...; padbatch=padbatch)
  xs = [zeros(Float32, (padbatch ? (s..., 1) : s)...) for s in sizes]
  # Several inputs go in as one tuple, as Flux's (a Parallel takes them apart).
  size(deepcopy(m)(length(xs) == 1 ? xs[1] : Tuple(xs)))
end
# Flux's @autosize (tracer/lang/parse_autosize.cc): a LazyLayer makes its layer from the
# first input it sees; autosize_build runs the model once on zeros of the sizes, then
# puts the made layers in place of the lazy ones.
mutable struct LazyLayer
  make
  layer
end
LazyLayer(make) = LazyLayer(make, nothing)
function (l::LazyLayer)(xs...)
  l.layer === nothing && (l.layer = l.make(xs[1]))
  l.layer(xs...)
end
# The size `_` stands for: Flux's autosizefor, dim 1 for Dense, Embedding and LayerNorm,
# else the second-to-last (channels).
autosize_dim(x, layer::String) = layer in ("Dense", "Embedding", "LayerNorm") ? size(x, 1) :
  size(x, max(1, ndims(x) - 1))
function autosize_build(sizes::Tuple, m)
  m(zeros(Float32, sizes...))
  strip_lazy(m)
end
strip_lazy(l::LazyLayer) = l.layer === nothing ?
  error("@autosize: a layer was never called on the example input, so its size is unknown") :
  l.layer
function strip_lazy(x)
  (x isa Tuple || x isa NamedTuple) && return map(strip_lazy, x)
  x isa AbstractVector && eltype(x) == Any && return [strip_lazy(xi) for xi in x]
  is_struct(x) || return x
  new_instance(typeof(x), map(strip_lazy, Tuple(getfields(x)))...)
end
# Flux.unsqueeze(x; dims): x with a dim of 1 inserted at dims; unsqueeze(; dims) the function.
unsqueeze(x; dims) = reshape(x, size(x)[1:dims - 1]..., 1, size(x)[dims:end]...)
unsqueeze(; dims) = x -> unsqueeze(x; dims=dims)
# f32(m), f64(m): the model with its float arrays converted, as Flux's (Float16 has no
# dtype here).
f32(m) = fmap(x -> x isa AbstractArray && eltype(x) <: AbstractFloat ? Float32.(x) : x, m)
f64(m) = fmap(x -> x isa AbstractArray && eltype(x) <: AbstractFloat ? Float64.(x) : x, m)
functional(show_reason::Bool=false) = false
has_cuda(show_reason::Bool=false) = false
has_cuda_gpu(show_reason::Bool=false) = false
allowscalar(x...) = nothing

# ---- Flux's implicit parameters (Zygote's Params and Grads, Flux.Optimise) -----------------

# gradient(() -> loss(model(x), y), Flux.params(model)) differentiates for the arrays of
# `params` as they are used inside the function: its Grads are looked up by the array
# itself, gs[model[1].weight], and are `nothing` for an array the loss did not use.
struct Grads
  params
  grads
end
function getindex(gs::Grads, p)
  i = findfirst(q -> q === p, gs.params)
  i === nothing && error("KeyError: this array is not one of the parameters of the gradient")
  gs.grads[i]
end
haskey(gs::Grads, p) = findfirst(q -> q === p, gs.params) !== nothing
length(gs::Grads) = length(gs.params)

# pullback(f, args...) and pullback(f, ps), Zygote's: f's value and a function of the
# value's cotangent Δ giving the gradients, for a real-valued f.
pullback_of(grads) = Δ -> scale_gradient(grads, Δ)
pullback_call(f, xs...) = (y = f(xs...); y isa AbstractArray ? (sum(y), y, :array_pullback) : y)
array_pullback_back(Δ) = error("the back function of pullback needs a real-valued function: ",
                               "of an array-valued f, write gradient(x -> sum(Δ .* f(x)), x)")
scale_gradient(g::Nothing, Δ) = nothing
scale_gradient(g::Union{Number, AbstractArray}, Δ) = Δ == 1 ? g : g .* Δ
scale_gradient(g::Union{Tuple, NamedTuple}, Δ) = map(x -> scale_gradient(x, Δ), g)
scale_gradient(g::Grads, Δ) = Grads(g.params, [scale_gradient(x, Δ) for x in g.grads])
scale_gradient(g::AbstractVector, Δ) = [scale_gradient(x, Δ) for x in g]

# Flux.Optimise's implicit form: update!(opt, ps, gs) steps each parameter by its gradient
# in place, and update!(opt, x, dx) one array. A rule's state is kept per rule and array,
# as Flux's legacy optimisers keep theirs.
const implicit_states = []
function update!(opt::AbstractRule, x::AbstractArray, dx)
  k = findfirst(s -> s[1] === opt && s[2] === x, implicit_states)
  state = k === nothing ? init(opt, x) : implicit_states[k][3]
  state, step = apply!(opt, state, x, dx)
  if k === nothing
    push!(implicit_states, (opt, x, state))
  else
    implicit_states[k] = (opt, x, state)
  end
  x .-= step
end
function update!(opt::AbstractRule, ps::AbstractVector, gs::Grads)
  for p in ps
    dx = gs[p]
    dx === nothing || update!(opt, p, dx)
  end
end

# Flux.train!(loss, ps, data, opt; cb): Flux's implicit loop: for each batch, the gradient
# of loss(batch...) for the parameters, then a step; cb() after each.
function train!(loss, ps::AbstractVector, data, opt::AbstractRule; cb=() -> nothing)
  for batch in data
    b = batch isa Tuple ? batch : (batch,)
    gs = gradient(() -> loss(b...), ps)
    update!(opt, ps, gs)
    cb()
  end
end

# Zygote's jacobian(f, xs...): for each argument the matrix of ∂f(xs...)[i]/∂x[j] (a row
# per element of f's result, a column per element of the argument), one gradient per row;
# hessian(f, x) (and hessian_reverse, hessian_dual) the jacobian of its gradient, exact as
# a gradient of a gradient is. Integer arguments are taken as floats, as Zygote does.
function jacobian(f, xs...)
  xs = map(x -> x isa AbstractArray && !(eltype(x) <: AbstractFloat) ? float.(x) : x, xs)
  n = length(f(xs...))
  row(i) = gradient((a...) -> (y = f(a...); y isa Number ? y : y[i]), xs...)
  rows = [row(i) for i in 1:n]
  ntuple(k -> vcat([reshape(r[k] === nothing ? zero(xs[k]) : r[k], 1, :) for r in rows]...),
         length(xs))
end
hessian(f, x) = jacobian(x -> gradient(f, x)[1], x)[1]
hessian_reverse(f, x) = hessian(f, x)
# ForwardDiff's jacobian and gradient of one array: the matrix and the array (Zygote's give
# a tuple, one per argument), computed the same exact way.
const ForwardDiff = (jacobian = (f, x) -> jacobian(f, x)[1], gradient = (f, x) -> gradient(f, x)[1])
hessian_dual(f, x) = hessian(f, x)

# Flux's older names for its rules.
ADAM(η=0.001, β=(0.9, 0.999), ϵ=1e-8) = Adam(η, β, ϵ)
Optimiser(opts...) = OptimiserChain(opts...)
