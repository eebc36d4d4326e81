# Follows FluxML/Flux.jl test/layers/basic.jl: Chain of anonymous functions and of Dense
# layers, Chain indexing, the Dense constructors (weights with a bias array, bias=false,
# an activation, init=Base.randn) on inputs of rank 1 to 3, SkipConnection with + and
# with cat(a, b, dims=2), Parallel with + and hcat on one input and on a tuple of inputs,
# Embedding of a label vector, and Scale, Maxout and Bilinear, which the tests construct.
# check: -f basic_loss layers x x3 xs labels

using Test
using Random
using Flux

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
  scale = Flux.Scale(10; init=Base.randn)
  scale.bias .= randn(10)
  maxout = Maxout(() -> Dense(10, 3; init=Base.randn), 4)
  bilinear = SkipConnection(Dense(10, 10; init=Base.randn), Flux.Bilinear((10, 10) => 5; init=Base.randn))
  (; dummy_model, c, named, d_bias, d_nobias, d_kw, skip_sum, skip_cat, par_sum, par_cat,
   par_vararg, emb, scale, maxout, bilinear)
end

function basic_loss(layers, x, x3, xs, labels)
  l = layers
  x1 = 0.3 .* x[:, 1]
  acts = Flux.activations(l.dummy_model, x1)
  @test acts[1] == x1 .^ 2
  @test acts[3] == tan.(x1 .^ 2 .- 3)
  total = sum(l.dummy_model(x1)) + sum(acts[2]) + sum(abs2, acts[3])
  total += sum(l.c[begin](x))
  total += sum(abs2, l.c(x)) + sum(l.c[1](x)) + sum(l.c[1:2](x)) + sum(l.c[end](l.c[1:2](x)))
  @test l.c[begin](x) == l.c[1](x) && l.c[end](l.c[1:2](x)) == l.c(x)
  @test l.named[:first](x) == l.named[1](x) && size(l.named[:second](l.named[:first](x))) == (2, 2)
  total += sum(abs2, l.named(x)) + sum(l.named[:second](l.named[:first](x)))
  @test size(l.d_kw(x3)) == (5, 2, 3)
  total += sum(l.d_bias(x)) + sum(l.d_nobias(x[:, 1])) + sum(l.d_kw(x3))
  total += sum(l.skip_sum(x)) + sum(abs2, l.skip_cat(x))
  @test size(l.skip_cat(x)) == (10, 4)
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
@test size(layers.emb(labels)) == (4, 3)

@testset "Scale, Maxout and Bilinear" begin
  s, mo, bl = layers.scale, layers.maxout, layers.bilinear.connection
  @test s(x) ≈ x .* s.scale .+ s.bias
  outs = [f(x) for f in mo.layers]
  @test length(outs) == 4 && mo(x) == max.(max.(outs[1], outs[2]), max.(outs[3], outs[4]))
  dx = layers.bilinear.layers(x)
  z = layers.bilinear(x)
  @test size(z) == (5, 2)
  # z[o, k] = sum over i, j of dx[i, k] W[o, i, j] x[j, k] + b[o], by loops
  o, k = 3, 2
  zok = bl.bias[o]
  for i in 1:10, j in 1:10
    zok += dx[i, k] * bl.weight[o, i, j] * x[j, k]
  end
  @test z[o, k] ≈ zok
end
