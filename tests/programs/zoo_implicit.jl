# In the style of FluxML/model-zoo's older scripts (mlp_mnist, conv_mnist, vae_mnist): a
# keyword Args struct with @with_kw, CUDA's questions, a DataLoader of one-hot batches, and
# training with implicit parameters three ways, Flux.train! under @epochs with a callback,
# Flux.gradient(ps) do ... end with Flux.Optimise.update!, and Flux.pullback(ps); then the
# trained model's loss is traced, differentiated and checked. The data are small random
# arrays of four classes.
# check: -f loss_of model xs ys

using Flux, Statistics, Random
using Flux: onehotbatch, onecold, @epochs
using Flux.Data: DataLoader
using Flux.Losses: logitcrossentropy
using Parameters: @with_kw
using CUDA

@with_kw mutable struct Args
  η::Float64 = 1e-2
  batchsize::Int = 8
  epochs::Int = 3
  device::Function = has_cuda() ? gpu : cpu
end

function getdata(args)
  ENV["DATADEPS_ALWAYS_ACCEPT"] = "true"
  xtrain, ytrain = rand(Float32, 6, 32), rand(0:3, 32)
  DataLoader((xtrain, onehotbatch(ytrain, 0:3)), batchsize=args.batchsize, shuffle=true)
end

build_model(; nin=6, nclasses=4) = Chain(Dense(nin, 16, relu), Dense(16, nclasses))

function loss_all(dataloader, model)
  l = 0f0
  for (x, y) in dataloader
    l += logitcrossentropy(model(x), y)
  end
  l / length(dataloader)
end

function train(; kws...)
  args = Args(; kws...)
  Random.seed!(5)
  data = args.device.(getdata(args))
  m = args.device(build_model())
  loss(x, y) = logitcrossentropy(m(x), y)
  calls = Ref(0)
  before = loss_all(data, m)
  # Flux.train!, as mlp_mnist calls it.
  @epochs args.epochs Flux.train!(loss, Flux.params(m), data, ADAM(args.η), cb = () -> calls[] += 1)
  @assert calls[] == args.epochs * length(data)
  # The loop written out, as conv_mnist does, with weight decay.
  ps = Flux.params(m)
  opt = Flux.Optimise.Optimiser(WeightDecay(1f-4), ADAM(args.η))
  for (x, y) in data
    gs = Flux.gradient(ps) do
      loss(x, y)
    end
    Flux.Optimise.update!(opt, ps, gs)
  end
  # And with pullback, as vae_mnist does.
  for (x, y) in data
    l, back = Flux.pullback(() -> loss(x, y), ps)
    Flux.Optimise.update!(Descent(0.01), ps, back(1f0))
  end
  after = loss_all(data, m)
  @assert after < before "the loss did not fall: $before, then $after"
  m
end

model = train()
xs = rand(Float32, 6, 5)
ys = onehotbatch([0, 1, 2, 3, 1], 0:3)
loss_of(model, xs, ys) = logitcrossentropy(model(xs), ys)
