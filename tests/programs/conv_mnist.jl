# Follows FluxML/model-zoo vision/conv_mnist/conv_mnist.jl: LeNet-5 (two Conv + MaxPool
# blocks, flatten, three Dense layers) trained with logitcrossentropy on one-hot labels.
# MNIST is replaced by a batch of three random 16x16 images of four classes.
# check: -f train_loss model x y

using Flux
using Flux: onehotbatch, onecold, flatten
using Flux.Losses: logitcrossentropy
using Statistics, Random

# Float64 weights, so that the finite differences of the check are accurate.
init64(dims...) = randn(dims...) ./ sqrt(prod(dims[1:end-1]))

function LeNet5(; imgsize=(28, 28, 1), nclasses=10)
  out_conv_size = (imgsize[1] ÷ 4 - 3, imgsize[2] ÷ 4 - 3, 16)

  return Chain(
    Conv((5, 5), imgsize[end] => 6, relu; init=init64),
    MaxPool((2, 2)),
    Conv((5, 5), 6 => 16, relu; init=init64),
    MaxPool((2, 2)),
    flatten,
    Dense(prod(out_conv_size), 120, relu; init=init64),
    Dense(120, 84, relu; init=init64),
    Dense(84, nclasses; init=init64),
  )
end

loss(ŷ, y) = logitcrossentropy(ŷ, y)

# What the training loop's `Flux.gradient(ps) do ... end` differentiates.
function train_loss(model, x, y)
  ŷ = model(x)
  loss(ŷ, y)
end

# The accuracy part of eval_loss_accuracy, run on the example data at top level.
accuracy(model, x, y) = sum(onecold(model(x)) .== onecold(y)) / size(x)[end]

num_params(model) = sum(length, Flux.params(model))

round4(x) = round(x, digits=4)

Random.seed!(0)
imgsize = (16, 16, 1)
model = LeNet5(; imgsize=imgsize, nclasses=4)
x = rand(imgsize..., 3)
labels = [0, 3, 1]
y = onehotbatch(labels, 0:3)
acc = accuracy(model, x, y)
@assert 0 <= acc <= 1
@assert round4(acc) == round(acc * 10000) / 10000
@assert round4(1 / 3) == 0.3333
@assert num_params(model) == 156 + 2416 + 16 * 120 + 120 + 120 * 84 + 84 + 84 * 4 + 4
