# trace: -f f f32[2]
f(x) = sum((x .+ 1)
g(x) = f(x)
