# trace: -f f f32[3]
f(x) = sum(x[x .> 0])
