# Follows FluxML/model-zoo vision/vae_mnist/vae_mnist.jl: an Encoder struct (a tanh Dense
# layer, then Dense layers for μ and logσ), a Chain decoder, the reparameterization
# z = μ + ε .* exp.(logσ), and model_loss: the KL divergence written with @., the
# reconstruction's logitbinarycrossentropy and an L2 penalty on the decoder's weights.
# MNIST is replaced by a batch of three random 5x5 "images" (25 inputs), latent size 2.
# check: -f model_loss encoder decoder λ x device

using Flux
using Flux: @functor
using Flux.Losses: logitbinarycrossentropy
using Random

struct Encoder
  linear
  μ
  logσ
end
@functor Encoder

Encoder(input_dim::Int, latent_dim::Int, hidden_dim::Int; init=Base.randn) = Encoder(
  Dense(input_dim, hidden_dim, tanh; init=init),   # linear
  Dense(hidden_dim, latent_dim; init=init),        # μ
  Dense(hidden_dim, latent_dim; init=init),        # logσ
)

function (encoder::Encoder)(x)
  h = encoder.linear(x)
  encoder.μ(h), encoder.logσ(h)
end

Decoder(input_dim::Int, latent_dim::Int, hidden_dim::Int; init=Base.randn) = Chain(
  Dense(latent_dim, hidden_dim, tanh; init=init),
  Dense(hidden_dim, input_dim; init=init)
)

# The noise is a random op of the tape: each run draws it from its own key, and the
# gradient check's runs share one key, so its finite differences see the same noise.
function reconstuct(encoder, decoder, x, device)
  μ, logσ = encoder(x)
  z = μ + device(randn(Float32, size(logσ))) .* exp.(logσ)
  μ, logσ, decoder(z)
end

function model_loss(encoder, decoder, λ, x, device)
  μ, logσ, decoder_z = reconstuct(encoder, decoder, x, device)
  len = size(x)[end]
  # KL-divergence
  kl_q_p = 0.5f0 * sum(@. (exp(2f0 * logσ) + μ^2 -1f0 - 2f0 * logσ)) / len

  logp_x_z = -sum(logitbinarycrossentropy(decoder_z, x)) / len
  # regularization
  reg = λ * sum(x->sum(x.^2), Flux.params(decoder))

  -logp_x_z + kl_q_p + reg
end

Random.seed!(2)
input_dim, latent_dim, hidden_dim = 25, 2, 8
encoder = Encoder(input_dim, latent_dim, hidden_dim)
decoder = Decoder(input_dim, latent_dim, hidden_dim)
λ = 0.01
x = rand(input_dim, 3)
device = cpu
# Flux.params: the decoder's two weights and two biases, each once.
ps = Flux.params(decoder)
@assert length(ps) == 4 && ps[1] === decoder[1].weight && ps[4] === decoder[2].bias
@assert sum(length, ps) == 2 * 8 + 8 + 8 * 25 + 25
@assert sum(x->sum(x.^2), ps) ≈ sum(abs2, decoder[1].weight) + sum(abs2, decoder[1].bias) +
  sum(abs2, decoder[2].weight) + sum(abs2, decoder[2].bias)
