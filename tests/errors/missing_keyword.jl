# trace: -f f f32[2]
scaled(x; factor) = factor .* x
f(x) = scaled(x)
