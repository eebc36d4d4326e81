# ytape trace trace/branch.jl -f f x
x = [1.0, -2.0]
f(x) = sum(x) > 0 ? sum(x) : -sum(x)
