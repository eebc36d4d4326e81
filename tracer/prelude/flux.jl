# The prelude (tracer/prelude/base.jl says what it is): more of Flux: params and destructure,
# the normalisation layers but BatchNorm, Bilinear, Scale, Maxout, more losses.

# ---- more of Flux ----------------------------------------------------------------------------

# Flux.params(m...): the arrays the models hold, each once, in field order (numbers and
# functions are not parameters, as in Flux), of the fields trainable(x) names (not a
# BatchNorm's running statistics nor a Recur's state).
function params(ms...)
  out = []
  for m in ms
    collect_params!(out, m)
  end
  out
end
function collect_params!(out, x)
  if x isa AbstractArray && eltype(x) != Any
    any(p -> p === x, out) || push!(out, x)
  elseif x isa AbstractVector  # of values: Chain([layer1, layer2])
    foreach(xi -> collect_params!(out, xi), x)
  elseif x isa Tuple || x isa NamedTuple
    foreach(xi -> collect_params!(out, xi), x)
  elseif !(x isa Number || x isa Function || x isa Symbol || x isa AbstractString)
    foreach(xi -> collect_params!(out, xi), values(trainable(x)))
  end
  out
end

# destructure(m) (Optimisers' and Flux's): the model's arrays flattened into one vector,
# and a function that rebuilds the model from such a vector (each array from its slice,
# in its own element type).
function destructure(m)
  ps = params(m)
  flat = isempty(ps) ? Float32[] : vcat([vec(p) for p in ps]...)
  offsets = cumsum([0; [length(p) for p in ps]])
  flat, v -> fmap(x -> begin
    i = findfirst(p -> p === x, ps)
    i === nothing ? x : eltype(x).(reshape(v[offsets[i] + 1:offsets[i + 1]], size(x)))
  end, m)
end

# Flux.activations(c, x): the output of every layer of the chain, in order.
function activations(c::Chain, x)
  outs = []
  for layer in c.layers
    x = layer(x)
    push!(outs, x)
  end
  (outs...,)
end

# Scale(size...; bias=true, init=ones32): σ.(x .* scale .+ bias), elementwise.
struct Scale
  scale
  bias
  σ
end
Scale(s1::Integer, s::Integer...; bias=true, init=ones32, _act=identity) =
  new_instance(Scale, init(s1, s...), bias ? zeros(Float32, s1, s...) : false, _act)
# Scale(size..., σ): the activation last, as Flux's.
function Scale(size_act...; kw...)
  ok = length(size_act) >= 2 && size_act[end] isa Function &&
       all(s -> s isa Integer, size_act[1:end-1])
  ok || throw(MethodError("no method matching Scale$(map(typeof, size_act))"))
  Scale(size_act[1:end-1]...; _act=size_act[end], kw...)
end
(s::Scale)(x) = s.σ.(s.bias === false ? x .* s.scale : x .* s.scale .+ s.bias)

# Maxout(layers...) or Maxout(f, n): the elementwise maximum of the layers' outputs.
struct Maxout
  layers::Tuple
end
Maxout(layers...) = Maxout(layers)
Maxout(f::Function, n::Integer) = Maxout(ntuple(i -> f(), n)...)
(m::Maxout)(x) = mapreduce(layer -> layer(x), (a, b) -> max.(a, b), m.layers)
sublayers(m::Maxout) = m.layers

# Bilinear((in1, in2) => out, σ; bias=true, init): z[k] = σ(x' W[k, :, :] y + b[k]).
struct Bilinear
  weight
  bias
  σ
end
function Bilinear(p::Pair, σ=identity; bias=true, init=glorot_uniform)
  n1, n2 = p.first isa Integer ? (p.first, p.first) : p.first  # in => out: both inputs in
  w = init(p.second, n1, n2)
  new_instance(Bilinear, w, create_bias(w, bias, p.second), σ)
end
Bilinear(in1::Integer, in2::Integer, out::Integer, σ=identity; kw...) =
  Bilinear((in1, in2) => out, σ; kw...)
function Bilinear(w::AbstractArray, bias=true, σ=identity)
  ndims(w) == 3 || throw(ArgumentError("expected a 3-array of weights, got size $(size(w))"))
  new_instance(Bilinear, w, create_bias(w, bias, size(w, 1)), σ)
