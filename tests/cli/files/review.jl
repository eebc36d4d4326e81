# A model for diff_review.sh, which edits `act` and `width` with sed: a layer's activation
# swapped, a layer made wider, and an edit inside a loop that repeats it.
using Flux
seed!(1)
act = relu
width = 8
model = Chain(Dense(4 => width, act), Dense(width => 2))
x = rand(Float32, 4, 3)
W = rand(Float32, 4, 4)
f(model, x) = sum(model(x))
function g(W, x)
  for i in 1:3
    x = act.(W * x)
  end
  sum(x)
end
