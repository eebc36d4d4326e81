# Follows FluxML/Flux.jl src/losses/functions.jl and test/losses.jl: every loss of
# Flux.Losses with its keywords (agg=sum, agg=identity, a weighted agg, dims, delta, beta,
# gamma, margin), label_smoothing of one-hot and binary targets, on probabilities from
# softmax and sigmoid of the same logits.
# check: -f all_losses ŷ y yb logits dist

using Flux
using Flux.Losses
using Flux: onehotbatch
using Statistics, Random

# ytape: label_smoothing, tversky_loss, binary_focal_loss, focal_loss and
# siamese_contrastive_loss are not in the prelude; they are written here as Flux writes them.
function label_smoothing(y, α; dims::Int=1)
  if dims == 0
    y .* (1 - α) .+ α / 2
  else
    y .* (1 - α) .+ α / size(y, dims)
  end
end
function tversky_loss(ŷ, y; beta=0.7)
  num = sum(y .* ŷ) + 1
  den = sum(y .* ŷ + beta * (1 .- y) .* ŷ + (1 - beta) * y .* (1 .- ŷ)) + 1
  1 - num / den
end
function binary_focal_loss(ŷ, y; agg=mean, gamma=2, eps=eps(eltype(ŷ)))
  ŷ = ŷ .+ eps
  p_t = y .* ŷ + (1 .- y) .* (1 .- ŷ)
  ce = -log.(p_t)
  weight = (1 .- p_t) .^ gamma
  agg(weight .* ce)
end
function focal_loss(ŷ, y; dims=1, agg=mean, gamma=2, eps=eps(eltype(ŷ)))
  ŷ = ŷ .+ eps
  agg(sum(@. -y * (1 - ŷ)^gamma * log(ŷ); dims=dims))
end
siamese_contrastive_loss(ŷ, y; agg=mean, margin=1) =
  agg(@. (1 - y) * ŷ^2 + y * max(0, margin - ŷ)^2)

function all_losses(ŷ, y, yb, logits, dist)
  p = softmax(logits)
  σp = sigmoid.(logits)
  w = [1.0, 2.0, 3.0, 4.0]
  total = mse(ŷ, y) + mse(ŷ, y; agg=sum) + sum(mse(ŷ, y; agg=identity))
  total += mse(ŷ, y; agg=x -> mean(w' .* x))
  total += mae(ŷ, y) + msle(abs.(ŷ), abs.(y)) + huber_loss(ŷ, y) + huber_loss(ŷ, y; delta=0.5)
  total += crossentropy(p, yb) + crossentropy(p, label_smoothing(yb, 0.1))
  total += crossentropy(p, yb; agg=sum) + logitcrossentropy(logits, yb)
  total += logitcrossentropy(logits, label_smoothing(yb, 0.2); agg=sum)
  total += binarycrossentropy(σp, yb) + binarycrossentropy(σp, label_smoothing(yb, 0.1; dims=0))
  total += logitbinarycrossentropy(logits, yb)
  total += kldivergence(p, label_smoothing(yb, 0.3)) + poisson_loss(abs.(ŷ) .+ 0.1, abs.(y))
  total += hinge_loss(ŷ, 2 .* yb .- 1) + squared_hinge_loss(ŷ, 2 .* yb .- 1)
  total += dice_coeff_loss(σp, yb) + tversky_loss(σp, yb) + tversky_loss(σp, yb; beta=0.5)
  total += binary_focal_loss(σp, yb) + focal_loss(p, yb) + focal_loss(p, yb; gamma=1)
  total += siamese_contrastive_loss(dist, yb[1, :]) + siamese_contrastive_loss(dist, yb[2, :]; margin=2)
  total += Flux.Losses.mse(ŷ, y) + Flux.logitcrossentropy(logits, yb; dims=1)
  total
end

Random.seed!(8)
ŷ = randn(3, 4)
y = randn(3, 4)
yb = onehotbatch([1, 3, 2, 1], 1:3)
logits = randn(3, 4)
dist = rand(4) .* 2
