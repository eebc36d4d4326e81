# trace: -f f f32[2]
# `../` leads out of the program's folder (errors/): refused, naming the folder to allow.
include("../programs/mlp_mnist.jl")
f(x) = x
