f(x) = x .* scale
g(x) = f(x) .+ 1
