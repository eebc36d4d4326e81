# The prelude (tracer/prelude/base.jl says what it is): Data loading, training loops and Flux's implicit parameters.

# ---- data loading and training loops (MLUtils, Flux) -------------------------------------------

# Observations lie along the last dim of arrays; of a tuple or named tuple, along each's.
numobs(x::AbstractArray) = size(x, ndims(x))
numobs(t::Union{Tuple, NamedTuple}) = numobs(first(t))
function getobs(x::AbstractArray, i)
  front = size(x)[1:end-1]
  reshape(reshape(x, :, numobs(x))[:, i], front..., length(i))
end
getobs(t::Tuple, i) = map(x -> getobs(x, i), t)
getobs(t::NamedTuple, i) = map(x -> getobs(x, i), t)
# MLUtils' chunk(x, n; dims=ndims(x)): x split along dims into n parts (fewer when they do
# not divide it) of cld(size(x, dims), n) slices each, the last one shorter; copies, where
# MLUtils gives views.
function chunk(x::AbstractArray, n::Integer; dims::Integer=ndims(x))
  len = size(x, dims)
  k = cld(len, n)
  [selectdim(x, dims, i:min(i + k - 1, len)) for i in 1:k:len]
end
# MLUtils' other names for observations and arrays.
shuffleobs(x::AbstractArray) = getobs(x, randperm(numobs(x)))
shuffleobs(t::Union{Tuple, NamedTuple}) = (order = randperm(numobs(t)); getobs(t, order))
# splitobs(data; at=0.7): the first `at` share of the observations, then the rest (or
# shares `at = (0.6, 0.2)`, then the rest), shuffled first with `shuffle=true`.
function splitobs(data; at = 0.7, shuffle::Bool = false)
  data = shuffle ? shuffleobs(data) : data
  n = numobs(data)
  shares = at isa Number ? (at,) : at
  parts, first = [], 1
  for share in shares
    last = first + round(Int, share * n) - 1
    push!(parts, getobs(data, first:last))
    first = last + 1
  end
  push!(parts, getobs(data, first:n))
  Tuple(parts)
end
# eachobs(data; batchsize=-1): each observation (batchsize -1) or batches of them.
eachobs(data; batchsize::Integer = -1, shuffle::Bool = false, partial::Bool = true) =
  batchsize < 0 ? [getobs(data, i) for i in (shuffle ? randperm(numobs(data)) : 1:numobs(data))] :
  DataLoader(data; batchsize, shuffle, partial)
mapobs(f, data) = [f(getobs(data, i)) for i in 1:numobs(data)]
# unbatch(x): the slices of x along its last dim; unstack(x; dims) along dims.
unbatch(x::AbstractArray) = [selectdim(x, ndims(x), i) for i in 1:size(x, ndims(x))]
unstack(x::AbstractArray; dims::Integer) = [selectdim(x, dims, i) for i in 1:size(x, dims)]
# batch(xs): the observations xs stacked on a new last dim (MLUtils', Flux.batch).
batch(xs) = stack(xs)
# batchseq(seqs, pad): sequences of different lengths padded with `pad` to the longest,
# then one batch per time step.
function batchseq(xs, pad = nothing)
  n = maximum(length, xs)
  padded = [vcat(x, fill(pad, n - length(x))) for x in xs]
  [batch([p[t] for p in padded]) for t in 1:n]
end
# zeros_like(x, T=eltype(x), sz=size(x)) and its kin: arrays like x.
zeros_like(x::AbstractArray, T::Type = eltype(x), sz = size(x)) = zeros(T, sz...)
ones_like(x::AbstractArray, T::Type = eltype(x), sz = size(x)) = ones(T, sz...)
fill_like(x::AbstractArray, v, T::Type = eltype(x), sz = size(x)) = fill(convert(T, v), sz...)
rand_like(x::AbstractArray, T::Type = eltype(x), sz = size(x)) = rand(T, sz...)
randn_like(x::AbstractArray, T::Type = eltype(x), sz = size(x)) = randn(T, sz...)
rand_like(rng::AbstractRNG, x::AbstractArray, T::Type = eltype(x), sz = size(x)) = rand(rng, T, sz...)
randn_like(rng::AbstractRNG, x::AbstractArray, T::Type = eltype(x), sz = size(x)) = randn(rng, T, sz...)
shuffle(x::AbstractVector) = x[randperm(length(x))]
shuffle(rng::AbstractRNG, x::AbstractVector) = x[randperm(rng, length(x))]

