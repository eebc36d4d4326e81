# trace: -f f f32[2]
function f(x)
  println("x is $x)
  x
end
