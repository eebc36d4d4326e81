# trace: -f f f32[2]
f(x) = @time x
