# The Rosenbrock function of a vector: a classic test of second derivatives.
rosenbrock(x) = sum(100 .* (x[2:end] .- x[1:end-1] .^ 2) .^ 2 .+ (1 .- x[1:end-1]) .^ 2)
x = [-1.2, 1.0, 0.5]
