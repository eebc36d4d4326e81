# Follows FluxML/Optimisers.jl test/rules.jl: every rule, at its defaults and in a few
# chains, lowers sum(abs2, x + x') from a fixed start, with update! at top level and with
# update in a traced function. Zygote's gradient is written out: 4(x + x'). The check
# differentiates the loss after three steps of every rule with respect to the start,
# through the rules' updates (Adam's moments and β^t, ClipNorm's norm).
# check: -f unrolled_loss start

using Optimisers

RULES = (Descent(), Adam(), Momentum(), Nesterov(), AdamW(),
         OptimiserChain(WeightDecay(), Adam(0.001)), OptimiserChain(ClipNorm(1), Adam(0.001)),
         OptimiserChain(ClipNorm(1, 1), Momentum()), AdamW(0.1, (0.9, 0.999), 0.01))

loss(x) = sum(abs2.(x + x'))
grad(x) = 4 .* (x + x')

start = reshape(collect(1.0:9.0), 3, 3) ./ 10 .- 0.45

for rule in RULES
  m = copy(start)
  s = Optimisers.setup(rule, m)
  for _ in 1:100
    Optimisers.update!(s, m, grad(m))
  end
  @assert loss(m) < loss(start) "$rule did not lower the loss"
end

function unrolled_loss(x0)
  total = 0.0
  for rule in RULES
    x = x0
    s = Optimisers.setup(rule, x)
    for _ in 1:3
      s, x = Optimisers.update(s, x, grad(x))
    end
    total += loss(x)
  end
  total
end
