# Follows FluxML/model-zoo vision/convmixer_cifar10/convmixer.jl: ConvMixer, a patch
# embedding Conv with stride, then `depth` blocks spliced in from a comprehension, each a
# depthwise Conv (groups=dim, pad=SamePad()) inside a SkipConnection with +, and a 1x1
# Conv, all with gelu and BatchNorm; AdaptiveMeanPool, flatten, Dense; trained with
# logitcrossentropy(model(x), y, agg=sum). CIFAR-10 is replaced by two random 8x8 RGB
# images of three classes, dim 4, depth 2.
# check: -f ℓ model x y

using Flux, Random
using Flux: onehotbatch, onecold

function ConvMixer(in_channels, kernel_size, patch_size, dim, depth, N_classes)
  f = Chain(
    Conv((patch_size, patch_size), in_channels => dim, gelu; stride=patch_size),
    BatchNorm(dim),
    [
      Chain(
        SkipConnection(Chain(Conv((kernel_size, kernel_size), dim => dim, gelu; pad=SamePad(),
                                  groups=dim), BatchNorm(dim)), +),
        Chain(Conv((1, 1), dim => dim, gelu), BatchNorm(dim))
      )
      for i in 1:depth
    ]...,
    AdaptiveMeanPool((1, 1)),
    flatten,
    Dense(dim, N_classes)
  )
  return f
end

# The loss of one batch of ℓ's loop over the data loader (the accuracy is not
# differentiated).
ℓ(model, x, y) = Flux.logitcrossentropy(model(x), y, agg=sum) / size(x)[end]

Random.seed!(3)
model = ConvMixer(3, 3, 2, 4, 2, 3)
# Float32 images and Flux's default Float32 weights, as in the source (the gradient check
# passes in Float32).
x = rand(Float32, 8, 8, 3, 2)
y = onehotbatch([2, 0], 0:2)
acc = sum(onecold(model(x)) .== onecold(y)) / size(x)[end]
@assert onecold(y, 0:2) == [2, 0] && onecold(y) == [3, 1]
@assert 0 <= acc <= 1
