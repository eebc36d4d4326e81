# Follows the 3-d cases of FluxML/Flux.jl test/layers/conv.jl: a small 3-d CNN (Conv with
# stride, pad and dilation, MaxPool with pad, MeanPool with stride, a reshape lambda, Dense),
# a grouped Conv, CrossCor, DepthwiseConv, ConvTranspose with stride, outpad and groups, and
# NNlib's maxpool and meanpool over (W, H, D, C, N) volumes, also with windows of only
# padding; Conv, CrossCor and ConvTranspose checked against loops, the pools against their
# definitions.
# check: -f conv3d_loss layers x

using Test
using Flux
using Random

init64(dims...) = randn(dims...) ./ sqrt(prod(dims[1:end-1]))

# Independent loops: the cross-correlation of x (W, H, D, cin, N) with w (k1, k2, k3, cin,
# cout), unpadded, and Flux's ConvTranspose at stride s: each input element scattered
# through the weight (k1, k2, k3, cout, cin) flipped.
function crosscor3_loops(x, w)
  k1, k2, k3, cin, cout = size(w)
  y = zeros(size(x, 1) - k1 + 1, size(x, 2) - k2 + 1, size(x, 3) - k3 + 1, cout, size(x, 5))
  for n in 1:size(x, 5), o in 1:cout, l in 1:size(y, 3), j in 1:size(y, 2), i in 1:size(y, 1)
    acc = 0.0
    for c in 1:cin, cc in 1:k3, bb in 1:k2, a in 1:k1
      acc += x[i + a - 1, j + bb - 1, l + cc - 1, c, n] * w[a, bb, cc, c, o]
    end
    y[i, j, l, o, n] = acc
  end
  y
end
function convtranspose3_loops(x, w, s)
  k1, k2, k3, cout, cin = size(w)
  y = zeros((size(x, 1) - 1) * s + k1, (size(x, 2) - 1) * s + k2, (size(x, 3) - 1) * s + k3,
            cout, size(x, 5))
  for n in 1:size(x, 5), c in 1:cin, l in 1:size(x, 3), j in 1:size(x, 2), i in 1:size(x, 1)
    for o in 1:cout, cc in 1:k3, bb in 1:k2, a in 1:k1
      y[(i - 1) * s + a, (j - 1) * s + bb, (l - 1) * s + cc, o, n] +=
        x[i, j, l, c, n] * w[k1 + 1 - a, k2 + 1 - bb, k3 + 1 - cc, o, c]
    end
  end
  y
end
# The max and the mean of each 2x2x2 window at stride 2 (no padding).
function pool3_loops(x, f)
  y = zeros(size(x, 1) ÷ 2, size(x, 2) ÷ 2, size(x, 3) ÷ 2, size(x, 4), size(x, 5))
  for n in 1:size(x, 5), c in 1:size(x, 4), l in 1:size(y, 3), j in 1:size(y, 2), i in 1:size(y, 1)
    y[i, j, l, c, n] = f(x[2i-1:2i, 2j-1:2j, 2l-1:2l, c, n])
  end
  y
end

function build_layers()
  cnn = Chain(
    Conv((3, 3, 3), 2 => 4, relu; pad=1, init=init64),
    MaxPool((2, 2, 2); pad=(0, 1, 0)),
    Conv((2, 2, 2), 4 => 3, tanh; stride=(1, 1, 2), dilation=(1, 2, 1), init=init64),
    MeanPool((2, 1, 1); stride=(1, 1, 1)),
    x -> reshape(x, :, size(x, 5)),
    Dense(6, 3; init=init64), softmax)
  grouped = Conv((1, 2, 3), 2 => 4; groups=2, pad=(0, 0, 1, 0, 2, 1), init=init64)
  grouped.bias .= randn(4)
  crosscor = CrossCor((2, 3, 2), 2 => 2; init=init64)
  depthwise = DepthwiseConv((2, 2, 2), 2 => 4; stride=2, init=init64)
  convt = ConvTranspose((2, 3, 2), 2 => 3; stride=2, init=init64)
  convt_out = ConvTranspose((3, 3, 3), 2 => 2; stride=2, pad=1, outpad=(1, 0, 1), groups=2,
                            init=init64)
  # Conv is a true convolution: CrossCor with the kernel reversed along all three dims.
  x = randn(5, 6, 4, 2, 1)
  flipped = crosscor.weight[end:-1:1, end:-1:1, end:-1:1, :, :]
  @test Conv(flipped, false)(x) ≈ CrossCor(crosscor.weight, false)(x)
  @test crosscor(x) ≈ crosscor3_loops(x, crosscor.weight)
  @test convt(x) ≈ convtranspose3_loops(x, convt.weight, 2)
  @test maxpool(x[1:4, :, :, :, :], PoolDims(x[1:4, :, :, :, :], 2)) ≈ pool3_loops(x[1:4, :, :, :, :], maximum)
  @test MeanPool((2, 2, 2))(x) ≈ pool3_loops(x[1:4, :, :, :, :], v -> sum(v) / 8)
  (; cnn, grouped, crosscor, depthwise, convt, convt_out)
end

function conv3d_loss(layers, x)
  l = layers
  y = l.cnn(x)
  @test size(y) == (3, 2)
  total = Flux.Losses.mse(y, [1.0 0.0; 0.0 1.0; 0.0 0.0])
  @test size(l.grouped(x)) == (6, 6, 6, 4, 2)
  @test size(l.depthwise(x)) == (3, 3, 2, 4, 2)
  @test size(l.convt(x)) == (12, 13, 10, 3, 2)
  @test size(l.convt_out(x)) == (12, 11, 10, 2, 2)
  for m in (l.grouped, l.crosscor, l.depthwise, l.convt, l.convt_out)
    total += sum(abs2, m(x))
  end
  total += sum(maxpool(x, PoolDims(x, (2, 3, 2); stride=(1, 2, 2), padding=1)))
  # Windows of only padding (the first and last along each dim), as NNlib's: -floatmax
  # for max pooling, left out of the loss here, and 0 for mean pooling.
  y = MaxPool((2, 2, 2); stride=2, pad=3)(x)
  @test size(y) == (6, 6, 5, 2, 2) && y[1, 1, 1, 1, 1] == -floatmax(Float64)
  total += sum(abs2, y[2:5, 2:5, 2:4, :, :]) + sum(abs2, MeanPool((2, 2, 2); stride=2, pad=3)(x))
  total + sum(abs2, meanpool(x, PoolDims(x, 3; padding=(1, 0, 0, 1, 1, 1))))
end

Random.seed!(3)
layers = build_layers()
x = randn(6, 6, 5, 2, 2)
