# Softmax regression on the handwritten digits (samples/data/README.md), trained by
# `ytape train`. The gradient and the SGD update are written out by hand, so that one call
# of train_step is one whole training step: the same kind of tape as a step written with
# `withgradient` and an optimizer (docs/training.md).
#
#   ytape trace samples/digits_softmax.jl -f train_step model x y -o step.json --save-inputs init.safetensors
#   ytape trace samples/digits_softmax.jl -f evaluate model xtest ytest -o eval.json
#   ytape train step.json --data samples/data/digits_train.safetensors --init init.safetensors \
#       --epochs 5 --eval eval.json --eval-data samples/data/digits_test.safetensors -o model.safetensors

const batch = 32
const lr = 0.5f0

# Flux's layout: weight is classes x pixels.
model = (weight = zeros(Float32, 10, 64), bias = zeros(Float32, 10))
# Example arguments: only their types matter, and the batch size is the last dim.
x = zeros(Float32, 8, 8, 1, batch)
y = zeros(Float32, 10, batch)
xtest = zeros(Float32, 8, 8, 1, 297)  # the whole test set in one batch
ytest = zeros(Float32, 10, 297)

pixels(x) = reshape(x, 64, size(x, 4))
logits(model, x) = model.weight * pixels(x) .+ model.bias
crossentropy_mean(z, y) = -sum(y .* logsoftmax(z; dims=1)) / size(z, 2)

function train_step(model, x, y)
  z = logits(model, x)
  loss = crossentropy_mean(z, y)
  dz = (softmax(z; dims=1) .- y) ./ size(z, 2)  # d loss / d z
  dweight = dz * pixels(x)'
  dbias = vec(sum(dz; dims=2))
  model = (weight = model.weight .- lr .* dweight, bias = model.bias .- lr .* dbias)
  return (model = model, loss = loss)
end

# The loss alone: `ytape grad` of its tape gives the gradient train_step writes out by hand
# (tests/unit/train/samples_test.cc compares them).
loss(model, x, y) = crossentropy_mean(logits(model, x), y)

function evaluate(model, x, y)
  z = logits(model, x)
  # A sample is right when its label's logit is the largest.
  hit = z .== maximum(z; dims=1)
  accuracy = sum(ifelse.(hit, y, 0f0)) / size(z, 2)
  return (loss = crossentropy_mean(z, y), accuracy = accuracy)
end
