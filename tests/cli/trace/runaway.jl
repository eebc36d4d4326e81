# Programs that never end on their own: both are stopped with a message.
forever(n) = forever(n + 1)
recurse(x) = forever(1)
function unrolled(x)
  for i in 1:1000
    x = sin.(x)
  end
  x
end
