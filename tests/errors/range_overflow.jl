# trace: -f f f32[2]
# A range of 2^64 values: its length is Julia's checked_length OverflowError, not 0.
n = length(-2^63:2^63-1)
f(x) = x
