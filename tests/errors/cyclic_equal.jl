# trace: -f f f32[]
# == of a vector that holds itself: Julia's overflows its stack; here an error.
a = Any[1]; push!(a, a)
a == a
f(x) = x
