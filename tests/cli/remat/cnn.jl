# A small CNN for ytape remat's command-line test (tests/cli/remat.sh): convolutions, batch
# norms, relus, a residual sum, pooling, dropout (a random draw remat must keep) and a dense
# head, on 16 images of 12x12.
using Flux

model = Chain(CrossCor((3, 3), 1 => 8; pad=1), BatchNorm(8, relu),
              SkipConnection(Chain(CrossCor((3, 3), 8 => 8; pad=1), BatchNorm(8, relu)), +),
              CrossCor((3, 3), 8 => 8; pad=1), BatchNorm(8, relu), MaxPool((2, 2)),
              CrossCor((3, 3), 8 => 16; pad=1), BatchNorm(16, relu), MaxPool((2, 2)),
              Flux.flatten, Dropout(0.25), Dense(144 => 10))
Flux.trainmode!(model)
loss(model, x, y) = Flux.logitcrossentropy(model(x), y)
