# trace: -f f f32[2] --max-steps 1000
# A loop that never ends: the step limit (10^8 by default) stops it and names the loop.
function f(x)
  n = 0
  while true
    n += 1
  end
  x
end
