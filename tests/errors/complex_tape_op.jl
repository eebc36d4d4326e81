# trace: -f f z
# A complex number reaches a function of real numbers only: the message says what to do.
z = 1.0 + 2.0im
f(z) = tanh(z) * 2
