# Region ops for tests/unit/grad/vmap_test.cc (besides tests/cli/regions/rnn_loop.jl's
# scan): a branch on a traced value (a cond), and Newton's square root of a² + 1 (a while
# loop) scaling a vector.
function branch(x, y)
  if sum(y) > 0
    z = x .* y .+ 1
  else
    z = exp.(x) .- y
  end
  sum(z .* z)
end

function newton(a, v)
  b = a * a + 1  # a root to find whatever a is
  x = b
  while abs(x * x - b) > 1e-12
    x = (x + b / x) / 2
  end
  x .* v
end

# Counts up to 10a²: a loop whose every trip changes its carry, so that an example that ran
# more trips than its own would show it.
function count_up(a, v)
  x = 0.0
  while x < 10 * a * a
    x = x + 1
  end
  x .* v
end
