# The classic tracer cases in one program.
#
#   ytape trace samples/basics.jl -f main x -o basics.json --save-inputs basics.safetensors
#   ytape run basics.json --inputs basics.safetensors

# Printing a splatted tuple: one `print` op with every value.
foo(xs) = print(xs...)

# A non-primitive function called by another: inlined down to primitives.
square(x) = x .* x
sumsq(x) = sum(square(x))

# A closure over a local, and varargs.
function scaled_sum(x, factors...)
  scale = prod_of(factors...)
  f = y -> y .* scale
  sum(f(x))
end
prod_of(xs...) = foldl(*, xs; init=1)

# A struct built and read inside the traced function.
struct Affine
  a
  b
end
(m::Affine)(x) = m.a .* x .+ m.b

# A loop with a static trip count, unrolled.
function repeat_tanh(x, n)
  for _ in 1:n
    x = tanh.(x)
  end
  x
end

# A data-dependent branch: taken by the example values and guarded.
clip(x) = sum(x) > 0 ? x : -x

function main(x)
  foo((x, sum(x)))
  m = Affine(2f0, 1f0)
  y = repeat_tanh(m(x), 3)
  (sumsq(y) + scaled_sum(x, 2, 3), clip(y))
end

x = Float32[0.5, -1.0, 2.0]
