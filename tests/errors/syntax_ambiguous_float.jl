# trace: -f f f32[2]
f(x) = 1.+x
