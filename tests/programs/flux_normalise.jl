# Follows FluxML/Flux.jl src/layers/normalise.jl and its tests: Dropout (with dims, put
# in test mode by testmode!, and with p = 0), LayerNorm over one and two dims, with an
# activation and affine=false, and BatchNorm with an activation over WHCN images and
# over (features, batch) matrices, inside a Chain with Dense and Conv.
# check: -f norm_loss layers x x3 xb img

using Flux
using Flux: testmode!, trainmode!
using Statistics, Random

function build_layers()
  drop = Dropout(0.5)
  drop_dims = Dropout(0.3; dims=2)
  chain = Chain(Dense(5 => 4, relu; init=Base.randn), Dropout(0.4), Dense(4 => 3; init=Base.randn))
  testmode!(drop)
  testmode!(drop_dims)
  testmode!(chain)
  no_drop = Dropout(0.0)
  trainmode!(no_drop)
  ln = LayerNorm(5)
  ln2 = LayerNorm((3, 4))
  ln_act = LayerNorm(5, relu; affine=false)
  bn = BatchNorm(5)
  bn_act = BatchNorm(2, tanh)
  conv_bn = Chain(Conv((3, 3), 2 => 3), BatchNorm(3, relu), flatten)
  # ytape: left out, as they are not in the prelude: AlphaDropout, InstanceNorm, GroupNorm
  # ("undefined variable 'InstanceNorm'", ...) and Flux.normalise.
  (; drop, drop_dims, chain, no_drop, ln, ln2, ln_act, bn, bn_act, conv_bn)
end

function norm_loss(layers, x, x3, xb, img)
  l = layers
  total = sum(abs2, l.drop(x)) + sum(l.drop_dims(x)) + sum(abs2, l.chain(x)) + sum(l.no_drop(x))
  y = l.ln(x)
  # LayerNorm's output has mean 0 and variance 1 over its dims (before the scale).
  @assert all(abs.(mean(y; dims=1)) .< 1e-6)
  total += sum(abs2, y .* (1:5)) + sum(abs2, l.ln2(x3) .* x3) + sum(l.ln_act(x) .* x)
  # BatchNorm promotes to the input's Float64; its output has mean 0 over the batch.
  @assert eltype(l.bn(xb)) == Float64
  @assert all(abs.(mean(l.bn(xb); dims=2)) .< 1e-6)
  total += sum(abs2, l.bn(xb) .* xb) + sum(l.bn_act(img) .* img) + sum(abs2, l.conv_bn(img))
  total
end

Random.seed!(7)
layers = build_layers()
x = randn(5, 4)
x3 = randn(3, 4, 2)
# Float64 input, as in Flux's BatchNorm tests: the layer's Float32 scale and bias are
# promoted.
xb = randn(5, 4)
# ytape: the images are Float32: the Chain's Conv, with Flux's Float32 weights, does not
# take Float64 input ("conv2d: arguments must have one dtype, got f64[5,5,2,3] and
# f32[3,3,2,3]; convert one first"), where Flux converts the input to Float32.
img = randn(Float32, 5, 5, 2, 3)
