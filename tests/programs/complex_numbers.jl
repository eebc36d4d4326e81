# Complex numbers built of traced reals: the loss makes complex numbers of its real inputs
# (scalars and the elements of vectors), multiplies, divides, exponentiates and takes
# powers of them, and reduces to a real number (abs2, abs, real, angle), so its gradient is
# that of the real ops it is made of; gradcheck compares it with finite differences. The
# top level runs Flux's published complex cases (losses.jl's mse, Dropout's identity).
# check: -f loss a b re ims

using Test
using Flux

@test mse(0 + 0im, 1 + 1im) == 2
x = [1.0+0im, 2.0+1im, 3.0+3im]
@test x == Dropout(0.1)(x)
@test zero(x) == Flux.dropout(x, 1.0)
@test abs2.(x) == [1.0, 5.0, 18.0]

a = 0.7
b = -1.3
re = [0.5, -1.0, 2.0]
ims = [1.5, 0.25, -0.75]

function loss(a, b, re, ims)
  z = complex(a, b)
  w = z * (2.0 - 1.0im) / (1 + 0.5im) + exp(z / 4)
  zs = [complex(r, i) for (r, i) in zip(re, ims)]
  ys = zs .* [1.0, 2.0, 3.0] .- z
  vs = complex.(re, ims) ./ (2 + 1im)
  abs2(w) + abs(z^3) + sum(abs2.(ys)) + real(sum(zs .* conj.(vs))) + angle(w) + imag(sqrt(z))
end
