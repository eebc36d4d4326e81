# The prelude (tracer/prelude/base.jl says what it is): attention, as NNlib 0.9 and Flux 0.14
# write it: batched_mul, dot_product_attention with masks and bias, make_causal_mask and
# MultiHeadAttention. Sequences are (features, length, batch...), Julia's column-major
# form of PyTorch's (batch, length, features).

# Base's Dims{N}: a tuple of N sizes (Flux's attention takes IntOrDims{N}).
const Dims{N} = NTuple{N, Int}

# ---- batched products -------------------------------------------------------------------

# NNlib's batched_mul(A, B): C[:, :, k...] = A[:, :, k...] * B[:, :, k...], one matmul op
# over the batch dims. A matrix, or a third dim of 1 beside N > 1 in the other, is shared
# by every slice. The element types promote, as `*`'s.
function batched_mul(A::AbstractArray, B::AbstractArray)
  ndims(A) >= 2 && ndims(B) >= 2 ||
    throw(ArgumentError("batched_mul takes arrays of at least 2 dims, got sizes $(size(A)) and $(size(B))"))
  size(A, 2) == size(B, 1) || throw(DimensionMismatch(
    "batched_mul: size(A, 2) = $(size(A, 2)) is not size(B, 1) = $(size(B, 1)) (A is $(size(A)), B $(size(B)))"))
  A, B = promote_eltypes(A, B)
  ndims(A) == 2 && ndims(B) == 2 && return reshape(A * B, size(A, 1), size(B, 2), 1)
  ndims(A) == 2 && return batched_shared_left(A, B)
  ndims(B) == 2 && return batched_mul(A, reshape(B, size(B)..., 1))
  ndims(A) == 3 && ndims(B) == 3 && return batched_mul3(A, B)
  size(A)[3:end] == size(B)[3:end] || throw(DimensionMismatch(
    "batched_mul: the batch dims of A $(size(A)) and B $(size(B)) differ"))
  C = batched_mul3(reshape(A, size(A, 1), size(A, 2), :), reshape(B, size(B, 1), size(B, 2), :))
  reshape(C, size(C, 1), size(C, 2), size(A)[3:end]...)
end
⊠(A, B) = batched_mul(A, B)
function batched_mul3(A, B)
  na, nb = size(A, 3), size(B, 3)
  na == nb && return Prim.matmul(A, B)
  na == 1 && return batched_shared_left(reshape(A, size(A, 1), size(A, 2)), B)
  nb == 1 && return Prim.matmul(A, Prim.broadcast_to(B; shape=(size(B, 1), size(B, 2), na)))
  throw(DimensionMismatch("batched_mul: batch sizes $na and $nb differ and neither is 1"))
end
# One matrix times every slice of B is one product with B's slices side by side.
function batched_shared_left(A, B)
  C = A * reshape(B, size(B, 1), :)
  reshape(C, size(A, 1), size(B)[2:end]...)
end
# Arrays of one element type: Float32 with Float64 gives Float64, as Julia's promotion.
function promote_eltypes(A, B)
  eltype(A) == eltype(B) && return (A, B)
  T = typeof(zero(eltype(A)) * zero(eltype(B)))
  (T.(A), T.(B))
end
# batched_transpose and batched_adjoint: each slice transposed (NNlib's are lazy views;
# here a permutedims op).
batched_transpose(A::AbstractArray) = permutedims(A, (2, 1, ntuple(i -> i + 2, ndims(A) - 2)...))
batched_adjoint(A::AbstractArray) = conj(batched_transpose(A))
# batched_vec(A, b): each slice of A times the column of b, (m, k, n) and (k, n) to (m, n).
batched_vec(A::AbstractArray, b::AbstractMatrix) =
  reshape(batched_mul(A, reshape(b, size(b, 1), 1, size(b, 2))), size(A, 1), size(b, 2))

# ---- LinearAlgebra's triangles ------------------------------------------------------------

# triu(M, k=0) keeps M[i, j] where j - i >= k, tril(M, k=0) where j - i <= k; zeros elsewhere.
triu(M::AbstractMatrix, k::Integer=0) =
  ifelse.(reshape(1:size(M, 2), 1, :) .- (1:size(M, 1)) .>= k, M, zero(eltype(M)))
tril(M::AbstractMatrix, k::Integer=0) =
  ifelse.(reshape(1:size(M, 2), 1, :) .- (1:size(M, 1)) .<= k, M, zero(eltype(M)))

# ---- dot-product attention ------------------------------------------------------------------

