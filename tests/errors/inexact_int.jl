# trace: -f f f32[2]
# A float that no Int64 holds exactly converts to none: Julia's InexactError.
n = Int(1e30)
f(x) = x