# DataLoader(data; batchsize=1, shuffle=false, partial=true): the batches of an array or a
# tuple of arrays, as MLUtils' (Flux.DataLoader). Each pass in a new order when shuffled,
# drawn from the program's generator (seed!); at top level, where training loops run.
struct DataLoader
  data
  batchsize
  shuffle
  partial
end
DataLoader(data; batchsize=1, shuffle=false, partial=true, rng=nothing) =
  DataLoader(data, batchsize, shuffle, partial)
# Flux 0.11's DataLoader(x, y; ...): the data as separate arguments.
DataLoader(x, y; kw...) = DataLoader((x, y); kw...)
function length(d::DataLoader)
  n = numobs(d.data)
  d.partial ? (n + d.batchsize - 1) ÷ d.batchsize : n ÷ d.batchsize
end
function iterate(d::DataLoader)
  n = numobs(d.data)
  iterate(d, (d.shuffle ? randperm(n) : collect(1:n), 1))
end
function iterate(d::DataLoader, state)
  order, k = state
  k > length(d) && return nothing
  idx = order[(k - 1) * d.batchsize + 1:min(k * d.batchsize, length(order))]
  (getobs(d.data, idx), (order, k + 1))
end

# ProgressMeter's Progress(n; desc, ...) and next!(p; showvalues, ...), as training loops
# report their steps: a count of the steps done, drawn nowhere (a trace has no terminal
# to redraw a bar in).
mutable struct Progress
  n
  counter
  desc
end
Progress(n::Integer; desc="Progress: ", kw...) = Progress(n, 0, desc)
next!(p::Progress; kw...) = (p.counter += 1; nothing)
finish!(p::Progress; kw...) = (p.counter = p.n; nothing)

# Images' (ColorTypes') Gray(x): a grey pixel is its value here, there being no colour
# types, so that the code that makes an image runs; writing one (FileIO's save) is not
# possible, as a trace writes no files.
Gray(x::Real) = x

# Flux.train!(loss, model, data, opt_state): a step of loss(model, batch...)'s gradient and
# Optimisers.update! per batch of data, writing into the model's arrays, as Flux 0.14's.
function train!(loss, model, data, opt_state)
  for batch in data
    b = batch isa Tuple ? batch : (batch,)
    grads = gradient(m -> loss(m, b...), model)
    Optimisers.update!(opt_state, model, grads[1])
  end
end

# Flux's device movers: this machine is the only device, so both are the identity; and
# CUDA.jl's questions, answered for a machine without a GPU (code that asks runs on the
# CPU, as it would in Julia there).
cpu(x) = x
gpu(x) = x
# Flux.outputsize(m, inputsizes...; padbatch=false): the size of m's output for inputs of
# those sizes (a batch dim of 1 appended with padbatch), run on zeros of a copy of m, so
# that a Recur's state is left as it was.
function outputsize(m, sizes::Tuple...; padbatch=false)
  length(sizes) == 1 && sizes[1] isa Tuple && !isempty(sizes[1]) && sizes[1][1] isa Tuple &&
    return outputsize(m, sizes[1]...; padbatch=padbatch)
  xs = [zeros(Float32, (padbatch ? (s..., 1) : s)...) for s in sizes]
  # Several inputs go in as one tuple, as Flux's (a Parallel takes them apart).
  size(deepcopy(m)(length(xs) == 1 ? xs[1] : Tuple(xs)))
end
# Flux's @autosize (tracer/lang/parse_autosize.cc): a LazyLayer makes its layer from the
# first input it sees; autosize_build runs the model once on zeros of the sizes, then
# puts the made layers in place of the lazy ones.
mutable struct LazyLayer
  make
  layer
end
LazyLayer(make) = LazyLayer(make, nothing)
function (l::LazyLayer)(xs...)
  l.layer === nothing && (l.layer = l.make(xs[1]))
  l.layer(xs...)
end
# The size `_` stands for: Flux's autosizefor, dim 1 for Dense, Embedding and LayerNorm,
# else the second-to-last (channels).
autosize_dim(x, layer::String) = layer in ("Dense", "Embedding", "LayerNorm") ? size(x, 1) :
  size(x, max(1, ndims(x) - 1))
