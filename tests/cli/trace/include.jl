include("lib.jl")
using LinearAlgebra
f(x) = double(x)
