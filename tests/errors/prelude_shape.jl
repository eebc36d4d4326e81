# trace: -f loss model x
# An error inside the prelude points at the program's call.
model = Chain(Dense(3, 4, relu), Dense(4, 2))
x = ones(Float32, 5)
loss(model, x) = sum(model(x))
