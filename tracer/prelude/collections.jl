# The prelude (tracer/prelude/base.jl says what it is): Ref, Dict, exceptions, argmax and more of Base.

# ---- Ref ---------------------------------------------------------------------------------

# Ref(x): a box holding one value, which r[] reads and r[] = v replaces.
mutable struct RefValue
  x
end
Ref(x) = RefValue(x)
getindex(r::RefValue) = r.x
function setindex!(r::RefValue, v)
  r.x = v
  r
end

# ---- argmax, argmin, findmax, findmin ------------------------------------------------------

# The index of the first largest (smallest) element. For arrays of more dims it is the
# linear index: Julia's CartesianIndex is not here.
argmax(x::AbstractArray) = Prim.argmax(vec(x); dim=1)[]
argmin(x::AbstractArray) = argmax(-x)
findmax(x::AbstractArray) = (maximum(x), argmax(x))
findmin(x::AbstractArray) = (minimum(x), argmin(x))

# inv(x) of a number: 1 / x (of an integer, a float, as Julia's).
inv(x::Integer) = 1 / x
inv(x::AbstractFloat) = one(x) / x

# `.+` as a value (Base.BroadcastFunction(+)): calls its function broadcast.
struct BroadcastFunction
  f
end
(b::BroadcastFunction)(xs...) = b.f.(xs...)

# ---- exceptions ----------------------------------------------------------------------------

# throw(e) stops the program with e's type and message, as Julia prints an uncaught one.
# There is no try/catch here: an exception always ends the program (@test_throws looks at
# it first). Julia's usual exception types, with their fields:
abstract type Exception end
struct ArgumentError <: Exception
  msg
end
struct DimensionMismatch <: Exception
  msg
end
struct ErrorException <: Exception
  msg
end
struct AssertionError <: Exception
  msg
end
struct DomainError <: Exception
  val
  msg
end
DomainError(val) = DomainError(val, "")
struct KeyError <: Exception
  key
end
# Julia's MethodError holds the function and the arguments; here its message.
struct MethodError <: Exception
  msg
end
# Integer arithmetic's errors, as the built-ins raise them too (1 ÷ 0, Int(2.5),
# checked_add(typemax(Int), 1)).
struct OverflowError <: Exception
  msg
end
struct DivideError <: Exception end
struct InexactError <: Exception
  func
  T
  val
end
exception_text(e::Exception) = string(typeof(e), ": ", e.msg)
exception_text(e::DomainError) = string("DomainError with ", e.val, ": ", e.msg)
exception_text(e::DivideError) = "DivideError: integer division error"
# InexactError(:trunc, Int64, 2.5) is "InexactError: trunc(Int64, 2.5)"; the type is not
# repeated where the function is the type (Int64(2.5)).
function exception_text(e::InexactError)
  T = string(e.func) == string(e.T) ? "" : string(e.T, ", ")
  string("InexactError: ", e.func, "(", T, e.val, ")")
end
exception_text(e::KeyError) = string("KeyError: key ", repr(e.key), " not found")
throw(e::Exception) = error(exception_text(e))

# ---- undef ---------------------------------------------------------------------------------

# `Vector{Float32}(undef, n)`: Julia leaves the contents unset; here they are zeros.
struct UndefInitializer
end
const undef = UndefInitializer()

# ---- Dict ----------------------------------------------------------------------------------

# Dict(k => v, ...), Dict(pairs), Dict{K, V}(): values by key. Keys compare with isequal
# (numbers, strings, symbols, tuples of them); iteration, keys and values follow the
# order in which keys were first set, where Julia's follows their hashes. The typed count
# keeps Dict(k1 => v1, k2 => v2, k3 => v3) from being taken for the implied constructor.
mutable struct Dict
  keys
  vals
  count::Int
end
Dict() = Dict([], [], 0)
function Dict(kvs...)
  d = Dict()
  # Dict(pairs...), or Dict(collection of pairs) such as a generator.
  for kv in (length(kvs) == 1 && !(kvs[1] isa Pair) ? kvs[1] : kvs)
    d[kv.first] = kv.second
  end
  d
end
function dict_slot(d::Dict, k)
  for i in 1:d.count
    isequal(d.keys[i], k) && return i
  end
  0
end
function getindex(d::Dict, k)
  i = dict_slot(d, k)
  i == 0 && error("KeyError: key ", repr(k), " not found")
  d.vals[i]
