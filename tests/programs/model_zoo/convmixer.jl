# FluxML/model-zoo vision/convmixer_cifar10/convmixer.jl as stored in the project's search
# index (read_file id 4787702880, commit 52f3e9e555c6). Below this header the file is the
# source byte for byte, but for these lines (numbered as in the source, indentation kept):
#   24: the dataset to load (a keyword's default, MLDatasets.CIFAR10) no longer named:
#         was: function get_data(batchsize; dataset = MLDatasets.CIFAR10, idxs = nothing)
#         now: function get_data(batchsize; dataset = nothing, idxs = nothing)
#   32-33: CIFAR-10, as MLDatasets gives it (32x32x3xN Float32 images, Int labels),
#       replaced by 8 training and 4 test random images of four classes:
#         was: xtrain, ytrain = dataset.traindata(Float32)
#              xtest, ytest = dataset.testdata(Float32)
#         now: xtrain, ytrain = rand(Float32, 32, 32, 3, 8), rand(0:3, 8)
#              xtest, ytest = rand(Float32, 32, 32, 3, 4), rand(0:3, 4)
#   125-126: the BSON files of the model and the losses commented out, as a trace writes
#       no files (the first line keeps its trailing space):
#         was: @save "model.bson" model
#              @save "losses.bson" train_save test_save
#         now: # @save "model.bson" model
#              # @save "losses.bson" train_save test_save
# ../model_zoo_convmixer.jl runs and traces it.

using Flux, MLDatasets
using Flux: onehotbatch, onecold, DataLoader, Optimiser
using BSON:@save,@load


function ConvMixer(in_channels, kernel_size, patch_size, dim, depth, N_classes)
    f = Chain(
            Conv((patch_size, patch_size), in_channels=>dim, gelu; stride=patch_size),
            BatchNorm(dim),
            [
                Chain(
                    SkipConnection(Chain(Conv((kernel_size,kernel_size), dim=>dim, gelu; pad=SamePad(), groups=dim), BatchNorm(dim)), +),
                    Chain(Conv((1,1), dim=>dim, gelu), BatchNorm(dim))
                ) 
                for i in 1:depth
            ]...,
            AdaptiveMeanPool((1,1)),
            flatten,
            Dense(dim,N_classes)
        )
    return f
end

function get_data(batchsize; dataset = nothing, idxs = nothing)
    """
    idxs=nothing gives the full dataset, otherwise (for testing purposes) only the 1:idxs elements of the train set are given.
    """
    ENV["DATADEPS_ALWAYS_ACCEPT"] = "true" 

    # Loading Dataset
    if idxs==nothing
        xtrain, ytrain = rand(Float32, 32, 32, 3, 8), rand(0:3, 8)
        xtest, ytest = rand(Float32, 32, 32, 3, 4), rand(0:3, 4)
	else
        xtrain, ytrain = dataset.traindata(Float32, 1:idxs)
        xtest, ytest = dataset.testdata(Float32, 1:Int(idxs/10))
    end

    # Reshape Data to comply to Julia's (width, height, channels, batch_size) convention in case there are only 1 channel (eg MNIST)
    if ndims(xtrain)==3
        w = size(xtrain)[1]
        xtrain = reshape(xtrain, (w,w,1,:))
        xtest = reshape(xtest, (w,w,1,:))
    end
    
    ytrain, ytest = onehotbatch(ytrain, 0:9), onehotbatch(ytest, 0:9)

    train_loader = DataLoader((xtrain, ytrain), batchsize=batchsize, shuffle=true)
    test_loader = DataLoader((xtest, ytest), batchsize=batchsize)

    return train_loader, test_loader
end

function ℓ(dataloader, model, device)
    
    n = 0
    loss = 0.0f0
    acc = 0.0f0

    for (x,y) in dataloader
        x,y = x |> device, y |> device
        z = model(x)        
        loss += Flux.logitcrossentropy(z, y, agg=sum)
        acc += sum(onecold(z).==onecold(y))
        n += size(x)[end]
    end
    loss / n, acc / n
end


function train(n_epochs=100)

    #params: warning, the training can be long with these params
    train_loader, test_loader = get_data(128)
    η = 3e-4
    in_channel = 3
    patch_size = 2
    kernel_size = 7
    dim = 1#28
    dimPL = 2
    depth = 1#8
    use_cuda = true

    #logging the losses
    train_save = zeros(n_epochs, 2)
    test_save = zeros(n_epochs, 2)

    if use_cuda
        device = gpu
        @info "Training on GPU"
    else
        device = cpu
        @info "Training on CPU"
    end

    model = ConvMixer(in_channel, kernel_size, patch_size, dim, depth, 10) |> device

    ps = params(model)
    opt = Optimiser(
            WeightDecay(1f-3), 
            ClipNorm(1.0),
            ADAM(η)
            )

    for epoch in 1:n_epochs
        for (x,y) in train_loader
            x,y = x|>device, y|>device
            gr = gradient(()->Flux.logitcrossentropy(model(x), y, agg=sum), ps)
            Flux.Optimise.update!(opt, ps, gr)
        end

        #logging
        train_loss, train_acc = ℓ(train_loader, model, device) |> cpu
        test_loss, test_acc = ℓ(test_loader, model, device) |> cpu
        train_save[epoch,:] = [train_loss, train_acc]
        test_save[epoch,:] = [test_loss, test_acc]

        if epoch%5==0
            @info "Epoch $epoch : Train loss = $train_loss || Validation accuracy = $test_acc."
        end

    end

    model = model |> cpu
    # @save "model.bson" model 
    # @save "losses.bson" train_save test_save
end

if abspath(PROGRAM_FILE) == @__FILE__
    train()
end