# vmap in programs (docs/vmap.md), as JAX's vmap with the batch as the last dim: a function
# of one example mapped over a batch, per-example gradients of a small CNN and of a Dense
# layer, tuples and reductions among the results; each against a loop over the examples.
# The entry traces a vmap of a per-example loss, which ytape then differentiates.
# check: -f batched_loss model xs ys

using Flux
using Test

model = Chain(Conv((3, 3), 1 => 4, relu; pad=1), MaxPool((2, 2)), Flux.flatten, Dense(64 => 3))
xs = rand(Float32, 8, 8, 1, 1, 5)   # five examples of one 8x8 image each
ys = rand(Float32, 3, 1, 5)
loss(m, x, y) = sum((m(x) .- y) .^ 2)

per_example(x, y) = gradient(m -> loss(m, x, y), model)[1]
grads = vmap(per_example, xs, ys)
for b in 1:5
  one = per_example(xs[:, :, :, :, b], ys[:, :, b])
  @test grads.layers[1].weight[:, :, :, :, b] ≈ one.layers[1].weight
  @test grads.layers[4].weight[:, :, b] ≈ one.layers[4].weight
  @test grads.layers[4].bias[:, b] ≈ one.layers[4].bias
end

W = Float32[1 2; 3 4; 5 6]
pairs = vmap((x, y) -> (W * x, sum(x .* y)), Float32[1 2 3; 4 5 6], Float32[1 1 2; 2 3 3])
@test pairs[1] ≈ W * Float32[1 2 3; 4 5 6]
@test pairs[2] ≈ Float32[9, 17, 24]
@test size(vmap(x -> x[:, 1:2] .+ W[1:2, :]', rand(Float32, 2, 3, 7))) == (2, 2, 7)

batched_loss(model, xs, ys) = sum(vmap((x, y) -> loss(model, x, y), xs, ys))
