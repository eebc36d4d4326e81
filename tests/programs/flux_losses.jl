# Follows FluxML/Flux.jl src/losses/functions.jl and test/losses.jl: every loss of
# Flux.Losses with its keywords (agg=sum, agg=identity, a weighted agg, dims, delta, beta,
# gamma, margin), label_smoothing of one-hot and binary targets, on probabilities from
# softmax and sigmoid of the same logits.
# check: -f all_losses ŷ y yb logits dist

using Flux
using Flux.Losses
using Flux: onehotbatch
using Statistics, Random
using Test

# label_smoothing, tversky_loss, binary_focal_loss, focal_loss and
# siamese_contrastive_loss computed here by loops, independently of Flux's, to check them.
function smooth_by_hand(y, α; dims=1)
  out = zeros(size(y))
  for j in 1:size(y, 2), i in 1:size(y, 1)
    out[i, j] = dims == 0 ? y[i, j] * (1 - α) + α / 2 : y[i, j] * (1 - α) + α / size(y, dims)
  end
  out
end
function tversky_by_hand(ŷ, y, beta)
  tp, fp, fn = 0.0, 0.0, 0.0
  for i in 1:length(y)
    tp += y[i] * ŷ[i]
    fp += (1 - y[i]) * ŷ[i]
    fn += y[i] * (1 - ŷ[i])
  end
  1 - (tp + 1) / (tp + beta * fp + (1 - beta) * fn + 1)
end
function binary_focal_by_hand(ŷ, y, gamma)
  acc = 0.0
  for i in 1:length(y)
    p_t = y[i] == 1 ? ŷ[i] : 1 - ŷ[i]
    acc += -(1 - p_t)^gamma * log(p_t)
  end
  acc / length(y)
end
function focal_by_hand(ŷ, y, gamma)
  acc = 0.0
  for j in 1:size(y, 2), i in 1:size(y, 1)
    acc -= y[i, j] * (1 - ŷ[i, j])^gamma * log(ŷ[i, j])
  end
  acc / size(y, 2)
end
function siamese_by_hand(d, y, margin)
  acc = 0.0
  for i in 1:length(y)
    acc += y[i] == 0 ? d[i]^2 : max(0, margin - d[i])^2
  end
  acc / length(y)
end

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

p, σp = softmax(logits), sigmoid.(logits)
@test label_smoothing(yb, 0.1) ≈ smooth_by_hand(yb, 0.1)
@test label_smoothing(yb, 0.1; dims=0) ≈ smooth_by_hand(yb, 0.1; dims=0)
@test sum(label_smoothing(yb, 0.3); dims=1) ≈ ones(1, 4)
@test tversky_loss(σp, yb) ≈ tversky_by_hand(σp, yb, 0.7)
@test tversky_loss(σp, yb; beta=0.5) ≈ tversky_by_hand(σp, yb, 0.5)
@test binary_focal_loss(σp, yb) ≈ binary_focal_by_hand(σp, yb, 2)
@test focal_loss(p, yb) ≈ focal_by_hand(p, yb, 2)
@test focal_loss(p, yb; gamma=1) ≈ focal_by_hand(p, yb, 1)
@test siamese_contrastive_loss(dist, yb[1, :]) ≈ siamese_by_hand(dist, yb[1, :], 1)
@test siamese_contrastive_loss(dist, yb[2, :]; margin=2) ≈ siamese_by_hand(dist, yb[2, :], 2)