end
function setindex!(d::Dict, v, k)
  i = dict_slot(d, k)
  if i == 0
    push!(d.keys, k)
    push!(d.vals, v)
    d.count += 1
  else
    d.vals[i] = v
  end
  d
end
# ENV: the program's own environment, empty at the start: a trace does not depend on the
# shell's variables. Writes (ENV["DATADEPS_ALWAYS_ACCEPT"] = "true") are kept.
const ENV = Dict()
haskey(d::Dict, k) = dict_slot(d, k) != 0
get(d::Dict, k, default) = haskey(d, k) ? d[k] : default
function get!(d::Dict, k, default)
  haskey(d, k) || setindex!(d, default, k)
  d[k]
end
function delete!(d::Dict, k)
  i = dict_slot(d, k)
  if i != 0
    deleteat!(d.keys, i)
    deleteat!(d.vals, i)
    d.count -= 1
  end
  d
end
function pop!(d::Dict, k)
  v = d[k]
  delete!(d, k)
  v
end
keys(d::Dict) = copy(d.keys)
values(d::Dict) = copy(d.vals)
length(d::Dict) = d.count
isempty(d::Dict) = d.count == 0
iterate(d::Dict, i=1) = i > d.count ? nothing : (d.keys[i] => d.vals[i], i + 1)
pairs(d::Dict) = [d.keys[i] => d.vals[i] for i in 1:d.count]
# DrWatson's struct2dict(s): s's fields by name (Symbols), as scripts keep their arguments.
struct2dict(s) = Dict(f => getfield(s, f) for f in fieldnames(typeof(s)))
function merge(a::Dict, b::Dict)
  d = Dict()
  for (k, v) in a
    d[k] = v
  end
  for (k, v) in b
    d[k] = v
  end
  d
end

# ---- any, all, count -----------------------------------------------------------------------

count(x::AbstractArray) = isempty(x) ? 0 : sum(Int.(x))
any(x::AbstractArray) = count(x) > 0
all(x::AbstractArray) = count(x) == length(x)
count(t::Tuple) = foldl(+, map(Int, t); init=0)
any(t::Tuple) = count(t) > 0
all(t::Tuple) = count(t) == length(t)
count(f::Function, x) = count(f.(x))
any(f::Function, x) = any(f.(x))
all(f::Function, x) = all(f.(x))

# ---- more of Base -----------------------------------------------------------------------------

# only(x): the one element of a collection, as Julia's.
function only(x)
  length(x) == 1 || throw(ArgumentError("only: the collection has $(length(x)) elements, not 1"))
  first(x)
end

# ==(x), <(x), ...: functions of the other side, as Julia's Base.Fix2 (count(==(2), x)).
==(x) = y -> y == x
!=(x) = y -> y != x
<(x) = y -> y < x
<=(x) = y -> y <= x
>(x) = y -> y > x
>=(x) = y -> y >= x
isequal(x) = y -> isequal(y, x)
in(xs) = y -> y in xs
∈(xs) = y -> y in xs
∉(x, xs) = !(x in xs)
∉(xs) = y -> !(y in xs)
# x in xs of an array: whether some element equals x (a traced Bool when xs is traced).
in(x, xs::AbstractArray) = any(xs .== x)
isodd(n::Integer) = n % 2 != 0
iseven(n::Integer) = n % 2 == 0

# filter(f, x): the items for which f is true (of an array, a vector in column-major
# order); findall(f, x) and findall(mask): their linear indices.
filter(f, x::AbstractArray) = x[[f(v) for v in x]]
filter(f, t::Tuple) = (t[[i for i in 1:length(t) if f(t[i])]]...,)
findall(f::Function, x) = [i for i in 1:length(x) if f(x[i])]
findall(x::AbstractArray) = [i for i in 1:length(x) if x[i]]
# findfirst(f, x), findlast(f, x): the first or last index where f is true, or nothing.
function findfirst(f::Function, x)
  for i in 1:length(x)
    f(x[i]) && return i
  end
  nothing
end
function findlast(f::Function, x)
  for i in length(x):-1:1
    f(x[i]) && return i
  end
  nothing
end
findfirst(x::AbstractArray) = findfirst(identity, x)
findlast(x::AbstractArray) = findlast(identity, x)