# NNlib's dot_product_attention(q, k, v, bias=nothing; fdrop=identity, mask=nothing,
# nheads=1): q (qk_dim, q_len, batch...), k (qk_dim, kv_len, batch...), v (v_dim, kv_len,
# batch...), the features split into nheads heads. Returns the output (v_dim, q_len,
# batch...) and the attention weights α (kv_len, q_len, nheads, batch...): per head,
# softmax over the keys of k'q / sqrt(qk_dim ÷ nheads) (+ bias; masked where mask is false),
# dropped by fdrop, times v.
function dot_product_attention(q::AbstractArray, k::AbstractArray, v::AbstractArray, bias=nothing;
                               fdrop=identity, mask=nothing, nheads::Integer=1)
  check_attention_sizes(q, k, v, nheads)
  batch = size(q)[3:end]
  q, k, v = map(x -> reshape(x, size(x, 1) ÷ nheads, nheads, size(x, 2), :), (q, k, v))
  α = dot_product_attention_scores(q, k, bias; fdrop=fdrop, mask=mask)
  # x[d, h, i, b] = Σ_j v[d, h, j, b] α[j, i, h, b], a product per head and batch: by the
  # fused primitive where it computes the same, which never writes α whole (α's ops stay
  # on the tape for a caller that reads it; otherwise dead code).
  x = fuses_attention(q, k, v, bias, fdrop, mask) ? fused_attention(q, k, v, mask) :
    permutedims(batched_mul(permutedims(v, (1, 3, 2, 4)), α), (1, 3, 2, 4))
  reshape(x, :, size(x, 3), batch...), reshape(α, size(α)[1:3]..., batch...)
end
# Whether the attention primitive computes dot_product_attention's output for these
# arguments: no bias, no dropout, and no mask or one Bool (kv_len, q_len) mask for every
# head and batch; q, k, v split into heads (head_dim, nheads, length, batch).
fuses_attention(q, k, v, bias, fdrop, mask) =
  bias === nothing && drops_nothing(fdrop) && eltype(q) <: AbstractFloat &&
  size(q, 1) > 0 && size(v, 1) > 0 && size(k, 3) > 0 &&
  eltype(k) == eltype(q) && eltype(v) == eltype(q) &&
  (mask === nothing || (mask isa AbstractArray && eltype(mask) == Bool &&
                        size(mask) == (size(k, 3), size(q, 3))))
drops_nothing(f) = f === identity
drops_nothing(d::Dropout) = !isactive(d) || (d.p isa Val && static_value(d.p) == 0)
# The primitive on (features, length, heads * batch) slices; q scaled as the scores' q is.
function fused_attention(q, k, v, mask)
  slices(x) = reshape(permutedims(x, (1, 3, 2, 4)), size(x, 1), size(x, 3), :)
  qt = permutedims(q, (1, 3, 2, 4)) ./ sqrt(eltype(q)(size(q, 1)))
  seen = mask === nothing ? trues(size(k, 3), size(q, 3)) : mask
  x, _ = Prim.attention(reshape(qt, size(q, 1), size(q, 3), :), slices(k), slices(v), seen)
  permutedims(reshape(x, size(v, 1), size(q, 3), size(q, 2), :), (1, 3, 2, 4))
end
function check_attention_sizes(q, k, v, nheads)
  ndims(q) >= 2 && ndims(q) == ndims(k) == ndims(v) || throw(ArgumentError(
    "dot_product_attention: q, k and v must have the same number of dims (at least 2), got sizes $(size(q)), $(size(k)) and $(size(v))"))
  size(q)[3:end] == size(k)[3:end] == size(v)[3:end] || throw(ArgumentError(
    "dot_product_attention: the batch dims differ: q $(size(q)), k $(size(k)), v $(size(v))"))
  all(n -> n % nheads == 0, (size(q, 1), size(k, 1), size(v, 1))) || throw(ArgumentError(
    "dot_product_attention: the feature dims of q $(size(q)), k $(size(k)) and v $(size(v)) must be divisible by nheads = $nheads"))
  size(q, 1) == size(k, 1) || throw(ArgumentError(
    "dot_product_attention: q and k must have the same feature dim, got $(size(q)) and $(size(k))"))
  size(k, 2) == size(v, 2) || throw(ArgumentError(
    "dot_product_attention: k and v must have the same length, got $(size(k)) and $(size(v))"))
end

# NNlib's dot_product_attention_scores(q, k, bias=nothing; fdrop, mask) of q and k split
# into heads, (head_dim, nheads, length, batch): α (kv_len, q_len, nheads, batch).
function dot_product_attention_scores(q::AbstractArray, k::AbstractArray, bias=nothing;
                                      fdrop=identity, mask=nothing)
  T = eltype(q)
  kt = permutedims(k, (3, 1, 2, 4))
  qt = permutedims(q, (1, 3, 2, 4)) ./ sqrt(T(size(q, 1)))
  logits = batched_mul(kt, qt)
  logits = bias === nothing ? logits : logits .+ bias
  logits = mask === nothing ? logits : ifelse.(mask, logits, typemin(eltype(logits)))
  fdrop(softmax(logits; dims=1))
