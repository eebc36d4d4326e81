# The prelude (tracer/prelude/base.jl says what it is): Optimisers.jl's rules and learning-rate schedules.

# ---- Optimisers.jl (0.3): rules, setup, update, adjust ----------------------------------------

# The pure API of Optimisers.jl 0.3 with its rules' defaults and formulas. Everything traces,
# so that a whole training step is one tape: a rule's state is arrays and numbers (Adam's
# β^t too, carried from step to step), computed with arithmetic and never chosen by a
# branch on a value; hyperparameters are converted to the parameter's element type where
# they are used (T(η)), as Optimisers.jl's are, so Float32 parameters keep Float32 state.
abstract type AbstractRule end

# Each rule takes its hyperparameters by position or by their field names as keywords,
# Descent(; eta=0.2), Adam(; beta=(0.8, 0.9)), as later Optimisers.jl's.

# Descent(η = 1f-1): x -= η dx.
struct Descent <: AbstractRule
  eta
end
Descent(; eta=1f-1) = Descent(eta)

# Momentum(η = 0.01, ρ = 0.9): v = ρ v + η dx; x -= v.
struct Momentum <: AbstractRule
  eta
  rho
end
Momentum(η=0.01; eta=η, rho=0.9) = Momentum(eta, rho)

# Nesterov(η = 0.001, ρ = 0.9): x -= -ρ² v + (1 + ρ) η dx, then v = ρ v - η dx.
struct Nesterov <: AbstractRule
  eta
  rho
end
Nesterov(η=0.001; eta=η, rho=0.9) = Nesterov(eta, rho)

# Adam(η = 0.001, β = (0.9, 0.999), ϵ = 1e-8), with β^t in its state.
struct Adam <: AbstractRule
  eta
  beta
  epsilon
end
Adam(η=0.001, β=(0.9, 0.999); eta=η, beta=β, epsilon=1e-8) = Adam(eta, beta, epsilon)

# WeightDecay(λ = 5e-4): dx + λ x.
struct WeightDecay <: AbstractRule
  lambda
end
WeightDecay(; lambda=5e-4) = WeightDecay(lambda)

# ClipNorm(ω = 10, p = 2): dx scaled to a p-norm of at most ω. p is kept static (an integer,
# :Inf for Inf), so that a traced state never branches on it; a non-finite norm is not an
# error here (a tape cannot throw), and `throw` is kept for Optimisers.jl's signature.
struct ClipNorm <: AbstractRule
  omega
  p
  throw
end
ClipNorm(ω=10, p=2; throw::Bool=true) =
  new_instance(ClipNorm, Float64(ω), p == Inf ? :Inf : p == round(p) ? Int(p) : p, throw)

# OptimiserChain(rules...): each rule transforms the update of the one before.
struct OptimiserChain <: AbstractRule
  opts::Tuple
end
OptimiserChain(opts...) = OptimiserChain(opts)

# AdamW as Optimisers.jl 0.3 defines it: Adam, then a weight decay not scaled by η.
AdamW(η=0.001, β=(0.9, 0.999), λ=0, ϵ=1e-8; eta=η, beta=β, lambda=λ, epsilon=ϵ) =
  OptimiserChain(Adam(eta, beta, epsilon), WeightDecay(lambda))

# init(rule, x): the state of a new parameter x.
init(o::AbstractRule, x) = nothing
init(o::Momentum, x) = zero(x)
init(o::Nesterov, x) = zero(x)
init(o::Adam, x) = (zero(x), zero(x), map(eltype(x), o.beta))
init(o::OptimiserChain, x) = map(r -> init(r, x), o.opts)

# apply!(rule, state, x, dx) -> (state′, dx′): the new state and the step subtracted from x.
# Pure here: the state arrays are new values, not written in place.
apply!(o::Descent, state, x, dx) = state, dx .* eltype(x)(o.eta)
function apply!(o::Momentum, v, x, dx)
  T = eltype(x)
  v′ = T(o.rho) .* v .+ T(o.eta) .* dx
  v′, v′
end
function apply!(o::Nesterov, v, x, dx)
  T = eltype(x)
  η, ρ = T(o.eta), T(o.rho)
  v′ = ρ .* v .- η .* dx
  v′, -ρ^2 .* v .+ (1 + ρ) .* η .* dx
end
function apply!(o::Adam, (mt, vt, βt), x, dx)
  T = eltype(x)
  η, β1, β2, ϵ = T(o.eta), T(o.beta[1]), T(o.beta[2]), T(o.epsilon)
  mt′ = β1 .* mt .+ (1 - β1) .* dx
  vt′ = β2 .* vt .+ (1 - β2) .* abs2.(dx)
  dx′ = mt′ ./ (1 - βt[1]) ./ (sqrt.(vt′ ./ (1 - βt[2])) .+ ϵ) .* η
  (mt′, vt′, (βt[1] * β1, βt[2] * β2)), dx′
