# trace: --loops unroll -f f x
# run: guard_failure.json
# Traced with x, whose sum is negative; the run's inputs have a positive sum, so the
# guard recorded at the branch (--loops unroll: no cond) stops the run.
x = [1.0, -2.0]
magnitude(s) = s > 0 ? s : -s
f(x) = magnitude(sum(x))
