# Follows NNlib's src/attention.jl and batched_mul, and Flux's src/layers/attention.jl and
# their tests: batched_mul in every form (3-d, a shared matrix, a batch of 1, 4-d, ⊠,
# batched_transpose, batched_vec), dot_product_attention with heads, a causal mask, a
# bias and extra batch dims, checked against loops written here; MultiHeadAttention
# for self- and cross-attention, with other dims, biases and its printed form; LayerNorm
# and Embedding with positions, as a transformer block uses them.
# check: -f attention_loss mha cross q k v kc vc A B bias ids

using Flux, NNlib
using LinearAlgebra
using Test

init64(dims...) = randn(dims...) ./ sqrt(dims[end])
mha = MultiHeadAttention(6; nheads=3, init=init64)
cross = MultiHeadAttention((6, 4, 5) => (6, 8) => 7; nheads=2, bias=true, init=init64)
q, k, v = randn(6, 4, 2), randn(6, 5, 2), randn(9, 5, 2)
kc, vc = randn(4, 5, 2), randn(5, 5, 2)  # cross's keys and values
A, B = randn(3, 4, 2), randn(4, 5, 2)
bias = randn(5, 4, 2, 2)
ids = [3 1; 2 4; 4 4]

# Loops: the product of each slice, the softmax of scaled dots per head.
function batched_by_hand(A, B)
  C = zeros(size(A, 1), size(B, 2), size(A, 3))
  for b in 1:size(A, 3), j in 1:size(B, 2), i in 1:size(A, 1), l in 1:size(A, 2)
    C[i, j, b] += A[i, l, b] * B[l, j, b]
  end
  C
end
function attention_by_hand(q, k, v, nheads, mask)
  d = size(q, 1) ÷ nheads
  dv = size(v, 1) ÷ nheads
  out = zeros(size(v, 1), size(q, 2), size(q, 3))
  for b in 1:size(q, 3), h in 1:nheads, i in 1:size(q, 2)
    rows = (h - 1) * d + 1:h * d
    s = [mask[j, i] ? sum(k[rows, j, b] .* q[rows, i, b]) / sqrt(d) : -Inf for j in 1:size(k, 2)]
    p = exp.(s .- maximum(s))
    p = p ./ sum(p)
    for j in 1:size(k, 2)
      out[(h - 1) * dv + 1:h * dv, i, b] .+= p[j] .* v[(h - 1) * dv + 1:h * dv, j, b]
    end
  end
  out
end

@test batched_mul(A, B) ≈ batched_by_hand(A, B)
@test A ⊠ B == batched_mul(A, B)
@test batched_mul(A, B[:, :, 1]) ≈ batched_by_hand(A, cat(B[:, :, 1], B[:, :, 1]; dims=3))
@test batched_mul(A[:, :, 1:1], B) ≈ batched_by_hand(cat(A[:, :, 1], A[:, :, 1]; dims=3), B)
@test batched_mul(A[:, :, 1], B) ≈ batched_mul(A[:, :, 1:1], B)
@test size(batched_mul(randn(2, 3, 4, 5), randn(3, 6, 4, 5))) == (2, 6, 4, 5)
@test batched_transpose(A)[:, :, 2] == permutedims(A[:, :, 2])
@test batched_vec(A, B[:, 1, :]) ≈ batched_mul(A, B[:, 1:1, :])[:, 1, :]
@test triu(ones(3, 3)) == [1 1 1; 0 1 1; 0 0 1] && tril(ones(3, 3), -1) == [0 0 0; 1 0 0; 1 1 0]
@test make_causal_mask(q) == [i <= j for i in 1:4, j in 1:4]
@test make_causal_mask(randn(2, 3, 7); dims=3) == triu(trues_like(q, (7, 7)))
@test dot_product_attention(q, k, k; mask=trues(5, 4))[1] == dot_product_attention(q, k, k)[1]
@test trues((2, 3)) == .!falses(2, 3) && size(falses(4)) == (4,)

qs = randn(6, 4, 2)
y, α = dot_product_attention(qs, qs, qs; nheads=2, mask=make_causal_mask(qs))
@test size(y) == (6, 4, 2) && size(α) == (4, 4, 2, 2)
@test y ≈ attention_by_hand(qs, qs, qs, 2, make_causal_mask(qs))
@test all(α[2:end, 1, :, :] .== 0) && sum(α; dims=1) ≈ ones(1, 4, 2, 2)
y4, α4 = dot_product_attention(randn(4, 3, 2, 2), randn(4, 5, 2, 2), randn(6, 5, 2, 2); nheads=2)
@test size(y4) == (6, 3, 2, 2) && size(α4) == (5, 3, 2, 2, 2)
@test sprint(show, mha) == "MultiHeadAttention(6; nheads=3)"
@test sprint(show, cross) == "MultiHeadAttention((6, 4, 5) => (6, 8) => 7; nheads=2, bias=true)"
@test sprint(show, MultiHeadAttention(8; nheads=2, dropout_prob=0.1)) ==
  "MultiHeadAttention(8; nheads=2, dropout_prob=0.1)"
@test size(mha(q)[1]) == (6, 4, 2) && size(cross(q, randn(4, 5, 2), randn(5, 5, 2))[2]) == (5, 4, 2, 2)

# A pre-norm transformer block's pieces: positions added to token embeddings, LayerNorm,
# causal self-attention with a residual, a bias added to the scores, cross-attention.
const embed = Embedding(5 => 6; init=init64)
const positions = Embedding(3 => 6; init=init64)
const norm = LayerNorm(6)

function attention_loss(mha, cross, q, k, v, kc, vc, A, B, bias, ids)
  x = embed(ids) .+ positions(1:size(ids, 1))
  h, _ = mha(norm(x); mask=make_causal_mask(x))
  x = x .+ h
  c, α = cross(q, kc, vc, bias)
  y, β = dot_product_attention(q, k, v; nheads=3, mask=[j <= i + 1 for j in 1:5, i in 1:4])
  sum(abs2, x) + sum(c .* c) + sum(α[1, :, :, :]) + sum(tanh.(y)) + sum(β .^ 2) +
    sum(sin.(batched_mul(A, B))) + sum(batched_transpose(A) ⊠ A[:, :, 1])
end
