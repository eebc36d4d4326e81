g(x) = x
include("../include_cycle.jl")
