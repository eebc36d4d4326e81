# Follows FluxML/Flux.jl test/layers/conv.jl: the pooling layers (AdaptiveMaxPool,
# AdaptiveMeanPool, GlobalMaxPool, GlobalMeanPool, MaxPool, MeanPool with stride and
# pad), the "CNN" Chain (Conv, MaxPool, a reshape lambda, Dense, softmax), Conv from
# weight and bias arrays and with bias=false, asymmetric padding, DepthwiseConv,
# non-square windows, stride/pad/dilation combinations, SamePad, and CrossCor and
# ConvTranspose checked against loops, and a 1-D Conv over (W, C, N) checked by hand.
# check: -f conv_loss layers x x3

using Test
using Flux
using Random

init64(dims...) = randn(dims...) ./ sqrt(prod(dims[1:end-1]))

# Independent loops: the cross-correlation of x (W, H, cin, N) with weight (k, k, cin, cout)
# and, as Flux's ConvTranspose, the transpose of the convolution (the flipped kernel), each
# input pixel scattered through the weight (k, k, cout, cin) flipped.
function crosscor_loops(x, w, b)
  k1, k2, cin, cout = size(w)
  y = zeros(size(x, 1) - k1 + 1, size(x, 2) - k2 + 1, cout, size(x, 4))
  for n in 1:size(x, 4), o in 1:cout, j in 1:size(y, 2), i in 1:size(y, 1)
    acc = b[o]
    for c in 1:cin, bb in 1:k2, a in 1:k1
      acc += x[i + a - 1, j + bb - 1, c, n] * w[a, bb, c, o]
    end
    y[i, j, o, n] = acc
  end
  y
end
function convtranspose_loops(x, w, b, s)
  k1, k2, cout, cin = size(w)
  y = zeros((size(x, 1) - 1) * s + k1, (size(x, 2) - 1) * s + k2, cout, size(x, 4))
  for n in 1:size(x, 4), c in 1:cin, j in 1:size(x, 2), i in 1:size(x, 1)
    for o in 1:cout, bb in 1:k2, a in 1:k1
      y[(i - 1) * s + a, (j - 1) * s + bb, o, n] += x[i, j, c, n] * w[k1 + 1 - a, k2 + 1 - bb, o, c]
    end
  end
  y .+ reshape(b, 1, 1, :, 1)
end

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
  @test size(ŷ) == (27, 29)
  @test ŷ[1, 1] ≈ 6.0 && ŷ[2, 2] ≈ 9.0 && ŷ[end, 1] ≈ 4.0 && ŷ[1, end] ≈ 3.0
  @test ŷ[1, end-1] ≈ 6.0 && ŷ[end, end] ≈ 2.0
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
  crosscor = CrossCor((3, 2), 2 => 3, tanh; init=init64)
  crosscor.bias .= randn(3)
  convt = ConvTranspose((3, 3), 1 => 2; stride=2, init=init64)
  convt.bias .= randn(2)
  xs = randn(5, 4, 2, 2)
  @test size(crosscor(xs)) == (3, 3, 3, 2)
  @test crosscor(xs) ≈ tanh.(crosscor_loops(xs, crosscor.weight, crosscor.bias))
  xt = randn(4, 3, 1, 2)
  @test size(convt(xt)) == (9, 7, 2, 2)
  @test convt(xt) ≈ convtranspose_loops(xt, convt.weight, convt.bias, 2)
  @test !(convt(xt) ≈ convtranspose_loops(xt, convt.weight, 0 .* convt.bias, 2))
  conv1d = Conv((3,), 1 => 1; init=init64)
  conv1d.bias .= randn(1)
  x1 = randn(10, 1, 2)
  @test size(conv1d(x1)) == (8, 1, 2)
  # Conv is a true convolution, as Flux's: it flips the kernel (CrossCor does not).
  w1 = reverse(conv1d.weight[:, 1, 1])
  @test conv1d(x1)[4, 1, 2] ≈ conv1d.bias[1] + sum(x1[4:6, 1, 2] .* w1)
  (; pools, cnn, with_bias, no_bias, asym, depthwise, windows, strided, same, crosscor, convt,
   conv1d)
end

function conv_loss(layers, x, x3)
  l = layers
  total = 0.0
  for p in l.pools
    total += sum(abs2, p(x3))
  end
  @test size(l.pools[4](x3)) == (1, 1, 3, 2)
  y = l.cnn(x)
  @test size(y) == (5, 2)
  total += Flux.Losses.mse(y, [1.0 0.0; 0.0 1.0; 0.0 0.0; 0.0 0.0; 0.0 0.0])
  total += sum(l.with_bias(x)) + sum(abs2, l.no_bias(x))
  ŷ = l.asym(x)[:, :, 1, 1]
  @test size(ŷ) == (11, 13)
  total += sum(ŷ) + ŷ[1, 1] + ŷ[end, end]
  @test size(l.depthwise[1](x3), 3) == 6
  total += sum(abs2, l.depthwise[1](x3)) + sum(abs2, l.depthwise[2](x3))
  for m in (l.windows..., l.strided..., l.same...)
    total += sum(abs2, m(x))
  end
  @test size(l.strided[2](x)) == (8, 8, 2, 2)
  @test size(l.same[2](x)) == size(x)
  @test size(l.same[3](x))[1:end-2] == (4, 4)
  @test size(l.convt(x)) == (25, 25, 2, 2)
  total += sum(abs2, l.crosscor(x3[:, :, 1:2, :])) + sum(abs2, l.convt(x))
  x1 = reshape(x[:, 1, 1, :], 12, 1, 2)
  @test size(l.conv1d(x1)) == (10, 1, 2)
  total += sum(abs2, l.conv1d(x1))
  total
end

Random.seed!(5)
layers = build_layers()
x = randn(12, 12, 1, 2)
x3 = randn(12, 12, 3, 2)
