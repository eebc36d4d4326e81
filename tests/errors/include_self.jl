# trace: -f f f32[2]
include("include_self.jl")
f(x) = x
