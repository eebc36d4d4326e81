# A small MLP (64-32-10, relu, dropout) on the handwritten digits (samples/data/README.md),
# trained by `ytape train` with SGD with momentum. The backward pass and the optimizer are
# written out by hand, so that one call of train_step is one whole training step whose
# tape carries both the model and the optimizer state (docs/training.md).
#
#   ytape trace samples/digits_mlp.jl -f train_step model opt_state x y -o step.json --save-inputs init.safetensors
#   ytape trace samples/digits_mlp.jl -f evaluate model xtest ytest -o eval.json
#   ytape train step.json --data samples/data/digits_train.safetensors --init init.safetensors \
#       --epochs 10 --eval eval.json --eval-data samples/data/digits_test.safetensors -o model.safetensors

const batch = 32
const lr = 0.1f0
const momentum = 0.9f0
const keep = 0.9f0  # dropout keeps a hidden unit with this probability

seed!(1)
# Flux's layout: weight is out x in; scaled normal initial weights.
model = (w1 = randn(Float32, 32, 64) .* 0.125f0, b1 = zeros(Float32, 32),
         w2 = randn(Float32, 10, 32) .* 0.18f0, b2 = zeros(Float32, 10))
# The velocity of each parameter.
opt_state = (w1 = zeros(Float32, 32, 64), b1 = zeros(Float32, 32),
             w2 = zeros(Float32, 10, 32), b2 = zeros(Float32, 10))
x = zeros(Float32, 8, 8, 1, batch)
y = zeros(Float32, 10, batch)
xtest = zeros(Float32, 8, 8, 1, 297)
ytest = zeros(Float32, 10, 297)

pixels(x) = reshape(x, 64, size(x, 4))
crossentropy_mean(z, y) = -sum(y .* logsoftmax(z; dims=1)) / size(z, 2)

# Inverted dropout: a new mask in every step, drawn from the step's random key.
function train_step(model, opt_state, x, y)
  mask = ifelse.(rand(Float32, size(model.b1, 1), size(x, 4)) .< keep, 1f0 / keep, 0f0)
  return masked_step(model, opt_state, x, y, mask)
end

hidden(model, x) = model.w1 * pixels(x) .+ model.b1

# The step for a given dropout mask, and its loss alone: `ytape grad` of loss's tape gives
# the gradient that masked_step writes out by hand (tests/unit/train/samples_test.cc).
function loss(model, x, y, mask)
  z = model.w2 * (relu.(hidden(model, x)) .* mask) .+ model.b2
  return crossentropy_mean(z, y)
end

function masked_step(model, opt_state, x, y, mask)
  a0 = pixels(x)
  h = hidden(model, x)
  a1 = relu.(h) .* mask
  z = model.w2 * a1 .+ model.b2
  l = crossentropy_mean(z, y)
  dz = (softmax(z; dims=1) .- y) ./ size(z, 2)
  dh = (model.w2' * dz) .* mask .* ifelse.(h .> 0f0, 1f0, 0f0)
  g = (w1 = dh * a0', b1 = vec(sum(dh; dims=2)), w2 = dz * a1', b2 = vec(sum(dz; dims=2)))
  v = (w1 = momentum .* opt_state.w1 .+ g.w1, b1 = momentum .* opt_state.b1 .+ g.b1,
       w2 = momentum .* opt_state.w2 .+ g.w2, b2 = momentum .* opt_state.b2 .+ g.b2)
  model = (w1 = model.w1 .- lr .* v.w1, b1 = model.b1 .- lr .* v.b1,
           w2 = model.w2 .- lr .* v.w2, b2 = model.b2 .- lr .* v.b2)
  return (model = model, opt_state = v, loss = l)
end

function evaluate(model, x, y)
  z = model.w2 * relu.(hidden(model, x)) .+ model.b2
  hit = z .== maximum(z; dims=1)
  return (loss = crossentropy_mean(z, y), accuracy = sum(ifelse.(hit, y, 0f0)) / size(z, 2))
end
