# trace: -f f f32[3]
f(x) = x ? 1 : 0
