# Follows FluxML/model-zoo vision/mlp_mnist/mlp_mnist.jl: build_model's Chain(Dense(784,
# 32, relu), Dense(32, 10)) on flattened images, loss_all averaging logitcrossentropy over
# the batches of a data loader, and the accuracy over the same batches. MNIST is replaced
# by two batches of four random 6x6 images of five classes.
# check: -f loss_all train_data model

using Flux, Statistics
using Flux: onehotbatch, onecold
using Flux.Losses: logitcrossentropy

function build_model(; imgsize=(28, 28, 1), nclasses=10)
  return Chain(
    Dense(prod(imgsize), 32, relu; init=Base.randn),
    Dense(32, nclasses; init=Base.randn))
end

function loss_all(dataloader, model)
  l = 0f0
  for (x, y) in dataloader
    l += logitcrossentropy(model(x), y)
  end
  l / length(dataloader)
end

function accuracy(data_loader, model)
  acc = 0
  for (x, y) in data_loader
    acc += sum(onecold(model(x)) .== onecold(y)) * 1 / size(x, 2)
  end
  acc / length(data_loader)
end

function getdata(nbatches, batchsize; imgsize=(28, 28), nclasses=10)
  batches = []
  for b in 1:nbatches
    # Reshape the images to flatten each into a column, one-hot-encode the labels.
    images = rand(imgsize..., batchsize)
    xtrain = Flux.flatten(images)
    ytrain = onehotbatch([(b + 2i) % nclasses for i in 1:batchsize], 0:nclasses-1)
    push!(batches, (xtrain, ytrain))
  end
  batches
end

Random.seed!(1)
train_data = getdata(2, 4; imgsize=(6, 6), nclasses=5)
model = build_model(; imgsize=(6, 6, 1), nclasses=5)
@show accuracy(train_data, model)
@assert 0 <= accuracy(train_data, model) <= 1
@assert onecold(train_data[1][2], 0:4) == [(1 + 2i) % 5 for i in 1:4]
