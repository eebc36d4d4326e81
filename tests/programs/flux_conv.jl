# Follows FluxML/Flux.jl test/layers/conv.jl: the pooling layers (AdaptiveMaxPool,
# AdaptiveMeanPool, GlobalMaxPool, GlobalMeanPool, MaxPool, MeanPool with stride and
# pad), the "CNN" Chain (Conv, MaxPool, a reshape lambda, Dense, softmax), Conv from
# weight and bias arrays and with bias=false, asymmetric padding, DepthwiseConv,
# non-square windows, stride/pad/dilation combinations and SamePad.
# check: -f conv_loss layers x x3

# ytape: @test (Test) is not a supported macro ("the macro @test is not supported"):
# the checks are written with @assert.
using Flux
using Random

init64(dims...) = randn(dims...) ./ sqrt(prod(dims[1:end-1]))

# ytape: ≈ (isapprox) is not defined ("undefined variable '≈'"); Base's default
# tolerance, for numbers, is written here.
≈(a::Real, b::Real) = abs(a - b) <= sqrt(eps(Float64)) * max(abs(a), abs(b))

function build_layers()
  pools = (AdaptiveMaxPool((3, 3)), AdaptiveMeanPool((3, 3)), AdaptiveMeanPool((6, 2)),
           GlobalMaxPool(), GlobalMeanPool(), MaxPool((2, 2)), MeanPool((2, 2)),
           MaxPool((2, 2); stride=1), MeanPool((2, 2); stride=2, pad=1))
  cnn = Chain(
    Conv((2, 2), 1 => 4, relu; init=init64),
    MaxPool((2, 2)),
    Conv((2, 2), 4 => 3, relu; init=init64),
    MaxPool((2, 2)),
    x -> reshape(x, :, size(x, 4)),
    Dense(12, 5; init=init64), softmax)
  with_bias = Conv(randn(2, 2, 1, 3), randn(3))
  no_bias = Conv((2, 2), 1 => 3; bias=false, init=init64)
  asym = Conv((3, 3), 1 => 1, relu; pad=(0, 1, 1, 2), init=init64)
  asym.weight[:] .= 1.0
  asym.bias[:] .= 0.0
  ŷ = asym(ones(28, 28, 1, 1))[:, :, 1, 1]
  @assert size(ŷ) == (27, 29)
  @assert ŷ[1, 1] ≈ 6.0 && ŷ[2, 2] ≈ 9.0 && ŷ[end, 1] ≈ 4.0 && ŷ[1, end] ≈ 3.0
  @assert ŷ[1, end-1] ≈ 6.0 && ŷ[end, end] ≈ 2.0
  asym.weight .+= 0.1 .* randn(3, 3, 1, 1)
  depthwise = (DepthwiseConv((2, 2), 3 => 6; init=init64), DepthwiseConv((2, 3), 3 => 9; init=init64))
  windows = (Conv((3, 3), 1 => 1; init=init64), Conv((3, 1), 1 => 1; init=init64),
             Conv((1, 3), 1 => 1; init=init64), Conv((6, 1), 1 => 1, Flux.σ; init=init64))
  strided = (Conv((3, 3), 1 => 2; stride=2, init=init64),
             Conv((3, 3), 1 => 2; stride=2, pad=3, init=init64),
             Conv((3, 3), 1 => 2; stride=2, pad=3, dilation=2, init=init64))
  same = (Conv((3, 3), 1 => 1; pad=SamePad(), init=init64),
          Conv((4, 5), 1 => 1; pad=SamePad(), dilation=2, init=init64),
          Conv((3, 3), 1 => 1; pad=SamePad(), stride=3, init=init64))
  # ytape: left out, as they do not trace: 1-D convolutions, Conv((3,), 1 => 1) ("index 2
  # is out of bounds for dimension 1 of size 1"), and ConvTranspose and CrossCor
  # ("undefined variable 'ConvTranspose'", "undefined variable 'CrossCor'").
  (; pools, cnn, with_bias, no_bias, asym, depthwise, windows, strided, same)
end

function conv_loss(layers, x, x3)
  l = layers
  total = 0.0
  for p in l.pools
    total += sum(abs2, p(x3))
  end
  @assert size(l.pools[4](x3)) == (1, 1, 3, 2)
  y = l.cnn(x)
  @assert size(y) == (5, 2)
  total += Flux.Losses.mse(y, [1.0 0.0; 0.0 1.0; 0.0 0.0; 0.0 0.0; 0.0 0.0])
  total += sum(l.with_bias(x)) + sum(abs2, l.no_bias(x))
  ŷ = l.asym(x)[:, :, 1, 1]
  @assert size(ŷ) == (11, 13)
  total += sum(ŷ) + ŷ[1, 1] + ŷ[end, end]
  @assert size(l.depthwise[1](x3), 3) == 6
  total += sum(abs2, l.depthwise[1](x3)) + sum(abs2, l.depthwise[2](x3))
  for m in (l.windows..., l.strided..., l.same...)
    total += sum(abs2, m(x))
  end
  @assert size(l.strided[2](x)) == (8, 8, 2, 2)
  @assert size(l.same[2](x)) == size(x)
  @assert size(l.same[3](x))[1:end-2] == (4, 4)
  total
end

Random.seed!(5)
layers = build_layers()
x = randn(12, 12, 1, 2)
x3 = randn(12, 12, 3, 2)