function autosize_build(sizes::Tuple, m)
  m(zeros(Float32, sizes...))
  strip_lazy(m)
end
strip_lazy(l::LazyLayer) = l.layer === nothing ?
  error("@autosize: a layer was never called on the example input, so its size is unknown") :
  l.layer
function strip_lazy(x)
  (x isa Tuple || x isa NamedTuple) && return map(strip_lazy, x)
  x isa AbstractVector && eltype(x) == Any && return [strip_lazy(xi) for xi in x]
  is_struct(x) || return x
  new_instance(typeof(x), map(strip_lazy, Tuple(getfields(x)))...)
end
# Flux.unsqueeze(x; dims): x with a dim of 1 inserted at dims; unsqueeze(; dims) the function.
unsqueeze(x; dims) = reshape(x, size(x)[1:dims - 1]..., 1, size(x)[dims:end]...)
unsqueeze(; dims) = x -> unsqueeze(x; dims=dims)
# f16(m), f32(m), f64(m): the model with its float arrays converted, as Flux's.
f16(m) = fmap(x -> x isa AbstractArray && eltype(x) <: AbstractFloat ? Float16.(x) : x, m)
f32(m) = fmap(x -> x isa AbstractArray && eltype(x) <: AbstractFloat ? Float32.(x) : x, m)
f64(m) = fmap(x -> x isa AbstractArray && eltype(x) <: AbstractFloat ? Float64.(x) : x, m)
functional(show_reason::Bool=false) = false
has_cuda(show_reason::Bool=false) = false
# CUDA's array and generator types, which code written for GPUs too names in its methods
# (`dropout_mask(rng::CUDA.RNG, x::CuArray, p)`): nothing here is one, so those never apply.
abstract type CuArray end
abstract type RNG <: AbstractRNG end
has_cuda_gpu(show_reason::Bool=false) = false
allowscalar(x...) = nothing

# ---- Flux's implicit parameters (Zygote's Params and Grads, Flux.Optimise) -----------------

# gradient(() -> loss(model(x), y), Flux.params(model)) differentiates for the arrays of
# `params` as they are used inside the function: its Grads are looked up by the array
# itself, gs[model[1].weight], and are `nothing` for an array the loss did not use.
struct Grads
  params
  grads
end
function getindex(gs::Grads, p)
  i = findfirst(q -> q === p, gs.params)
  i === nothing && error("KeyError: this array is not one of the parameters of the gradient")
  gs.grads[i]
end
haskey(gs::Grads, p) = findfirst(q -> q === p, gs.params) !== nothing
length(gs::Grads) = length(gs.params)

# pullback(f, args...) and pullback(f, ps), Zygote's: f's value and a function of the
# value's cotangent Δ giving the gradients (of sum(Δ .* f(args...)) for an array-valued f,
# which the built-in differentiates again with Δ when back is called).
pullback_of(grads) = Δ -> scale_gradient(grads, Δ)
# Of a complex-valued array, the value only: its back function is an error.
function pullback_call(f, xs...)
  y = f(xs...)
  y isa AbstractArray || return y
  eltype(y) <: Complex ? (sum(real(y)), y, :complex_pullback) : (sum(y), y, :array_pullback)
end
complex_pullback_back(Δ) = error("back(Δ) of a pullback whose value is complex is not ",
                                 "supported: take the pullback of a real function of it ",
                                 "(sum(abs2, y), real.(y))")
pullback_back(id) = Δ -> _pullback_back(id, Δ)
scale_gradient(g::Nothing, Δ) = nothing
scale_gradient(g::Union{Number, AbstractArray}, Δ) = Δ == 1 ? g : g .* Δ
scale_gradient(g::Union{Tuple, NamedTuple}, Δ) = map(x -> scale_gradient(x, Δ), g)
scale_gradient(g::Grads, Δ) = Grads(g.params, [scale_gradient(x, Δ) for x in g.grads])
scale_gradient(g::AbstractVector, Δ) = [scale_gradient(x, Δ) for x in g]

