# trace: -f g f32[2]
f(x) = x .* scale
g(x) = f(x) .+ 1
