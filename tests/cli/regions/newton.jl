# Newton's square root of a from x0 (a while loop on a traced condition: one while_loop op,
# as many trips as each input needs), then a branch on the root (one cond op).
function root(a, x0)
  x = x0
  while abs(x * x - a) > 1e-12
    x = (x + a / x) / 2
  end
  if x > 2
    y = x * x
  else
    y = 3 * x
  end
  y
end
