# Follows FluxML/Flux.jl test/layers/basic.jl: Chain of anonymous functions and of Dense
# layers, Chain indexing, the Dense constructors (weights with a bias array, bias=false,
# an activation, init=Base.randn) on inputs of rank 1 to 3, SkipConnection with + and
# with cat(a, b, dims=2), Parallel with + and hcat on one input and on a tuple of inputs,
# Embedding of a label vector, and Scale, Maxout and Bilinear, which the tests construct.
# check: -f basic_loss layers x x3 xs labels

# ytape: @test (Test) is not a supported macro ("the macro @test is not supported"):
# the checks are written with @assert.
using Random
using Flux

# ytape: Flux.Scale, Maxout and Flux.Bilinear are not in the prelude ("undefined variable
# 'Maxout'"); small versions of Flux's are defined here.
struct Scale
  scale
  bias
  σ
end
Scale(s::Integer...; bias=true, init=ones) = Scale(init(s...), bias ? zeros(s...) : false, identity)
(a::Scale)(x) = a.σ.(a.bias === false ? x .* a.scale : x .* a.scale .+ a.bias)

struct Maxout
  layers
end
Maxout(layers...) = Maxout(layers)
Maxout(f::Function, n_alts::Integer) = Maxout(ntuple(_ -> f(), n_alts)...)
(mo::Maxout)(input) = mapreduce(f -> f(input), (acc, out) -> max.(acc, out), mo.layers)

struct Bilinear
  weight
  bias
  σ
end
Bilinear(in1::Integer, in2::Integer, out::Integer, σ=identity; init=Base.randn) =
  Bilinear(init(out, in1, in2), zeros(out), σ)
# z[o, k] = σ(sum over i, j of x[i, k] W[o, i, j] y[j, k] + b[o])
function (a::Bilinear)(x::AbstractMatrix, y::AbstractMatrix)
  o, i, j = size(a.weight)
  Wy = reshape(reshape(a.weight, o * i, j) * y, o, i, :)
  z = dropdims(sum(Wy .* reshape(x, 1, i, :); dims=2); dims=2)
  a.σ.(z .+ a.bias)
end
(a::Bilinear)(x::AbstractMatrix) = a(x, x)
(a::Bilinear)(xy::Tuple) = a(xy...)

# ytape: Flux.activations is not in the prelude ("undefined variable 'Flux.activations'");
# it is written here: the output of each layer of a Chain, in order.
function activations(c::Chain, x)
  outs = []
  for layer in c.layers
    x = layer(x)
    push!(outs, x)
  end
  outs
end

function build_layers()
  dummy_model = Chain(x -> x .^ 2, x -> x .- 3, x -> tan.(x))
  c = Chain(Dense(10, 5, σ; init=Base.randn), Dense(5, 2; init=Base.randn),
            Dense(2, 1, relu; init=Base.randn))
  named = Chain(first = Dense(10, 5, σ; init=Base.randn), second = Dense(5, 2; init=Base.randn))
  d_bias = Dense(rand(5, 10), rand(5))
  d_nobias = Dense(rand(5, 10), false, tanh)
  d_kw = Dense(10 => 5; init=Base.randn, bias=true)
  skip_sum = SkipConnection(Dense(10, 10; init=Base.randn), (a, b) -> a + b)
  skip_cat = SkipConnection(Dense(10, 10; init=Base.randn), (a, b) -> cat(a, b, dims=2))
  par_sum = Parallel(+, x -> zeros(size(x)), identity)
  par_cat = Parallel((a, b) -> cat(a, b; dims=2), Dense(10, 10; init=Base.randn), identity)
  par_vararg = Parallel(+, Dense(10, 2; init=Base.randn), Dense(5, 2; init=Base.randn),
                        Dense(4, 2; init=Base.randn))
  vocab_size, embed_size = 6, 4
  emb = Embedding(vocab_size, embed_size; init=Base.randn)
  scale = Scale(10; init=Base.randn)
  maxout = Maxout(() -> Dense(10, 3; init=Base.randn), 4)
  bilinear = SkipConnection(Dense(10, 10; init=Base.randn), Bilinear(10, 10, 5))
  (; dummy_model, c, named, d_bias, d_nobias, d_kw, skip_sum, skip_cat, par_sum, par_cat,
   par_vararg, emb, scale, maxout, bilinear)
end

function basic_loss(layers, x, x3, xs, labels)
  l = layers
  x1 = 0.3 .* x[:, 1]
  acts = activations(l.dummy_model, x1)
  @assert acts[1] == x1 .^ 2
  total = sum(l.dummy_model(x1)) + sum(acts[2]) + sum(abs2, acts[3])
  total += sum(l.c[begin](x))
  total += sum(abs2, l.c(x)) + sum(l.c[1](x)) + sum(l.c[1:2](x)) + sum(l.c[end](l.c[1:2](x)))
  @assert l.c[begin](x) == l.c[1](x) && l.c[end](l.c[1:2](x)) == l.c(x)
  @assert l.named[:first](x) == l.named[1](x) && size(l.named[:second](l.named[:first](x))) == (2, 2)
  total += sum(abs2, l.named(x)) + sum(l.named[:second](l.named[:first](x)))
  @assert size(l.d_kw(x3)) == (5, 2, 3)
  total += sum(l.d_bias(x)) + sum(l.d_nobias(x[:, 1])) + sum(l.d_kw(x3))
  total += sum(l.skip_sum(x)) + sum(abs2, l.skip_cat(x))
  @assert size(l.skip_cat(x)) == (10, 4)
  total += sum(l.par_sum(x)) + sum(l.par_cat(x)) + sum(l.par_vararg(xs))
  total += sum(abs2, l.emb(labels)) + sum(l.scale(x)) + sum(l.maxout(x)) + sum(l.bilinear(x))
  total
end

Random.seed!(4)
layers = build_layers()
x = randn(10, 2)
x3 = randn(10, 2, 3)
xs = (randn(10), randn(5), randn(4))
labels = [1, 6, 3]
@assert size(layers.emb(labels)) == (4, 3)
