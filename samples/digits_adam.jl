# The digits MLP of samples/digits_mlp.jl written with Flux's layers, withgradient and
# Optimisers.jl's Adam, its learning rate annealed by a cosine schedule of the step: one
# call of train_step is a whole training step, whose tape carries the model, the
# optimiser's state and the step count to the next (docs/training.md).
#
#   ytape trace samples/digits_adam.jl -f train_step model opt_state t x y -o step.json --save-inputs init.safetensors
#   ytape trace samples/digits_adam.jl -f evaluate model xtest ytest -o eval.json
#   ytape train step.json --data samples/data/digits_train.safetensors --init init.safetensors \
#       --epochs 5 --eval eval.json --eval-data samples/data/digits_test.safetensors -o model.safetensors
const batch = 32
const schedule = CosAnneal(0.01, 0.001, 500)

seed!(1)
model = Chain(flatten, Dense(64 => 32, relu), Dense(32 => 10))
opt_state = Optimisers.setup(Adam(), model)
t = 1.0  # the step, a float so that it is an input the tape carries
x = zeros(Float32, 8, 8, 1, batch)
y = zeros(Float32, 10, batch)
xtest = zeros(Float32, 8, 8, 1, 297)
ytest = zeros(Float32, 10, 297)

function train_step(model, opt_state, t, x, y)
  l, (g,) = withgradient(m -> logitcrossentropy(m(x), y), model)
  opt_state, model = Optimisers.update(Optimisers.adjust(opt_state, schedule(t)), model, g)
  return (model = model, opt_state = opt_state, t = t + 1, loss = l)
end

function evaluate(model, x, y)
  z = model(x)
  hit = z .== maximum(z; dims=1)
  return (loss = logitcrossentropy(z, y), accuracy = sum(ifelse.(hit, y, 0f0)) / size(z, 2))
end
