# trace: -f f f32[3]
last_input = nothing
function f(x)
  global last_input = x
  sum(x)
end
