# The prelude (tracer/prelude/base.jl says what it is): Flux's layers.

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

# NNlib's functional convolution, which Flux exports: conv(x, w; stride, pad, dilation,
# flipped, groups) is the Conv (flipped=false, NNlib's default: a true convolution) or the
# CrossCor (flipped=true) of weight w without a bias. DenseConvDims(x, w; stride, padding,
# dilation, flipkernel, groups) holds that geometry for conv(x, w, cdims) and the two
# gradients of that conv: ∇conv_data(dy, w, cdims) with respect to x and
# ∇conv_filter(x, dy, cdims) with respect to w, each the traced gradient of the linear map
# (the convolution of zeros that it traces is dead code once differentiated).
function conv(x::AbstractArray, w::AbstractArray; stride=1, pad=0, dilation=1, flipped=false,
              groups=1)
  c = conv_layer(CrossCor, w, false, identity; stride=stride, pad=pad, dilation=dilation,
                 groups=groups)
  conv_apply(c, x, !flipped)
end
struct DenseConvDims
  input_size
  kernel_size
  stride
  padding
  dilation
  flipkernel
  groups
end
function DenseConvDims(x::AbstractArray, w::AbstractArray; stride=1, padding=0, dilation=1,
                       flipkernel=false, groups=1)
  DenseConvDims(size(x), size(w), stride, padding, dilation, flipkernel, groups)
end
conv(x, w, cd::DenseConvDims) = conv(x, w; stride=cd.stride, pad=cd.padding,
                                     dilation=cd.dilation, flipped=cd.flipkernel, groups=cd.groups)
function ∇conv_data(dy, w, cd::DenseConvDims)
  gradient(x -> sum(conv(x, w, cd) .* dy), zeros(eltype(dy), cd.input_size))[1]
end
function ∇conv_filter(x, dy, cd::DenseConvDims)
  gradient(w -> sum(conv(x, w, cd) .* dy), zeros(eltype(dy), cd.kernel_size))[1]
end

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
  rng
end
Dropout(p, dims, active) = Dropout(p, dims, active, default_rng())
Dropout(p; dims=:, active=nothing, rng=default_rng()) = Dropout(p, dims, active, rng)
# Flux.dropout([rng,] x, p; dims=:, active=true): the function (NNlib's dropout), applied
# when active.
dropout(x, p; dims=:, active::Bool=true) = active ? Dropout(p, dims, true)(x) : x
dropout(rng::AbstractRNG, x, p; dims=:, active::Bool=true) =
  active ? Dropout(p, dims, true, rng)(x) : x
function (d::Dropout)(x)
  # No test of a float p == 0: p is a tape input when the layer is, and rand .>= 0 keeps
  # all. A static p (Val(p), MultiHeadAttention's) of 0 draws nothing.
  isactive(d) || return x
  d.p isa Val && return static_value(d.p) == 0 ? x : Dropout(static_value(d.p), d.dims, true, d.rng)(x)
  s = d.dims === (:) ? size(x) : ntuple(i -> i in d.dims ? size(x, i) : 1, ndims(x))
  # p = 1 keeps nothing, as NNlib's: the scale stays finite (1 - p at least floatmin), so
  # that the all-false mask gives zeros, not NaN. The mask is real, of a complex x too.
  T = float(real(eltype(x)))
  x .* ((rand(d.rng, T, s...) .>= d.p) .* (1 / max(convert(T, 1 - d.p), floatmin(T))))
end

# Embedding(in => out): column k of the weight (out, in) for label k.
struct Embedding
  weight
end
Embedding(p::Pair; init=randn32) = Embedding(init(p.second, p.first))
(e::Embedding)(x::Integer) = e.weight[:, x]
(e::Embedding)(x::AbstractRange) = e(collect(x))  # positions 1:T
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
# Windows of only padding, and pads not smaller than the window, which the primitives
# refuse, are NNlib's: x is padded explicitly, with -floatmax (where NNlib's max starts,
# nextfloat(-Inf)) or 0, and pooled unpadded, which gives NNlib's values and gradients
# everywhere.
function only_padding(x, k, s, p)
  for i in 1:length(k)
    lo, hi, n = p[2i - 1], p[2i], size(x, i)
    out = (n + lo + hi - k[i]) ÷ s[i] + 1
    out >= 1 && (lo >= k[i] || hi >= k[i] || (out - 1) * s[i] >= lo + n) && return true
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

# ---- printing: Flux's show, the call that makes the layer ------------------------------------

# sprint(show, layer) and show(io, layer) write Flux's one-line form of a layer, such as
# Conv((3, 3), 2 => 4, relu, pad=1); print, string and repr still write every field.
# A tuple of equal sizes is written as one (Flux's _maybetuple_string).
maybetuple_string(t) = all(==(t[1]), t) ? string(t[1]) : string(t)
function show_conv_options(io, l)
  l.σ === identity || print(io, ", ", l.σ)
  all(==(0), l.pad) || print(io, ", pad=", maybetuple_string(l.pad))
  all(==(1), l.stride) || print(io, ", stride=", maybetuple_string(l.stride))
  all(==(1), l.dilation) || print(io, ", dilation=", maybetuple_string(l.dilation))
  l.groups == 1 || print(io, ", groups=", l.groups)
  l.bias === false && print(io, ", bias=false")
end
function show(io::IO, l::Union{Conv, CrossCor, ConvTranspose})
  kernel = size(l.weight)[1:ndims(l.weight)-2]
  print(io, typeof(l), "(", kernel, ", ", _channels_in(l), " => ", _channels_out(l))
  show_conv_options(io, l)
  print(io, ")")
end
function show(io::IO, l::Dense)
  print(io, "Dense(", size(l.weight, 2), " => ", size(l.weight, 1))
  l.σ === identity || print(io, ", ", l.σ)
  l.bias === false && print(io, "; bias=false")
  print(io, ")")
end
function show(io::IO, m::Union{MaxPool, MeanPool})
  print(io, typeof(m), "(", m.window)
  all(==(0), m.pad) || print(io, ", pad=", maybetuple_string(m.pad))
  m.stride == m.window || print(io, ", stride=", maybetuple_string(m.stride))
  print(io, ")")
end
function show(io::IO, b::BatchNorm)
  channels = b.weight !== false ? length(b.weight) : b.μ !== nothing ? length(b.μ) : "?"
  print(io, "BatchNorm(", channels)
  b.σ === identity || print(io, ", ", b.σ)
  b.weight === false && print(io, ", affine=false")
  b.active === nothing || print(io, ", active=", b.active)
  print(io, ")")
end
show(io::IO, d::Dropout) = print(io, "Dropout(", static_value(d.p), d.dims === (:) ? "" : ", dims=$(d.dims)", ")")
function show(io::IO, c::Chain)
  print(io, "Chain(")
  for (i, layer) in enumerate(c.layers)
    i > 1 && print(io, ", ")
    show(io, layer)
  end
  print(io, ")")
end
