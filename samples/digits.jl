# The handwritten digits (samples/data/README.md): a small CNN and an MLP, each with a
# training step that is one tape (for the CNN a random shift of the batch; the forward
# pass, the gradient, AdamW's update on a cosine schedule) and an evaluation.
# scripts/train.sh traces them and trains with `ytape train`:
#
#   ytape trace samples/digits.jl -f train_step cnn opt_cnn step x y -o step.json --save-inputs init.safetensors
#   ytape trace samples/digits.jl -f evaluate cnn xtest ytest -o eval.json
#   ytape train step.json --init init.safetensors --data samples/data/digits_train.safetensors \
#       --eval eval.json --eval-data samples/data/digits_test.safetensors --epochs 40
#
# Images are 8x8x1 (WHCN), pixel values in [0, 1]; labels one-hot columns of 10.
using Flux, Optimisers

seed!(1)

# Three 3x3 convolutions with batch norm, pooled down to 2x2x64, then dropout and a linear
# layer to the 10 classes. CrossCor (PyTorch's Conv2d; Flux's Conv flips its kernel), so
# that bench/compare_torch_train.py trains the same model from the same weights.
cnn = Chain(CrossCor((3, 3), 1 => 32; pad=1), BatchNorm(32, relu),
            CrossCor((3, 3), 32 => 32; pad=1), BatchNorm(32, relu), MaxPool((2, 2)),
            CrossCor((3, 3), 32 => 64; pad=1), BatchNorm(64, relu), MaxPool((2, 2)),
            Flux.flatten, Dropout(0.5), Dense(256 => 10))
mlp = Chain(Flux.flatten, Dense(64 => 128, relu), Dropout(0.2), Dense(128 => 10))

const epochs = 40
const steps = epochs * (1500 ÷ 32)  # the last incomplete batch of each epoch is dropped
const schedule = CosAnneal(3f-3, 1f-4, steps, false)
opt_cnn = Optimisers.setup(AdamW(2f-3, (0.9f0, 0.999f0), 1f-4), cnn)
opt_mlp = Optimisers.setup(AdamW(2f-3, (0.9f0, 0.999f0), 1f-4), mlp)
step = 1f0  # the step count, a float so that it is an input the tape carries

# Example batches: their shapes fix the tapes' (32 samples a step, the 297 test samples in
# one evaluation); ytape train feeds the real ones.
x = zeros(Float32, 8, 8, 1, 32)
y = zeros(Float32, 10, 32)
xtest = zeros(Float32, 8, 8, 1, 297)
ytest = zeros(Float32, 10, 297)

# Each image moved by up to a pixel in each direction, at random: a random op of the tape,
# drawn anew in every step (ytape train gives each step its own key).
function jitter(x)
  w, h, c, n = size(x)
  p = cat(zeros(Float32, 1, h, c, n), x, zeros(Float32, 1, h, c, n); dims=1)
  p = cat(zeros(Float32, w + 2, 1, c, n), p, zeros(Float32, w + 2, 1, c, n); dims=2)
  k = floor.(rand(Float32, 1, 1, 1, n) .* 9f0)  # which of the 9 shifts, per image
  out = zeros(Float32, w, h, c, n)
  j = 0
  for dx in 0:2, dy in 0:2
    out = out .+ ifelse.(k .== j, p[1+dx:w+dx, 1+dy:h+dy, :, :], 0f0)
    j += 1
  end
  out
end

# Shifted images help a network that starts with a convolution, which sees a shifted
# digit alike; an MLP sees each pixel by its position, and they only blur its input.
shifts_help(model) = model.layers[1] isa Union{Conv, CrossCor}

# One step: the loss and its gradient (batch norm and dropout train inside withgradient,
# batch norm moving its running statistics), then AdamW's update at the schedule's rate.
# The outputs named like the inputs carry over to the next step.
function train_step(model, opt_state, step, x, y)
  x = shifts_help(model) ? jitter(x) : x
  loss, grads = Flux.withgradient(m -> Flux.logitcrossentropy(m(x), y), model)
  opt_state = Optimisers.adjust(opt_state, schedule(step))
  opt_state, model = Optimisers.update(opt_state, model, grads[1])
  (model = model, opt_state = opt_state, step = step + 1, loss = loss)
end

# Outside gradient the layers are in test mode: batch norm uses its running statistics and
# dropout passes everything.
function evaluate(model, x, y)
  ŷ = model(x)
  (loss = Flux.logitcrossentropy(ŷ, y), accuracy = mean(Flux.onecold(ŷ) .== Flux.onecold(y)))
end
