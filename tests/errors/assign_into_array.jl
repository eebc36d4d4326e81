# trace: -f f f32[3]
function f(x)
  x[1] = 0
  x
end
