# Per-example gradients of the digits CNN (samples/digits.jl): the loss of one image, whose
# gradient `ytape vmap` batches over 64 (docs/vmap.md; bench/per_example.py).
#
#   ytape trace samples/digits_per_example.jl -f loss1 model x1 y1 -o one.json --save-inputs one.safetensors
#   ytape grad one.json --wrt model -o one_grad.json
#   ytape vmap one_grad.json --over x1,y1 --size 64 -o per_example.json
#
# The model in test mode: its batch norms use their running statistics and dropout is off,
# so that each example's gradient is a function of that example alone (batch statistics
# would mix the batch; a per-example gradient of them is the gradient of a batch of one).
include("digits.jl")

model = cnn
Flux.testmode!(model)
x1 = xtest[:, :, :, 1:1]
y1 = ytest[:, 1:1]
loss1(model, x1, y1) = Flux.logitcrossentropy(model(x1), y1)
