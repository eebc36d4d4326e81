# ytape trace trace/tiny.jl -f loss W x
seed!(1)
W = randn(Float32, 2, 3)
x = Float32[1, 2, 3]
loss(W, x) = sum(tanh.(W * x))
println("top level ran")
