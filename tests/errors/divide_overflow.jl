# trace: -f f f32[2]
# 2^63 wraps around to typemin(Int), whose quotient by -1 no Int64 holds: Julia's DivideError.
q = (2^63) ÷ -1
f(x) = x
