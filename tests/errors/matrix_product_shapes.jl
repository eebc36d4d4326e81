# trace: -f f f32[3,2] f32[3]
f(W, x) = W * x
