# FluxML/model-zoo's mlp_mnist.jl as published, its data replaced (mlp_mnist.edits
# lists the lines): including it runs its top level, train() with its defaults (ten
# epochs of Flux.train! under @epochs, with its callback, then the accuracies); then the
# script's loss_all is traced over its test data for a new model.
# check: -f loss_all test_data model

include("model_zoo/mlp_mnist.jl")

train_data, test_data = getdata(Args())
model = build_model()
