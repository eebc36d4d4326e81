# trace: -f step model state grad
model = Chain(Dense(ones(Float32, 3, 2), zeros(Float32, 3)), Dense(ones(Float32, 1, 3), false))
state = Optimisers.setup(Adam(), model)
# The second layer's weight is (1, 3); this gradient is its transpose.
grad = (layers = (nothing, (weight = ones(Float32, 3, 1), bias = nothing, σ = nothing)),)
step(m, s, g) = Optimisers.update(s, m, g)
