# Follows dfdx/Umlaut.jl test/test_trace.jl: the functions its tracer tests trace
# (non-primitive calls, methods for numbers and arrays with broadcasting, tuple
# unpacking, closures returned by functions, comprehensions over arrays, varargs and
# splatting, constructors, Val static parameters, returns inside branches, for and while
# loops with break and continue), here summed by one entry over a number and arrays.
# check: -f umlaut_all a A B xs

non_primitive(x) = 2x + 1
non_primitive_caller(x) = sin(non_primitive(x))

inc_mul(a::Real, b::Real) = a * (b + 1.0)
inc_mul(A::AbstractArray, B::AbstractArray) = inc_mul.(A, B)
inc_mul2(A::AbstractArray, B::AbstractArray) = A .* (B .+ 1)

make_tuple(a, b) = (a, b)
function tuple_unpack(x)
  a, b = make_tuple(1, 2)
  x + a
end

function make_adder(x)
  return y -> x + y
end
function add(x, y)
  adder = make_adder(x)
  adder(y)
end

function vararg_fn(x, xs...)
  return x + sum(xs)
end
multiarg_fn(x) = x
multiarg_fn(x, y) = x + y
multiarg_fn(x, y, z) = x + y + z

mutable struct Point x; y end
constructor_loss(a) = (p = Point(a, a); p.x + p.y)

inc_val(::Val{N}) where N = N + 1

function return_in_branch(x)
  if x > 0
    return 2x
  end
  return 3x
end

function loop1(a, n)
  a = 2a
  for i in 1:n
    a = a * n
  end
  return a
end

function loop2(a, b)
  while b > 0
    a = a * b
    b = b - 1
  end
  return a
end

function loop3(a, b)
  while b > 1
    b = b - 1
    a = b
    while a < 100
      a = a * b + 1
    end
  end
  return a
end

function loop4(x, n, m)
  for i in 1:n
    for j in 1:m
      x = 2x
    end
  end
  return x
end

function loop5(a, n)
  for i=1:3
    a = loop1(a, n)
  end
  return a
end

function myabs(x)
  if x >= 0
    return x
  else
    return -x
  end
end

function pow(x, n)
  r = 1
  for i=1:n
    r = x * r
  end
  return r
end

const1(x) = (y = 1; x + y)

function cond1(x)
  y = 2x
  if x > 0
    y = 3x
  end
  return y
end

function while1(x)
  y = 10
  while x > 5
    y -= 1
    x /= 2
  end
  return y * x
end

function while_continue(x)
  y = 1
  while y < x
    if y % 3 == 0
      y += 1
      continue
    end
    y *= 2
  end
  return y * x
end

function while_break(x)
  y = 1.0
  while true
    if y > x
      break
    end
    y *= 2y
  end
  return y
end

function umlaut_all(a, A, B, xs)
  total = non_primitive_caller(a) + sum(inc_mul(A, B)) + sum(inc_mul2(A, B))
  total += inc_mul(a, a) + tuple_unpack(a) + add(a, 2a)
  total += sum([x + 1 for x in xs] .* xs)
  total += vararg_fn(a, A[1], A[2], B[3]) + (t -> multiarg_fn(t...))((a, 2a))
  total += (x -> multiarg_fn((x, x, 1)...))(a) + multiarg_fn(a)
  total += constructor_loss(a) + inc_val(Val(2)) * a
  total += return_in_branch(a) + return_in_branch(-a)
  total += loop1(a, 3) + loop2(a, 3) + loop3(a, 3) + loop4(a, 2, 3) + loop5(a, 2)
  total += myabs(a) + myabs(-a) + pow(a, 3) + const1(a) + cond1(a) + cond1(-a)
  total += while1(7a) + while_continue(5a) + while_break(3a)
  total
end

a = 1.3
A = randn(3)
B = randn(3)
xs = randn(4)
@assert inc_val(Val(2)) == 3 && inc_val(Val(-1)) == 0
