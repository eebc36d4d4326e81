# trace: -f f f32[3]
f(x) = x[2:4]