# mapreduce(f, op, x; dims, init): the reductions the tape has (sum, prod, maximum,
# minimum) for +, *, max and min over arrays; a fold otherwise.
function mapreduce(f, op, x; dims=:, init=nothing)
  y = map(f, x)
  if y isa AbstractArray && dims === (:)
    op === (+) && return sum(y) + (init === nothing ? 0 : init)
    op === (*) && return prod(y) * (init === nothing ? 1 : init)
    op === max && init === nothing && return maximum(y)
    op === min && init === nothing && return minimum(y)
  elseif y isa AbstractArray
    op === (+) && return sum(y; dims=dims) .+ (init === nothing ? 0 : init)
    op === (*) && return prod(y; dims=dims) .* (init === nothing ? 1 : init)
    op === max && init === nothing && return maximum(y; dims=dims)
    op === min && init === nothing && return minimum(y; dims=dims)
  end
  dims === (:) || error("mapreduce with dims takes +, *, max or min")
  init === nothing ? reduce(op, y) : reduce(op, y; init=init)
end
function dropdims(x; dims)
  ds = dims isa Integer ? (dims,) : dims
  for d in ds
    size(x, d) == 1 || error("dropdims: dimension ", d, " has size ", size(x, d), ", not 1")
  end
  reshape(x, (size(x, i) for i in 1:ndims(x) if !(i in ds))...)
end
# cumsum along dims (1 by default): a product with a triangle of ones for floats.
function cumsum(x::AbstractArray; dims=1)
  n = size(x, dims)
  y = eltype(x) <: AbstractFloat ? x : float(x)
  tri = eltype(y).([i >= j ? 1 : 0 for i in 1:n, j in 1:n])
  back(s) = eltype(x) == eltype(s) ? s : eltype(x).(s)  # Int sums are exact in Float64
  (ndims(x) == 1 || dims == 1) && return back(tri * y)
  dims == 2 && ndims(x) == 2 && return back(y * tri')
  error("cumsum of an array of rank ", ndims(x), " along dims=", dims, " is not supported")
end
# kron(a, b) of vectors and matrices: block (i, j) is a[i, j] * b.
function kron(a::AbstractArray, b::AbstractArray)
  m, n = size(a, 1), size(a, 2)
  p, q = size(b, 1), size(b, 2)
  out = reshape(b, p, 1, q, 1) .* reshape(a, 1, m, 1, n)
  ndims(a) == 1 && ndims(b) == 1 ? reshape(out, :) : reshape(out, p * m, q * n)
end
# repeat(x, m, n...): x tiled m times down, n times across.
function repeat(x::AbstractArray, counts::Integer...)
  c = (counts..., ntuple(i -> 1, max(0, ndims(x) - length(counts)))...)
  length(c) > 2 && error("repeat of more than two dims is not supported")
  a, b = size(x, 1), size(x, 2)
  out = reshape(x, a, 1, b, 1) .* ones(eltype(x), 1, c[1], 1, length(c) == 2 ? c[2] : 1)
  length(c) == 1 && ndims(x) == 1 ? reshape(out, :) : reshape(out, a * c[1], :)
end
# isapprox(a, b; rtol, atol), a ≈ b: Julia's, with the norm of the difference for arrays.
# isapprox's default rtol, as Julia's: √eps of the less precise float type of the two
# (0 for integers), so Float32 results compare at Float32's precision.
rtol_default(T) = T <: AbstractFloat ? sqrt(eps(T)) : 0
function isapprox(a, b; atol=0,
                  rtol=atol > 0 ? 0 : max(rtol_default(eltype(a)), rtol_default(eltype(b))))
  d = a isa AbstractArray ? norm(a .- b) : abs(a - b)
  na, nb = a isa AbstractArray ? (norm(a), norm(b)) : (abs(a), abs(b))
  a == b || d <= max(atol, rtol * max(na, nb))
end
≈(a, b; kw...) = isapprox(a, b; kw...)
eachcol(x::AbstractMatrix) = slices_along(x, 2)
eachrow(x::AbstractMatrix) = slices_along(x, 1)
Embedding(nin::Integer, nout::Integer; kw...) = Embedding(nin => nout; kw...)

# join(xs, delim): the items' strings with delim between them, as Base's.
function join(xs, delim="")
  out = ""
  for (i, x) in enumerate(xs)
    out = i == 1 ? string(x) : string(out, delim, x)
  end
  out
end
