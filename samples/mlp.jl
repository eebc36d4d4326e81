# A classifier (784-256-256-10) with cross-entropy on synthetic labels.
#
#   ytape trace samples/mlp.jl -f loss model x labels -o mlp.json --save-inputs mlp.safetensors
#   ytape run mlp.json --inputs mlp.safetensors

seed!(42)

const batch = 32

model = Chain(Dense(784 => 256, relu), Dense(256 => 256, relu), Dense(256 => 10))
x = randn(Float32, 784, batch)
labels = [i % 10 + 1 for i in 1:batch]

loss(model, x, labels) = logitcrossentropy_labels(model(x), labels)
