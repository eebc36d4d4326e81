# trace: -f recurse f32[2]
forever(n) = forever(n + 1)
recurse(x) = forever(1)
