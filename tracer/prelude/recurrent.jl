# The prelude (tracer/prelude/base.jl says what it is): Flux 0.14's recurrent layers.

# ---- recurrent layers (Flux 0.14's: a cell, made stateful by Recur) ---------------------------

# Recur(cell): m(x) runs h, y = cell(h, x) and keeps h as its state; reset!(m) sets the
# state back to the cell's state0 (for a whole model too). The state is a field of a
# mutable struct: it changes step by step while tracing, and a model that existed before
# the trace gets it back when the trace ends.
mutable struct Recur
  cell
  state
end
Recur(cell) = Recur(cell, cell.state0)
function (m::Recur)(x)
  # A sequence (features, batch, time): each step in turn, outputs stacked along time.
  x isa AbstractArray && ndims(x) == 3 && return recur_sequence(m, x)
  m.state, y = m.cell(m.state, x)
  y
end
# The state is given the batch's size first (a cell's state0 has one column, which the
# first step would broadcast), so that every step has one type: the steps are one scan op
# when traced (docs/regions.md), the outputs stacked in place.
function recur_sequence(m, x)
  m.state = batched_state(m.state, size(x, 2))
  stack(t -> m(x[:, :, t]), 1:size(x, 3))
end
batched_state(s::AbstractMatrix, b) = size(s, 2) == 1 && b != 1 ? repeat(s, 1, b) : s
batched_state(s::Tuple, b) = map(z -> batched_state(z, b), s)
batched_state(s, b) = s
sublayers(r::Recur) = (r.cell,)
function reset!(m::Recur)
  m.state = m.cell.state0
  nothing
end
function reset!(m)
  foreach(reset!, sublayers(m))
  nothing
end

# Rows (n-1)h+1 : nh, gate n of a stacked weight or its product.
gate(x::AbstractVector, h, n) = x[(n - 1) * h + 1:n * h]
gate(x::AbstractMatrix, h, n) = x[(n - 1) * h + 1:n * h, :]
reshape_cell_output(h, x) = reshape(h, :, size(x)[2:end]...)

# RNN(in => out, σ=tanh): h = σ.(Wi x .+ Wh h .+ b).
struct RNNCell
  σ
  Wi
  Wh
  b
  state0
end
RNNCell(p::Pair, σ=tanh; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  RNNCell(σ, init(p.second, p.first), init(p.second, p.second), initb(p.second),
          init_state(p.second, 1))
# Inputs of another element type are converted to the weights', as Flux 0.14's cells do.
function (m::RNNCell)(h, x)
  x = match_eltype(m.Wi, x)
  h = m.σ.(m.Wi * x .+ m.Wh * h .+ m.b)
  h, reshape_cell_output(h, x)
end
RNN(a...; ka...) = Recur(RNNCell(a...; ka...))

# LSTM(in => out): gates input, forget, cell, output stacked in Wi (4out, in), Wh (4out,
# out) and b, whose forget gate starts at 1; the state is (h, c).
struct LSTMCell
  Wi
  Wh
  b
  state0
end
function LSTMCell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32)
  out = p.second
  b = initb(4 * out)
  b[out + 1:2 * out] .= 1
  LSTMCell(init(4 * out, p.first), init(4 * out, out), b, (init_state(out, 1), init_state(out, 1)))
end
function (m::LSTMCell)((h, c), x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  g = m.Wi * x .+ m.Wh * h .+ m.b
  c′ = sigmoid.(gate(g, o, 2)) .* c .+ sigmoid.(gate(g, o, 1)) .* tanh.(gate(g, o, 3))
  h′ = sigmoid.(gate(g, o, 4)) .* tanh.(c′)
  (h′, c′), reshape_cell_output(h′, x)
end
LSTM(a...; ka...) = Recur(LSTMCell(a...; ka...))

# GRU(in => out): reset, update and candidate gates stacked in Wi (3out, in), Wh, b.
struct GRUCell
  Wi
  Wh
  b
  state0
end
GRUCell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  GRUCell(init(3 * p.second, p.first), init(3 * p.second, p.second), initb(3 * p.second),
          init_state(p.second, 1))
function (m::GRUCell)(h, x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  gx, gh = m.Wi * x, m.Wh * h
  r = sigmoid.(gate(gx, o, 1) .+ gate(gh, o, 1) .+ gate(m.b, o, 1))
  z = sigmoid.(gate(gx, o, 2) .+ gate(gh, o, 2) .+ gate(m.b, o, 2))
  h̃ = tanh.(gate(gx, o, 3) .+ r .* gate(gh, o, 3) .+ gate(m.b, o, 3))
  h′ = (1 .- z) .* h̃ .+ z .* h
  h′, reshape_cell_output(h′, x)
end
GRU(a...; ka...) = Recur(GRUCell(a...; ka...))

# GRUv3(in => out): GRU as in v3 of the paper (Flux's GRUv3): the reset gate applies to h
# before its own product, Wh_h̃ (out, out); Wi (3out, in), Wh (2out, out), b (3out).
struct GRUv3Cell
  Wi
  Wh
  b
  Wh_h̃
  state0
end
GRUv3Cell(p::Pair; init=glorot_uniform, initb=zeros32, init_state=zeros32) =
  GRUv3Cell(init(3 * p.second, p.first), init(2 * p.second, p.second), initb(3 * p.second),
            init(p.second, p.second), init_state(p.second, 1))
function (m::GRUv3Cell)(h, x)
  x = match_eltype(m.Wi, x)
  o = size(h, 1)
  gx, gh = multigate(m.Wi * x, o, Val(3)), multigate(m.Wh * h, o, Val(2))
  b = multigate(m.b, o, Val(3))
  r = sigmoid.(gx[1] .+ gh[1] .+ b[1])
  z = sigmoid.(gx[2] .+ gh[2] .+ b[2])
  h̃ = tanh.(gx[3] .+ m.Wh_h̃ * (r .* h) .+ b[3])
  h′ = (1 .- z) .* h̃ .+ z .* h
  h′, reshape_cell_output(h′, x)
end
GRUv3(a...; ka...) = Recur(GRUv3Cell(a...; ka...))

# Flux's helpers: the N gates of c rows each of x; the slices of x along its last dim.
multigate(x, c, ::Val{N}) where N = ntuple(n -> gate(x, c, n), N)
eachlastdim(x) = [selectdim(x, ndims(x), i) for i in 1:size(x, ndims(x))]
# Its cotangent from those of the slices, stacked along x's last dim; Zygote's zero
# tangents (ZeroTangent(), NoTangent()) stand for slices of zeros.
function ∇eachlastdim(dys, x)
  n = ndims(x)
  rest = size(x)[1:n-1]
  slice(d) = reshape(d isa AbstractZero ? zeros(eltype(x), rest) : d, rest..., 1)
  cat([slice(d) for d in dys]...; dims=n)
end
# Base's: the slice of x at index i of dim d; the slices along dims (one dim).
selectdim(x, d::Integer, i) = x[ntuple(k -> k == d ? i : (:), ndims(x))...]
eachslice(x; dims) = slices_along(x, dims)
