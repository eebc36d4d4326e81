# trace: -f f f32[2]
# 2^63 wraps around to typemin(Int): a denominator whose sign cannot move to the
# numerator, Julia's OverflowError (not a negative denominator).
r = -1 // 2^63
f(x) = x