# Flux.Optimise's implicit form: update!(opt, ps, gs) steps each parameter by its gradient
# in place, and update!(opt, x, dx) one array. A rule's state is kept per rule and array,
# as Flux's legacy optimisers keep theirs.
const implicit_states = []
function update!(opt::AbstractRule, x::AbstractArray, dx)
  k = findfirst(s -> s[1] === opt && s[2] === x, implicit_states)
  state = k === nothing ? init(opt, x) : implicit_states[k][3]
  state, step = apply!(opt, state, x, dx)
  if k === nothing
    push!(implicit_states, (opt, x, state))
  else
    implicit_states[k] = (opt, x, state)
  end
  x .-= step
end
function update!(opt::AbstractRule, ps::AbstractVector, gs::Grads)
  for p in ps
    dx = gs[p]
    dx === nothing || update!(opt, p, dx)
  end
end

# Flux.train!(loss, ps, data, opt; cb): Flux's implicit loop: for each batch, the gradient
# of loss(batch...) for the parameters, then a step; cb() after each.
function train!(loss, ps::AbstractVector, data, opt::AbstractRule; cb=() -> nothing)
  for batch in data
    b = batch isa Tuple ? batch : (batch,)
    gs = gradient(() -> loss(b...), ps)
    update!(opt, ps, gs)
    cb()
  end
end

# Zygote's jacobian(f, xs...): for each argument the matrix of ∂f(xs...)[i]/∂x[j] (a row
# per element of f's result, a column per element of the argument), one gradient per row;
# hessian(f, x) (and hessian_reverse, hessian_dual) the jacobian of its gradient, exact as
# a gradient of a gradient is. Integer arguments are taken as floats, as Zygote does.
function jacobian(f, xs...)
  xs = map(x -> x isa AbstractArray && !(eltype(x) <: AbstractFloat) ? float.(x) : x, xs)
  n = length(f(xs...))
  row(i) = gradient((a...) -> (y = f(a...); y isa Number ? y : y[i]), xs...)
  rows = [row(i) for i in 1:n]
  ntuple(k -> vcat([reshape(r[k] === nothing ? zero(xs[k]) : r[k], 1, :) for r in rows]...),
         length(xs))
end
hessian(f, x) = jacobian(x -> gradient(f, x)[1], x)[1]
# pushforward(f, xs...)(vs...): the derivative of f at xs along vs, forward mode (the
# built-in jvp(f, xs, vs) gives the value too).
pushforward(f, xs...) = (vs...) -> jvp(f, xs, vs)[2]
# Hessian-vector product, forward over reverse: the derivative of the gradient along v.
hvp(f, x, v) = jvp(x -> gradient(f, x)[1], (x,), (v,))[2]
hessian_reverse(f, x) = hessian(f, x)
# ForwardDiff's jacobian and gradient of one array: the matrix and the array (Zygote's give
# a tuple, one per argument), computed the same exact way.
const ForwardDiff = (jacobian = (f, x) -> jacobian(f, x)[1], gradient = (f, x) -> gradient(f, x)[1])
hessian_dual(f, x) = hessian(f, x)

# Flux's older names for its rules.
ADAM(η=0.001, β=(0.9, 0.999), ϵ=1e-8) = Adam(η, β, ϵ)
Optimiser(opts...) = OptimiserChain(opts...)

# ---- Zygote's (ChainRulesCore's) zero tangents ------------------------------------------------

# What Zygote returns for a gradient that is zero (ZeroTangent) or does not exist
# (NoTangent), as Flux's internals take them (∇eachlastdim). ytape's gradients are arrays of
# zeros instead; these are for code that builds them by hand.
abstract type AbstractZero end
struct ZeroTangent <: AbstractZero end
struct NoTangent <: AbstractZero end

# ---- the names a program's rules use (docs/rules.md) ----------------------------------------

# Tangents are computed at once (@thunk is its expression), so unthunk has nothing to do.
unthunk(x) = x
InplaceableThunk(add!, val) = val
# Zygote's argument type of its broadcasting rules, and its reduction of a broadcast
# gradient to an argument's shape.
const Numeric = Union{Number, AbstractArray}
function unbroadcast(x::AbstractArray, x̄)
  size(x̄) == size(x) && return x̄
  dims = filter(d -> size(x, d) == 1, collect(1:ndims(x̄)))
  reshape(sum(x̄; dims = dims), size(x))
end
unbroadcast(x::Number, x̄) = sum(x̄)
unbroadcast(x::Nothing, x̄) = nothing
# `f.(args...)`, the function a broadcast's rules are for (Base.Broadcast's, eager here).
broadcasted(f, args...) = f.(args...)