end
(b::Bilinear)(x::AbstractArray) = b(x, x)
function (b::Bilinear)(x, y)
  o, n1, n2 = size(b.weight)
  xm, ym = reshape(x, n1, :), reshape(y, n2, :)
  wy = reshape(reshape(b.weight, o * n1, n2) * ym, o, n1, :)
  z = reshape(sum(wy .* reshape(xm, 1, n1, :); dims=2), o, :)
  z = b.σ.(b.bias === false ? z : z .+ b.bias)
  ndims(x) == 1 ? reshape(z, :) : z
end
(b::Bilinear)(xy::Tuple) = b(xy...)

# InstanceNorm(c, λ; affine=false, track_stats=false, eps=1f-5, momentum=0.1f0, active)
# normalizes each channel of each sample over its spatial dims; GroupNorm(c, G, λ;
# affine=true, ...) each group of c ÷ G channels of each sample. Flux 0.14's fields: the
# scale γ and shift β (with affine), the running μ and σ² (with track_stats, one per
# channel or group, moved towards the batch's by momentum in training as BatchNorm's,
# and used in test mode).
mutable struct InstanceNorm
  λ
  β
  γ
  μ
  σ²
  ϵ
  momentum
  affine
  track_stats
  active
  chs
end
function InstanceNorm(c::Integer, λ=identity; initβ=zeros32, initγ=ones32, affine=false,
                      track_stats=false, active=nothing, eps=1f-5, momentum=0.1f0)
  InstanceNorm(λ, affine ? initβ(c) : nothing, affine ? initγ(c) : nothing,
               track_stats ? zeros32(c) : nothing, track_stats ? ones32(c) : nothing, eps,
               momentum, affine, track_stats, active, c)
end
mutable struct GroupNorm
  G
  λ
  β
  γ
  μ
  σ²
  ϵ
  momentum
  affine
  track_stats
  active
  chs
end
function GroupNorm(c::Integer, G::Integer, λ=identity; initβ=zeros32, initγ=ones32,
                   affine=true, track_stats=false, active=nothing, eps=1f-5, momentum=0.1f0)
  @assert c % G == 0 "The number of groups ($G) must divide the number of channels ($c)"
  GroupNorm(G, λ, affine ? initβ(c) : nothing, affine ? initγ(c) : nothing,
            track_stats ? zeros32(G) : nothing, track_stats ? ones32(G) : nothing, eps,
            momentum, affine, track_stats, active, c)
end
trainable(l::Union{InstanceNorm, GroupNorm}) = l.affine ? (β = l.β, γ = l.γ) : (;)
function (l::InstanceNorm)(x)
  check_channels(InstanceNorm, x, l.chs)
  N = ndims(x)
  norm_forward(l, x, ntuple(i -> i, N - 2), ntuple(i -> i == N - 1 ? size(x, N - 1) : 1, N))
end
function (l::GroupNorm)(x)
  check_channels(GroupNorm, x, l.chs)
  sz = size(x)
  g = reshape(x, sz[1:end-2]..., sz[end-1] ÷ l.G, l.G, sz[end])
  N = ndims(g)
  shape = ntuple(i -> i == N - 1 || i == N - 2 ? size(g, i) : 1, N)
  reshape(norm_forward(l, g, ntuple(i -> i, N - 2), shape), sz)
end
# Flux's _norm_layer_forward: x normalized over reduce_dims with the batch's statistics
# (in training, or without running ones) or the running ones (in test mode), which have
# the size of x's dim N-1; then γ and β of affine_shape, and λ.
function norm_forward(l, x, reduce_dims, affine_shape)
  N = ndims(x)
  T = eltype(x)
  if !isactive(l) && l.track_stats
    s = ntuple(i -> i == N - 1 ? size(x, N - 1) : 1, N)
    μ, σ² = reshape(T.(l.μ), s), reshape(T.(l.σ²), s)
  else
    μ = mean(x; dims=reduce_dims)
    σ² = mean(abs2.(x .- μ); dims=reduce_dims)
    l.track_stats && norm_track_stats!(l, x, μ, σ², reduce_dims)
  end
  y = (x .- μ) ./ sqrt.(σ² .+ T(l.ϵ))
  l.affine || return l.λ.(y)
  l.λ.(reshape(T.(l.γ), affine_shape) .* y .+ reshape(T.(l.β), affine_shape))
