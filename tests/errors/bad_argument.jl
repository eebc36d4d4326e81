# trace: -f f weights
W = ones(Float32, 2, 2)
f(W) = sum(W)
