# Follows dfdx/Yota.jl test/test_grad.jl: the small functions its gradient tests check
# (linear layers with broadcasting, a keyword mean, a multi-path LSTM fragment, getindex,
# cat, iteration over a tuple, broadcasting shapes, literal powers, transpose and
# adjoint, mutable structs with methods, nested structs, tuple unpacking), here summed by
# one entry so that one gradient check covers them all.
# check: -f yota_all W b x y c t

import Statistics

loss_simple(W, b, x) = sum(W * x .+ b)
loss_double_broadcast(W, b, x) = sum(sin.(W * x) .+ b)
loss_double_broadcast2(b, x) = sum(x .* x .+ b)
loss_kw_mean(W, b, x) = Statistics.mean(W * x .+ b; dims=1)[1]

# originally a simplified version of lstm_forward
function multipath(y, c)
  f = tanh.(y[1:5, :])
  c_ = f .* c
  h_ = tanh.(c_)
  return h_, c_
end

sum_bcast(x, y) = sum(x .+ y)
sum_prod_bcast(x, y) = sum(x .* y)

mutable struct Linear{T}
  W::AbstractArray{T,2}
  b::AbstractArray{T}
end
forward(m::Linear, X) = m.W * X .+ m.b
loss(m::Linear, X) = sum(forward(m, X))

mutable struct Point x; y end
constructor_loss(a) = (p = Point(a, a); p.x + p.y)

mutable struct Line p1; p2 end
function add_points(x)
  p = Point(x, x)
  l = Line(p, p)
  return 2*l.p1.x + 5*l.p2.y
end

make_t(x) = tuple(x, x)
function make_t_loss(x)
  a, b = make_t(x)
  return a + b
end

function yota_all(W, b, x, y, c, t)
  total = loss_simple(W, b, x) + loss_double_broadcast(W, b, x) + loss_kw_mean(W, b, x)
  total += loss_double_broadcast2(b, b) + sum(tanh.(W * x .+ b))
  total += sum(abs2.(tanh.(W * x .+ b) .- b))
  h, c2 = multipath(y, c)
  total += sum(h) + sum(c2)
  total += sum(sum(y, dims=1))
  # getindex
  total += y[1] + y[2, 3] + sum(y[:, 1]) + sum(y[3:end, 2:3])
  # cat
  total += sum(vcat(y, c)) + sum(hcat(y, y)) + sum(cat(c, c, c; dims=3) .^ 2)
  # iterate over a tuple
  total += iterate(t)[1] + iterate(t, 2)[1] + iterate(t, 3)[1]
  # broadcasting of every pair of shapes
  for (p, q) in ((y[1:4, :], c[1:4, 1]), (c, c[:, 1:1]), (c, c[1:1, :]), (c[:, 1], c))
    total += sum_bcast(p, q) + sum_prod_bcast(p, q)
  end
  total += sum(x .^ 2) + sum(transpose(b)) + sum(adjoint(W)) + sum(transpose(W) * b)
  # structs
  total += loss(Linear(W, b), hcat(x, x)) + constructor_loss(t[1]) + add_points(t[2])
  total += make_t_loss(t[3])
  total
end

W = randn(4, 3)
b = randn(4)
x = randn(3)
y = randn(20, 4)
c = randn(5, 4)
t = (1.0, 2.0, 3.0)
@assert iterate(t) == (1.0, 2) && iterate(t, 3) == (3.0, 4) && iterate(t, 4) === nothing
@assert iterate([5, 6]) == (5, 2) && iterate([5, 6], 3) === nothing
