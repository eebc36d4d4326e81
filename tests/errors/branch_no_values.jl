# trace: --loops unroll -f f f64[2]
# Unrolled (no cond), without example values (a type as the argument) the branch
# cannot be chosen.
f(x) = sum(x) > 0 ? sum(x) : -sum(x)