end

# make_causal_mask(x; dims=2): the Bool (len, len) matrix m[i, j] = i <= j of len =
# size(x, dims), which lets query j see keys 1..j (as α's (kv_len, q_len) layout has it).
function make_causal_mask(x::AbstractArray; dims::Integer=2)
  len = size(x, dims)
  (1:len) .<= reshape(1:len, 1, len)
end
trues_like(x::AbstractArray, sz=size(x)) = fill(true, sz...)
falses_like(x::AbstractArray, sz=size(x)) = fill(false, sz...)
# Base's trues(dims...) and falses(dims...): Bool arrays (a mask that keeps everything).
trues(dims::Integer...) = fill(true, dims...)
trues(dims::Tuple) = fill(true, dims...)
falses(dims::Integer...) = fill(false, dims...)
falses(dims::Tuple) = fill(false, dims...)

# ---- MultiHeadAttention ---------------------------------------------------------------------

# Flux 0.14's MultiHeadAttention(dims; nheads=8, bias=false, init=glorot_uniform,
# dropout_prob=0.0): dims is one size for all, or in => qk_v => out with in a size or
# (q_in, k_in, v_in) and qk_v a size or (qk, v). Called as mha(q, k, v, bias=nothing;
# mask=nothing), mha(q, kv) or mha(qkv) (self-attention); returns (output, α). The
# dropout's probability is static (Val), so that p = 0 draws no mask in training.
struct MultiHeadAttention
  nheads
  q_proj
  k_proj
  v_proj
  attn_drop
  out_proj
end
function MultiHeadAttention(dims; nheads::Integer=8, bias::Bool=false, init=glorot_uniform,
                            dropout_prob=0.0)
  d = mha_dims(dims)
  d.qk % nheads == 0 || throw(ArgumentError("MultiHeadAttention: qk_dim $(d.qk) is not divisible by nheads = $nheads"))
  d.v % nheads == 0 || throw(ArgumentError("MultiHeadAttention: v_dim $(d.v) is not divisible by nheads = $nheads"))
  MultiHeadAttention(nheads, Dense(d.q_in => d.qk; bias=bias, init=init),
                     Dense(d.k_in => d.qk; bias=bias, init=init), Dense(d.v_in => d.v; bias=bias, init=init),
                     Dropout(Val(dropout_prob)), Dense(d.v => d.out; bias=bias, init=init))
end
mha_dims(dims::Integer) = (q_in=dims, k_in=dims, v_in=dims, qk=dims, v=dims, out=dims)
function mha_dims(dims::Pair)
  dims.second isa Pair || throw(ArgumentError(
    "MultiHeadAttention takes a size or in => qk_v => out, got $(dims)"))
  ins, qkv, out = dims.first, dims.second.first, dims.second.second
  q_in, k_in, v_in = ins isa Integer ? (ins, ins, ins) : ins
  qk, v = qkv isa Integer ? (qkv, qkv) : qkv
  (q_in=q_in, k_in=k_in, v_in=v_in, qk=qk, v=v, out=out)
end
(mha::MultiHeadAttention)(qkv; kws...) = mha(qkv, qkv, qkv; kws...)
(mha::MultiHeadAttention)(q, kv; kws...) = mha(q, kv, kv; kws...)
function (mha::MultiHeadAttention)(q_in, k_in, v_in, bias=nothing; mask=nothing)
  q, k, v = mha.q_proj(q_in), mha.k_proj(k_in), mha.v_proj(v_in)
  x, α = dot_product_attention(q, k, v, bias; nheads=mha.nheads, mask=mask, fdrop=mha.attn_drop)
  mha.out_proj(x), α
end
sublayers(mha::MultiHeadAttention) = (mha.q_proj, mha.k_proj, mha.v_proj, mha.attn_drop, mha.out_proj)
function show(io::IO, mha::MultiHeadAttention)
  qk, q_in = size(mha.q_proj.weight)
  k_in, (v, v_in), out = size(mha.k_proj.weight, 2), size(mha.v_proj.weight), size(mha.out_proj.weight, 1)
  print(io, "MultiHeadAttention(")
  if q_in == k_in == v_in == qk == v == out
    print(io, q_in)
  else
    print(io, q_in == k_in == v_in ? q_in : (q_in, k_in, v_in), " => ", qk == v ? qk : (qk, v), " => ", out)
  end
  print(io, "; nheads=", mha.nheads)
  mha.q_proj.bias === false || print(io, ", bias=true")
  static_value(mha.attn_drop.p) == 0 || print(io, ", dropout_prob=", static_value(mha.attn_drop.p))
  print(io, ")")
end
