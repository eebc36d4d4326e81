# trace: -f f f32[]
# A field default that makes the struct again: calls nest until the depth limit.
Base.@kwdef struct T; a = T().a; end; T()
f(x) = x
