# trace: -f f f32[2,x]
f(x) = sum(x)
