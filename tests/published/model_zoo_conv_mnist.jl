# FluxML/model-zoo's conv_mnist.jl as published, its data replaced (conv_mnist.edits
# lists the lines): train() runs at top level through the script's own keywords (one
# epoch of batches of 4; no TensorBoard logger and no checkpoints, which write files),
# then what its training loop's Flux.gradient(ps) do ... end differentiates is traced for
# a new LeNet5.
# check: -f batch_loss model x y

include("model_zoo/conv_mnist.jl")

train(; epochs=1, batchsize=4, tblogger=false, checktime=0)

model = LeNet5()
x, y = first(get_data(Args(; batchsize=4))[1])
# The body of train's `gs = Flux.gradient(ps) do ... end`.
function batch_loss(model, x, y)
    ŷ = model(x)
    loss(ŷ, y)
end
