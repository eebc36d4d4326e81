# trace: -f f f32[3]
offsets = Float32[1, 2]
shift(x) = x .+ offsets
f(x) = sum(shift(x))