end
apply!(o::WeightDecay, state, x, dx) = state, dx .+ eltype(x)(o.lambda) .* x
function apply!(o::ClipNorm, state, x, dx)
  nrm = clip_norm(dx, o.p)
  state, dx .* eltype(x)(min(o.omega / nrm, 1))
end
clip_norm(dx, p::Integer) =
  p == 2 ? sqrt(sum(abs2.(dx))) : p == 1 ? sum(abs.(dx)) : sum(abs.(dx) .^ p)^(1 / p)
clip_norm(dx, p::Symbol) = maximum(abs.(dx))
clip_norm(dx, p::Real) = sum(abs.(dx) .^ p)^(1 / p)
function apply!(o::OptimiserChain, states, x, dx)
  out = ()
  for (rule, state) in zip(o.opts, states)
    state′, dx = apply!(rule, state, x, dx)
    out = (out..., state′)
  end
  out, dx
end

# The state of one trainable array: its rule and the rule's state. Mutable, as
# Optimisers.jl's, so that update! and adjust! can change it in place.
mutable struct Leaf
  rule
  state
end

# trainable(x): the fields of a struct that hold parameters (Optimisers.jl's), all by
# default; a Recur's hidden state and a BatchNorm's running statistics are not, as in Flux.
trainable(x) = getfields(x)
trainable(r::Recur) = (cell = r.cell,)
trainable(b::BatchNorm) = (weight = b.weight, bias = b.bias)

is_parameter(x) = x isa AbstractArray && (eltype(x) == Float32 || eltype(x) == Float64)
is_struct(x) = !(x isa Tuple || x isa NamedTuple || x isa AbstractArray) && nfields(x) > 0

# Functors.fmap(f, x) (Flux.fmap): x rebuilt with f applied to each leaf (an array, a
# number, a function: what is not a struct, tuple or vector of values), as Functors'.
function fmap(f, x)
  (x isa Tuple || x isa NamedTuple) && return map(xi -> fmap(f, xi), x)
  x isa AbstractVector && eltype(x) == Any && return [fmap(f, xi) for xi in x]
  is_struct(x) || return f(x)
  new_instance(typeof(x), map(xi -> fmap(f, xi), Tuple(getfields(x)))...)
end

# setup(rule, model): the state tree, which mirrors the model: a Leaf for each Float32 or
# Float64 array, a named tuple for a struct (its trainable fields; nothing for the rest), a
# tuple for a tuple, a named tuple for a named tuple, nothing for everything else (numbers,
# integer and Bool arrays, functions). An array met twice gets a Leaf each time.
setup(rule::AbstractRule, x) = setup_tree(rule, x)
function setup_tree(rule, x)
  is_parameter(x) && return Leaf(rule, init(rule, x))
  (x isa Tuple || x isa NamedTuple) && return map(xi -> setup_tree(rule, xi), x)
  is_struct(x) || return nothing
  map(xi -> setup_tree(rule, xi), merge(map(_ -> nothing, getfields(x)), trainable(x)))
end

# update(tree, model, grad) -> (tree′, model′): one step of each Leaf's rule, giving a new
# state tree and a new model (structs rebuilt with new_instance, bypassing constructors);
# grad is Zygote's: a named tuple for a struct or named tuple, a tuple for a tuple, an
# array for an array, nothing where nothing changes. The model is not changed.
function update(tree, model, grad)
  check_gradient(model, grad, "model")
  update_tree(tree, model, grad)
end
function update_tree(tree, x, dx)
  (dx === nothing || tree === nothing) && return tree, x
  if tree isa Leaf
    T = eltype(x)
    state′, dx′ = apply!(tree.rule, tree.state, x, eltype(dx) == T ? dx : T.(dx))
    return Leaf(tree.rule, state′), x .- dx′
  end
  fields = is_struct(x) ? getfields(x) : x
  grads = x isa Tuple ? dx : merge(map(_ -> nothing, fields), dx)
  parts = map(update_tree, tree, fields, grads)
  tree′, x′ = map(first, parts), map(last, parts)
  tree′, is_struct(x) ? new_instance(typeof(x), x′...) : x′
end

# update!(tree, model, grad): update, and as Optimisers.jl's it also changes its arguments:
# each Leaf takes its new state and each array its new values in place. Returns them.
function update!(tree, model, grad)
  tree′, model′ = update(tree, model, grad)
  write_back!(tree, tree′, model, model′)
  tree, model
end
function write_back!(tree, tree′, x, x′)
  if tree isa Leaf
    tree.state = tree′.state
    x .= x′
  elseif tree !== nothing
    fields, fields′ = is_struct(x) ? (getfields(x), getfields(x′)) : (x, x′)
    foreach(write_back!, tree, tree′, fields, fields′)
  end
  nothing
end

# The error for a gradient that does not mirror the model, naming where (model.layers[2].bias).
gradient_mismatch(path, what...) =
  error("Optimisers.update: the gradient does not match the model at ", path, ": ", what...)
