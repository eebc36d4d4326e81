# trace: -f f f32[2]
# included/cycle_back.jl includes this file again
include("included/cycle_back.jl")
f(x) = x
