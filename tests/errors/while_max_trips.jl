# trace: -f root a x0
# run: while_max_trips.json
# Newton's square root, its loop bounded by @max_trips 5; the run's x0 needs about 35
# trips, and the loop stops with its source line rather than give a wrong root.
a = 2.0
x0 = 1.5
function root(a, x0)
  x = x0
  @max_trips 5 while abs(x * x - a) > 1e-12
    x = (x + a / x) / 2
  end
  x
end