function check_gradient(x, dx, path)
  dx === nothing && return nothing
  if is_parameter(x)
    dx isa AbstractArray && size(dx) == size(x) && return nothing
    gradient_mismatch(path, "the parameter is a ", typeof(x), " of size ", size(x),
                      ", its gradient a ", typeof(dx),
                      dx isa AbstractArray ? string(" of size ", size(dx)) : "")
  elseif x isa Tuple
    dx isa Tuple && length(dx) == length(x) ||
      gradient_mismatch(path, "the model has a tuple of ", length(x), ", the gradient a ",
                        typeof(dx), dx isa Tuple ? string(" of ", length(dx)) : "",
                        " (a tuple of ", length(x), " or nothing)")
    for i in 1:length(x)
      check_gradient(x[i], dx[i], string(path, "[", i, "]"))
    end
  elseif x isa NamedTuple || is_struct(x)
    fields = is_struct(x) ? getfields(x) : x
    what = is_struct(x) ? string("a ", typeof(x)) : "a named tuple"
    dx isa NamedTuple ||
      gradient_mismatch(path, "the model has ", what, ", the gradient a ", typeof(dx),
                        " (a named tuple of its fields, or nothing)")
    # Only trainable fields are updated: a recurrent layer's state, which its forward
    # changed to the batch's size, is not compared with its gradient.
    kept = is_struct(x) ? keys(trainable(x)) : keys(x)
    for name in keys(dx)
      name in keys(fields) ||
        gradient_mismatch(path, "the gradient has a field ", name, ", which ", what,
                          " has not; its fields are ", join_names(keys(fields)))
      name in kept && check_gradient(fields[name], dx[name], string(path, ".", name))
    end
  end
  nothing
end
join_names(names) = foldl((a, b) -> string(a, ", ", b), names)

# adjust(tree, η) and adjust!(tree, η): the learning rate (field eta) of every Leaf's rule
# set to η, in a new tree or in place, the states kept; adjust(tree; beta=...) and
# adjust!(tree; ...) set any fields by name. Rules without such a field stay as they are.
# η may be a traced number, such as a schedule's value at a traced step.
function adjust_fields(r::AbstractRule, kw)
  names = fieldnames(typeof(r))
  new_instance(typeof(r), map(f -> f in keys(kw) ? kw[f] : getfield(r, f), names)...)
end
adjust(r::AbstractRule, η::Real) = adjust_fields(r, (eta = η,))
adjust(r::AbstractRule; kw...) = adjust_fields(r, kw)
adjust(c::OptimiserChain, η::Real) = OptimiserChain(map(r -> adjust(r, η), c.opts))
adjust(c::OptimiserChain; kw...) = OptimiserChain(map(r -> adjust(r; kw...), c.opts))
adjust(l::Leaf, η::Real) = Leaf(adjust(l.rule, η), l.state)
adjust(l::Leaf; kw...) = Leaf(adjust(l.rule; kw...), l.state)
adjust(::Nothing, η::Real) = nothing
adjust(::Nothing; kw...) = nothing
adjust(t::Union{Tuple, NamedTuple}, η::Real) = map(s -> adjust(s, η), t)
adjust(t::Union{Tuple, NamedTuple}; kw...) = map(s -> adjust(s; kw...), t)
function adjust!(tree, η::Real)
  if tree isa Leaf
    tree.rule = adjust(tree.rule, η)
  elseif tree !== nothing
    foreach(s -> adjust!(s, η), tree)
  end
  nothing
end
function adjust!(tree; kw...)
  if tree isa Leaf
    tree.rule = adjust(tree.rule; kw...)
  elseif tree !== nothing
    foreach(s -> adjust!(s; kw...), tree)
  end
  nothing
end

# ---- learning-rate schedules (ParameterSchedulers.jl's) -----------------------------------

# s(t) for the 1-based step t, an integer or a float, also a traced one (floor records
# converts, and nothing branches on t).

# Step(λ, γ, step_size): λ γ^floor((t - 1) / step_size), decaying by γ every step_size steps.
struct Step
  λ
  γ
  step_size::Integer
end
Step(; λ, γ, step_sizes::Integer) = Step(λ, γ, step_sizes)
(s::Step)(t) = s.λ * s.γ^floor((t - 1) / s.step_size)

# CosAnneal(λ0, λ1, period, restart=true): from max(λ0, λ1) down to min(λ0, λ1) along a
# half cosine over `period` steps, starting again each period (restart) or going on.
struct CosAnneal
  λ0
  λ1
  period::Integer
  restart::Bool
end
CosAnneal(λ0, λ1, period) = CosAnneal(λ0, λ1, period, true)
CosAnneal(; λ0, λ1, period, restart=true) = CosAnneal(λ0, λ1, period, restart)
function (s::CosAnneal)(t)
  t̂ = s.restart ? (t - 1) - s.period * floor((t - 1) / s.period) : t - 1
  abs(s.λ0 - s.λ1) * (1 + cos(π * t̂ / s.period)) / 2 + min(s.λ0, s.λ1)
end