end
function norm_track_stats!(l, x, μ, σ², reduce_dims)
  N = ndims(x)
  m = prod([size(x, i) for i in reduce_dims])
  μnew = vec(N in reduce_dims ? μ : mean(μ; dims=N))
  σ²new = vec(N in reduce_dims ? σ² : mean(σ²; dims=N))
  V = eltype(l.μ)
  mtm = V(l.momentum)
  l.μ = (1 - mtm) .* l.μ .+ mtm .* V.(μnew)
  l.σ² = (1 - mtm) .* l.σ² .+ (mtm * m / max(m - 1, 1)) .* V.(σ²new)
  nothing
end
# Flux.hasaffine(l): whether a normalization layer scales and shifts.
hasaffine(l::Union{InstanceNorm, GroupNorm}) = l.affine
hasaffine(b::BatchNorm) = b.weight !== false
hasaffine(l::LayerNorm) = l.scale !== false

# AlphaDropout(p): dropout that keeps a SELU network's mean and variance, as Flux's.
mutable struct AlphaDropout
  p
  active
  rng
end
AlphaDropout(p, active) = AlphaDropout(p, active, default_rng())
AlphaDropout(p; active=nothing, rng=default_rng()) = AlphaDropout(p, active, rng)
function (a::AlphaDropout)(x)
  (!isactive(a) || a.p == 0) && return x
  T = float(real(eltype(x)))  # of a complex x, the mask and constants are real
  a.p == 1 && return sign.(x) .* T(0)  # as Flux's: nothing kept
  α′ = T(-1.7580993408473766)  # selu(-Inf)
  A = T(1 / sqrt((1 - a.p) * (1 + a.p * α′^2)))
  B = T(-A * α′ * a.p)
  keep = rand(a.rng, T, size(x)...) .> a.p
  # ifelse would mix complex and real items: x or α′ by arithmetic instead.
  y = eltype(x) <: Complex ? x .* keep .+ α′ .* .!keep : ifelse.(keep, x, α′)
  A .* y .+ B
end
# The layers with a mode keep it in `active` (true, false, or nothing: unset).
function set_mode!(m::Union{BatchNorm, InstanceNorm, GroupNorm, Dropout, AlphaDropout}, mode)
  m.active = mode
  m
end

# More of Flux's losses.
function label_smoothing(y, α; dims=1)
  0 < α < 1 || throw(ArgumentError("α must be between 0 and 1"))
  dims == 0 ? y .* (1 - α) .+ α / 2 : y .* (1 - α) .+ α / size(y, dims)
end
function tversky_loss(ŷ, y; beta=0.7)
  tp = sum(y .* ŷ)
  1 - (tp + 1) / (sum(y .* ŷ .+ beta .* (1 .- y) .* ŷ .+ (1 - beta) .* y .* (1 .- ŷ)) + 1)
end
function binary_focal_loss(ŷ, y; agg=mean, gamma=2, eps=epseltype(ŷ))
  p = y .* (ŷ .+ eps) .+ (1 .- y) .* (1 .- ŷ .- eps)
  agg((1 .- p) .^ gamma .* .-log.(p))
end
focal_loss(ŷ, y; dims=1, agg=mean, gamma=2, eps=epseltype(ŷ)) =
  agg(sum(.-y .* (1 .- (ŷ .+ eps)) .^ gamma .* log.(ŷ .+ eps); dims=dims))
function siamese_contrastive_loss(ŷ, y; agg=mean, margin=1)
  margin < 0 && throw(DomainError(margin, "Margin must be non-negative"))
  agg((1 .- y) .* ŷ .^ 2 .+ y .* max.(0, margin .- ŷ) .^ 2)
end
eachindex(x) = 1:length(x)
# Flux.normalise(x; dims, eps): (x - μ) / sqrt(σ² + eps) along dims, σ² uncorrected, as
# Flux 0.14 (and LayerNorm) computes it.
# (Flux 0.13 spelled eps ϵ, and its layers pass ϵ=.)
function normalise(x; dims=ndims(x), eps=1f-5, ϵ=eps)
  μ = mean(x; dims=dims)
  σ² = mean(abs2.(x .- μ); dims=dims)
  (x .- μ) ./ sqrt.(σ² .+ ϵ)
end
