# trace: -f f f32[]
# A type wrapped in Val{...} 10^5 times: more than the 1000 levels types nest.
T = Int; for i in 1:100000; global T = Val{T}; end
f(x) = x
