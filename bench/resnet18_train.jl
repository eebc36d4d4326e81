# ResNet-18's training step for bench/distributed.sh: samples/resnet18.jl's model, a
# softmax cross-entropy over 1000 classes, SGD with momentum, at a batch of 8 images of
# 224x224. `batch(x, y)` returns its arguments: traced with --save-inputs it writes a
# data file of 8 samples.
include("../samples/resnet18.jl")
using Flux, Optimisers

opt_state = Optimisers.setup(Momentum(0.01f0, 0.9f0), model)
x = rand(Float32, 224, 224, 3, 8)
y = Flux.onehotbatch(rand(1:1000, 8), 1:1000)

function train_step(model, opt_state, x, y)
  loss, grads = Flux.withgradient(m -> Flux.logitcrossentropy(m(x), y), model)
  opt_state, model = Optimisers.update(opt_state, model, grads[1])
  (model = model, opt_state = opt_state, loss = loss)
end

batch(x, y) = (x = x, y = y)
