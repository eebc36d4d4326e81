# Follows FluxML/Flux.jl test/layers/basic.jl's Float16 cases: Dense and Bilinear made from
# Float16 weights keep Float16 (their biases too), and Flux's f16 converts a model; the
# loss of a Float16 MLP is traced to an f16 tape, whose gradient is f16.
# check: -f loss model x

using Test
using Flux

@test Dense(rand(Float16, 100, 10), true).bias isa Vector{Float16}
b3 = Flux.Bilinear(randn(Float16, 3, 4, 5), true, tanh)
@test b3.bias isa Vector{Float16}
@test size(b3(rand(4), rand(5))) == (3,)

model = f16(Chain(Dense(4 => 8, tanh), Dense(8 => 2)))
@test eltype(model[1].weight) == Float16
x = rand(Float16, 4, 3)
@test model(x) isa Matrix{Float16}

loss(model, x) = sum(abs2, model(x)) / 6
