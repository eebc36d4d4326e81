# FluxML/model-zoo vision/mlp_mnist/mlp_mnist.jl as stored in the project's search index
# (read_file id 4916894054, commit 028d63c1b191). Below this header the file is the
# source byte for byte, but for these lines (numbered as in the source, indentation kept):
#   24-25: MNIST, as MLDatasets gives it (28x28xN Float32 images, Int labels), replaced by
#       8 training and 4 test random images of four classes:
#         was: xtrain, ytrain = MLDatasets.MNIST.traindata(Float32)
#              xtest, ytest = MLDatasets.MNIST.testdata(Float32)
#         now: xtrain, ytrain = rand(Float32, 28, 28, 8), rand(0:3, 8)
#              xtest, ytest = rand(Float32, 28, 28, 4), rand(0:3, 4)
# ../model_zoo_mlp_mnist.jl runs and traces it.

using Flux, Statistics
using Flux.Data: DataLoader
using Flux: onehotbatch, onecold, throttle, @epochs
using Flux.Losses: logitcrossentropy
using Parameters: @with_kw
using CUDA
using MLDatasets
if has_cuda()		# Check if CUDA is available
    @info "CUDA is on"
    CUDA.allowscalar(false)
end

@with_kw mutable struct Args
    η::Float64 = 3e-4       # learning rate
    batchsize::Int = 1024   # batch size
    epochs::Int = 10        # number of epochs
    device::Function = gpu  # set as gpu, if gpu available
end

function getdata(args)
    ENV["DATADEPS_ALWAYS_ACCEPT"] = "true"

    # Loading Dataset	
    xtrain, ytrain = rand(Float32, 28, 28, 8), rand(0:3, 8)
    xtest, ytest = rand(Float32, 28, 28, 4), rand(0:3, 4)
	
    # Reshape Data in order to flatten each image into a linear array
    xtrain = Flux.flatten(xtrain)
    xtest = Flux.flatten(xtest)

    # One-hot-encode the labels
    ytrain, ytest = onehotbatch(ytrain, 0:9), onehotbatch(ytest, 0:9)

    # Batching
    train_data = DataLoader((xtrain, ytrain), batchsize=args.batchsize, shuffle=true)
    test_data = DataLoader((xtest, ytest), batchsize=args.batchsize)

    return train_data, test_data
end

function build_model(; imgsize=(28,28,1), nclasses=10)
    return Chain(
 	    Dense(prod(imgsize), 32, relu),
            Dense(32, nclasses))
end

function loss_all(dataloader, model)
    l = 0f0
    for (x,y) in dataloader
        l += logitcrossentropy(model(x), y)
    end
    l/length(dataloader)
end

function accuracy(data_loader, model)
    acc = 0
    for (x,y) in data_loader
        acc += sum(onecold(cpu(model(x))) .== onecold(cpu(y)))*1 / size(x,2)
    end
    acc/length(data_loader)
end

function train(; kws...)
    # Initializing Model parameters 
    args = Args(; kws...)

    # Load Data
    train_data,test_data = getdata(args)

    # Construct model
    m = build_model()
    train_data = args.device.(train_data)
    test_data = args.device.(test_data)
    m = args.device(m)
    loss(x,y) = logitcrossentropy(m(x), y)
    
    ## Training
    evalcb = () -> @show(loss_all(train_data, m))
    opt = ADAM(args.η)
		
    @epochs args.epochs Flux.train!(loss, params(m), train_data, opt, cb = evalcb)

    @show accuracy(train_data, m)

    @show accuracy(test_data, m)
end

cd(@__DIR__)
train()
