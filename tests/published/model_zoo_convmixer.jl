# FluxML/model-zoo's convmixer.jl as published, its data replaced (convmixer.edits
# lists the lines): train(1) runs one epoch at top level (the script's other settings are
# constants of train), then what its training loop's gradient differentiates is traced
# for a new ConvMixer of train's sizes, in train mode as inside that gradient (BatchNorm
# on the batch's statistics). `-f ℓ test_loader model device` traces the script's ℓ
# instead, a loss and an accuracy, whose two outputs `ytape grad --vjp` differentiates.
# check: -f batch_loss model x y

include("model_zoo/convmixer.jl")

train(1)

model = ConvMixer(3, 7, 2, 1, 1, 10)
trainmode!(model)  # as within train's gradient
train_loader, test_loader = get_data(4)
x, y = first(train_loader)
device = cpu
# The function of train's `gradient(()->Flux.logitcrossentropy(model(x), y, agg=sum), ps)`.
batch_loss(model, x, y) = Flux.logitcrossentropy(model(x), y, agg=sum)
