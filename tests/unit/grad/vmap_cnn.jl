# The digits CNN of samples/digits.jl at a smaller width, in test mode (its batch norms use
# their running statistics; no dropout), on one 8x8 image: tests/unit/grad/vmap_test.cc
# batches its gradient into per-example gradients.
using Flux

model = Chain(CrossCor((3, 3), 1 => 4; pad=1), BatchNorm(4, relu), MaxPool((2, 2)),
              CrossCor((3, 3), 4 => 8; pad=1), BatchNorm(8, relu), MaxPool((2, 2)),
              Flux.flatten, Dropout(0.5), Dense(32 => 10))
Flux.testmode!(model)
x = rand(Float32, 8, 8, 1, 1)
y = Float32.(Flux.onehotbatch([3], 0:9))
loss(model, x, y) = Flux.logitcrossentropy(model(x), y)
