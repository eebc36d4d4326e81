# Follows FluxML/Flux.jl src/layers/recurrent.jl (Flux 0.14) and its docstrings: Recur
# over a plain function (`accum(h, x) = (h + x, x)`), RNN, LSTM, GRU and GRUv3 stepped over
# a sequence one column batch at a time, and over a whole (features, batch, time) array,
# Flux.reset! between sequences, a Chain of a recurrent layer and Dense, and a sequence
# loss summed over zip(xs, ys).
# check: -f seq_loss models xs ys

using Flux
using Flux: reset!
using Random

accum(h, x) = (h + x, x)

f64 = (; init=Base.randn, initb=zeros, init_state=zeros)

function build_models()
  rnn = Flux.Recur(accum, 0.0)
  r = RNN(3 => 5; f64...)
  l = LSTM(3 => 5; f64...)
  g = GRU(3 => 5; f64...)
  g3 = GRUv3(3 => 5; f64...)
  m = Chain(LSTM(3 => 4; f64...), Dense(4 => 2; init=Base.randn))
  (; rnn, r, l, g, g3, m)
end

function seq_loss(models, xs, ys)
  (; rnn, r, l, g, g3, m) = models
  # Recur with a function: the state accumulates the inputs, the output is the input.
  total = rnn(xs[1][1]) + rnn(xs[2][1])
  total += rnn.state
  # One sequence through each layer, each step a batch of columns.
  for layer in (r, l, g, g3)
    reset!(layer)
    hs = [layer(x) for x in xs]
    total += sum(abs2, hs[end]) + sum(sum.(hs))
  end
  # The whole sequence as one array: the same steps, stacked along time.
  reset!(l)
  total += sum(abs2, l(cat(xs...; dims=3)))
  # The state carries over from the first sequence; reset! starts a second one afresh.
  reset!(m)
  total += sum(Flux.Losses.mse(m(x), y) for (x, y) in zip(xs, ys))
  Flux.reset!(m)
  total += Flux.Losses.mse(m(xs[1]), ys[1])
  total
end

Random.seed!(6)
models = build_models()
xs = [randn(3, 2) for _ in 1:4]
ys = [randn(2, 2) for _ in 1:4]
# Destructuring by field name, not by position.
(; g, rnn) = models
@assert g === models.g && rnn === models.rnn
