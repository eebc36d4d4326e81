# Follows FluxML/Flux.jl src/layers/normalise.jl and its tests: Dropout (with dims, put
# in test mode by testmode!, and with p = 0), LayerNorm over one and two dims, with an
# activation and affine=false, and BatchNorm with an activation over WHCN images and
# over (features, batch) matrices, inside a Chain with Dense and Conv (on Float64 images,
# which the Float32 Conv converts), AlphaDropout in test mode, InstanceNorm and GroupNorm,
# also with running statistics (test mode: the running ones; training: the batch's).
# check: -f norm_loss layers x x3 xb img xg

using Flux
using Flux: testmode!, trainmode!
using Statistics, Random
using Test

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
  # Training mode, with the batch's statistics (unset, a BatchNorm trains inside gradient
  # only, as Flux's).
  bn = trainmode!(BatchNorm(5))
  bn_act = trainmode!(BatchNorm(2, tanh))
  conv_bn = trainmode!(Chain(Conv((3, 3), 2 => 3), BatchNorm(3, relu), flatten))
  # AlphaDropout in test mode, so that the tape is deterministic: the identity.
  alpha = AlphaDropout(0.5)
  testmode!(alpha)
  inorm = InstanceNorm(2)
  inorm_act = InstanceNorm(2, relu; affine=true)
  gnorm = GroupNorm(4, 2)
  inorm_stats = InstanceNorm(2; affine=true, track_stats=true)
  inorm_stats.μ .= [0.5f0, -1.0f0]
  inorm_stats.σ² .= [2.0f0, 0.5f0]
  gnorm_stats = trainmode!(GroupNorm(4, 2; track_stats=true))
  # With running statistics: in test mode (unset, outside gradient) they normalize; in
  # training the batch's do, as without them. Flux's names for BatchNorm's fields.
  im = randn(4, 4, 2, 1)
  @test inorm_stats(im)[:, :, 2, 1] ≈ (im[:, :, 2, 1] .+ 1) ./ sqrt(0.5 + 1f-5)
  xgs = randn(3, 3, 4, 2)
  @test deepcopy(gnorm_stats)(xgs) ≈ gnorm(xgs)
  @test bn.β === bn.bias && bn.γ === bn.weight && Flux.hasaffine(bn)
  (; drop, drop_dims, chain, no_drop, ln, ln2, ln_act, bn, bn_act, conv_bn, alpha, inorm,
   inorm_act, gnorm, inorm_stats, gnorm_stats)
end

# The normalization of x over all of its entries, by loops: (x - μ) / sqrt(σ² + ϵ).
function normalise_by_hand(x, ϵ)
  μ = 0.0
  for i in 1:length(x)
    μ += x[i]
  end
  μ /= length(x)
  σ² = 0.0
  for i in 1:length(x)
    σ² += (x[i] - μ)^2
  end
  (x .- μ) ./ sqrt(σ² / length(x) + ϵ)
end

function norm_loss(layers, x, x3, xb, img, xg)
  l = layers
  total = sum(abs2, l.drop(x)) + sum(l.drop_dims(x)) + sum(abs2, l.chain(x)) + sum(l.no_drop(x))
  y = l.ln(x)
  # LayerNorm's output has mean 0 and variance 1 over its dims (before the scale).
  @assert all(abs.(mean(y; dims=1)) .< 1e-6)
  total += sum(abs2, y .* (1:5)) + sum(abs2, l.ln2(x3) .* x3) + sum(l.ln_act(x) .* x)
  # BatchNorm promotes to the input's Float64; its output has mean 0 over the batch.
  @assert eltype(l.bn(xb)) == Float64
  @assert all(abs.(mean(l.bn(xb); dims=2)) .< 1e-6)
  # The Chain's Conv has Flux's Float32 weights: the Float64 images are converted.
  @test eltype(l.conv_bn(img)) == Float32
  total += sum(abs2, l.bn(xb) .* xb) + sum(l.bn_act(img) .* img) + sum(abs2, l.conv_bn(img))
  @test l.alpha(x) == x
  total += sum(abs2, l.alpha(x))
  # InstanceNorm: each channel of each image over its W and H; GroupNorm: each group of
  # 4 ÷ 2 channels of each sample.
  yi = l.inorm(img)
  @test size(yi) == size(img)
  @test yi[:, :, 2, 3] ≈ normalise_by_hand(img[:, :, 2, 3], 1f-5)
  @test l.inorm_act(img) ≈ relu.(yi)
  yg = l.gnorm(xg)
  @test yg[:, :, 3:4, 1] ≈ normalise_by_hand(xg[:, :, 3:4, 1], 1f-5)
  @test !(yg[:, :, 1:2, 1] ≈ normalise_by_hand(xg[:, :, 1:4, 1], 1f-5)[:, :, 1:2])
  total += sum(abs2, yi .* img) + sum(l.inorm_act(img) .* img) + sum(abs2, yg .* xg)
  total += sum(abs2, l.inorm_stats(img) .* img) + sum(abs2, l.gnorm_stats(xg) .* xg)
  # Flux.normalise: zero mean, unit (uncorrected) deviation along dims, ϵ added to σ², as
  # Flux 0.14's and LayerNorm's.
  xn = Flux.normalise(x; dims=1)
  @test all(abs.(mean(xn; dims=1)) .< 1e-6)
  @test xn[:, 2] ≈ (x[:, 2] .- mean(x[:, 2])) ./ sqrt(var(x[:, 2]; corrected=false) + 1f-5)
  @test LayerNorm(size(x, 1))(x) ≈ xn
  total += sum(abs2, xn .* x)
  total
end

Random.seed!(7)
layers = build_layers()
x = randn(5, 4)
x3 = randn(3, 4, 2)
# Float64 input, as in Flux's BatchNorm tests: the layer's Float32 scale and bias are
# promoted.
xb = randn(5, 4)
img = randn(5, 5, 2, 3)
xg = randn(3, 3, 4, 2)
